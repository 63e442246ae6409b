/*-------------------------------------------------------------------------
 *
 * heap_reader.c
 *	  The columnar heap reader (heap_reader.h): where a GpuJoin input is a
 *	  Seq Scan or Parallel Seq Scan of a heap table, the node reads the
 *	  table itself instead of pulling each row through the child plan.
 *
 * Pulling rows costs, per row, an ExecProcNode call, a slot store, and a
 * slot_getsomeattrs deform of every attribute up to the last one the join
 * needs into the slot, before the host buffer copies the values out again
 * (about 13M rows/s per process).  The reader instead takes a page at a
 * time through the heap AM's own page-at-a-time scan, which is what a seq
 * scan does underneath:
 *
 *	- the scan descriptor is the child's own (table_beginscan with the
 *	  query's snapshot, as SeqNext does, or the parallel one the child set up
 *	  in shared memory), so the relation's predicate lock of a serializable
 *	  transaction, the scan statistics, synchronized scans and the bulk-read
 *	  buffer strategy are the seq scan's;
 *	- blocks come in the seq scan's order: from the synchronized start block
 *	  round to it again, or from PostgreSQL's parallel block allocator
 *	  (table_block_parallelscan_nextpage), so the leader and the workers of a
 *	  parallel plan each read a share of the pages, as parallel seq scans do;
 *	- heapgetpage pins the page, prunes it, and under a share lock decides
 *	  which tuples the snapshot sees (all of them on an all-visible page,
 *	  HeapTupleSatisfiesVisibility otherwise) and checks serializable
 *	  conflicts; it checks for interrupts once a page;
 *	- the visible tuples are deformed only up to the last attribute the join
 *	  needs, at fixed offsets when a tuple has no NULLs and the attributes
 *	  before are fixed-width, else by walking the attributes as
 *	  slot_deform_heap_tuple does; attributes the tuple is too short for
 *	  (added by ALTER TABLE later) take their missing value; nothing is
 *	  detoasted here (the buffer copies the datum as a seq scan would return
 *	  it);
 *	- without scan quals, an all-visible page's visible tuples are decoded
 *	  at once by the page decoder (kernels/shared/gj_page_decode.h, the
 *	  code a device will run on raw pages), after the next page was read
 *	  and its tuples asked into the cache, under a pin of the reader's own;
 *	  the tuples it flags, and every tuple of a scan with quals
 *	  (or gpujoin.page_decoder off), are deformed here one at a time;
 *	- the scan's own quals are evaluated on the child's scan slot, as
 *	  ExecScan would, and only the tuples that pass are deformed;
 *	- a page's rows go to the host buffer column by column
 *	  (gj_host_buffer_append_columns).
 *
 * The child stays in the plan tree: its instrumentation counts the rows and
 * the filtered rows the reader produced, so EXPLAIN ANALYZE shows the scan
 * as usual, and pg_stat_user_tables counts the scan and the tuples read.
 *
 * An Append of such scans (a partitioned table, or UNION ALL of tables) is
 * read the same way, a reader for each of its subplans in turn: every
 * process reads every subplan, taking its blocks from that scan's own
 * parallel block allocator under a Gather, so each block is read once, as
 * by the scans themselves.  The Append's own order of subplans (and a
 * Parallel Append's sharing of them among processes) does not matter to a
 * join that drains the whole input before it joins.  Only where no subplan
 * runs in one process alone: a Parallel Append whose subplans are all
 * Parallel Seq Scans (a non-partial subplan there runs in a single
 * process), and no pruning at run time (the subplans left after the
 * pruning at the start are the ones read).
 *
 * The child plan keeps its input where the reader cannot stand in for it
 * exactly: gpujoin.columnar_input off, a scan that is not a plain Seq Scan
 * of a heap table, a projection other than plain columns for what the join
 * reads, an EvalPlanQual recheck, or a snapshot that is not an MVCC one
 * (no page-at-a-time visibility).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/syncscan.h"
#include "access/tableam.h"
#include "access/tupdesc_details.h"
#include "catalog/pg_am_d.h"
#include "executor/execPartition.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "gpujoin.h"
#include "host_chunking/heap_reader.h"
#include "kernels/shared/gj_page_decode.h"

/*
 * The page decoder re-derives PostgreSQL's page and tuple layout (it must
 * compile without PostgreSQL's headers, for the device): here is where it
 * is checked against them.  ItemIdData's bit fields cannot be checked at
 * compile time; page_decoder_layout_ok does that once at run time.
 */
StaticAssertDecl(SizeOfPageHeaderData == GJ_PAGE_HEADER_SIZE, "page header size");
StaticAssertDecl(offsetof(PageHeaderData, pd_lower) == GJ_PAGE_PD_LOWER_OFF, "pd_lower");
StaticAssertDecl(offsetof(PageHeaderData, pd_flags) == GJ_PAGE_PD_FLAGS_OFF, "pd_flags");
StaticAssertDecl(offsetof(PageHeaderData, pd_upper) == GJ_PAGE_PD_UPPER_OFF, "pd_upper");
StaticAssertDecl(sizeof(((PageHeaderData *) 0)->pd_lower) == 2, "pd_lower width");
StaticAssertDecl(sizeof(((PageHeaderData *) 0)->pd_flags) == 2, "pd_flags width");
StaticAssertDecl(PD_ALL_VISIBLE == GJ_PAGE_ALL_VISIBLE, "PD_ALL_VISIBLE");
StaticAssertDecl(sizeof(ItemIdData) == GJ_ITEMID_SIZE, "ItemIdData size");
StaticAssertDecl(LP_NORMAL == GJ_LP_NORMAL && LP_REDIRECT == GJ_LP_REDIRECT &&
				 LP_DEAD == GJ_LP_DEAD, "line pointer flags");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_infomask2) == GJ_TUPLE_INFOMASK2_OFF,
				 "t_infomask2");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_infomask) == GJ_TUPLE_INFOMASK_OFF,
				 "t_infomask");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_hoff) == GJ_TUPLE_HOFF_OFF, "t_hoff");
StaticAssertDecl(offsetof(HeapTupleHeaderData, t_bits) == GJ_TUPLE_BITS_OFF &&
				 SizeofHeapTupleHeader == GJ_TUPLE_BITS_OFF, "t_bits");
StaticAssertDecl(HEAP_NATTS_MASK == GJ_HEAP_NATTS_MASK, "HEAP_NATTS_MASK");
StaticAssertDecl(HEAP_HASNULL == GJ_HEAP_HASNULL, "HEAP_HASNULL");
StaticAssertDecl(VARTAG_ONDISK == GJ_VARTAG_ONDISK, "VARTAG_ONDISK");
StaticAssertDecl(VARHDRSZ_EXTERNAL + sizeof(varatt_external) == GJ_TOAST_POINTER_SIZE,
				 "on-disk TOAST pointer size");
StaticAssertDecl(sizeof(OffsetNumber) == sizeof(uint16_t) &&
				 MaxHeapTuplesPerPage <= PG_UINT16_MAX, "line pointer offsets");
StaticAssertDecl(sizeof(bool) == 1, "the decoder's null flags are bools");

/*
 * Builds where the decoder reads exactly what PostgreSQL does: Datums of 8
 * bytes, little-endian varlena headers, tuples maximally aligned to 8.
 */
#if SIZEOF_DATUM == 8 && !defined(WORDS_BIGENDIAN) && MAXIMUM_ALIGNOF == GJ_MAXALIGN
#define PAGE_DECODER_BUILD	true
#else
#define PAGE_DECODER_BUILD	false
#endif

/* How to fetch one needed attribute at a fixed offset. */
typedef struct GjReadAttr
{
	int			heap_attno;		/* attribute of the table */
	int			child_attno;	/* where the child's output has it */
	int			fixed_off;		/* offset in a tuple without NULLs, or -1 */
} GjReadAttr;

/*
 * A page's rows as the reader puts them together, column by column, and the
 * page's scratch.  The readers of an Append's subplans read one after
 * another, into the Append's columns, and share one: a table of a thousand
 * partitions needs no thousand copies.
 */
typedef struct GjPageRows
{
	Datum	  **values;			/* indexed by child attno - 1 */
	bool	  **isnull;
	/* the data of a page's tuples on the fast path (no NULLs, long enough) */
	char	   *data[MaxHeapTuplesPerPage];
	/* the page decoder's flags and data offsets of a page's tuples */
	uint8		page_host[MaxHeapTuplesPerPage];
	uint32		page_data_offs[MaxHeapTuplesPerPage];
	/* the visible tuples of the pending page (GjHeapReader.pending_buf) */
	OffsetNumber pending_lineoffs[MaxHeapTuplesPerPage];
} GjPageRows;

struct GjHeapReader
{
	/* an Append of Seq Scans: no scan of its own, a reader per subplan */
	AppendState *append_state;
	int			nparts;
	GjHeapReader **parts;

	SeqScanState *scan_state;
	Relation	rel;
	TupleDesc	tupdesc;		/* the table's */
	int			nattrs;
	GjReadAttr *attrs;			/* sorted by heap_attno */
	int			max_heap_attno;
	bool		all_fixed;		/* every attrs[].fixed_off >= 0 */
	int			max_child_attno;

	GjPageRows *rows;			/* shared by an Append's readers */
	/* one tuple deformed up to max_heap_attno, for tuples off the fast path */
	Datum	   *tuple_values;
	bool	   *tuple_isnull;

	/* the page decoder, when use_page_decoder */
	bool		use_page_decoder;
	GjPageSpec	page_spec;
	GjPageOutput page_out;

	/*
	 * The all-visible page read last, decoded only after the next page was
	 * read and its tuples asked into the cache: held by a pin of our own
	 * (heapgetpage drops the scan's), with its visible tuples' offsets.
	 */
	Buffer		pending_buf;
	int			pending_ntuples;	/* at rows->pending_lineoffs */

	/* where the scan is */
	bool		started;		/* the first block was taken */
	bool		finished;
	BlockNumber next_block;		/* serial scans: the next block to read */
	HeapTupleData tuple;		/* the tuple the scan's quals look at */

	GjHeapReaderCounters counters;
};

/*
 * The attribute of the table behind column attno of the child's output, or
 * 0 when it is not a plain column: the child's target list when it
 * projects, else the scan tuple's own attribute.
 */
static int
child_column_heap_attno(SeqScanState *scan_state, int attno)
{
	Plan	   *plan = scan_state->ss.ps.plan;
	TargetEntry *tle;
	Var		   *var;

	if (scan_state->ss.ps.ps_ProjInfo == NULL)
		return attno;
	if (attno > list_length(plan->targetlist))
		return 0;
	tle = list_nth_node(TargetEntry, plan->targetlist, attno - 1);
	if (!IsA(tle->expr, Var))
		return 0;
	var = (Var *) tle->expr;
	if (var->varno != ((Scan *) plan)->scanrelid || var->varattno <= 0 ||
		var->varlevelsup != 0)
		return 0;
	return var->varattno;
}

static int
read_attr_cmp(const void *a, const void *b)
{
	return ((const GjReadAttr *) a)->heap_attno - ((const GjReadAttr *) b)->heap_attno;
}

/*
 * Offsets of the attributes in a tuple without NULLs, as far as every
 * attribute before is fixed-width (the same offsets attcacheoff caches).
 */
static void
compute_fixed_offsets(GjHeapReader *reader)
{
	int			off = 0;
	int			attno;
	int			k = 0;

	reader->all_fixed = true;
	for (attno = 1; attno <= reader->max_heap_attno; attno++)
	{
		Form_pg_attribute att = TupleDescAttr(reader->tupdesc, attno - 1);
		bool		fixed = off >= 0 && att->attlen > 0;

		if (fixed)
			off = att_align_nominal(off, att->attalign);
		for (; k < reader->nattrs && reader->attrs[k].heap_attno == attno; k++)
		{
			reader->attrs[k].fixed_off = fixed ? off : -1;
			if (!fixed)
				reader->all_fixed = false;
		}
		off = fixed ? off + att->attlen : -1;
	}
}

/*
 * Whether ItemIdData's bit fields are where the page decoder reads them
 * (lp_off in bits 0-14, lp_flags in 15-16, lp_len in 17-31): once a process.
 */
static bool
page_decoder_layout_ok(void)
{
	static int	known = -1;

	if (known < 0)
	{
		ItemIdData	lp;
		uint32		raw;

		memset(&lp, 0, sizeof(lp));
		ItemIdSetNormal(&lp, 0x1238, 0x5679);
		memcpy(&raw, &lp, sizeof(raw));
		known = (raw & 0x7FFF) == 0x1238 && ((raw >> 15) & 0x03) == LP_NORMAL &&
			(raw >> 17) == 0x5679;
	}
	return known == 1;
}

/*
 * The page decoder's description of the attributes the reader needs (see
 * gj_page_decode.h), or false when it cannot describe them: then every
 * tuple is deformed here.  Called after compute_fixed_offsets.
 */
static bool
page_decoder_init(GjHeapReader *reader)
{
	TupleDesc	tupdesc = reader->tupdesc;
	GjPageAttr *attrs;
	GjPageColumn *cols;
	int			attno;
	int			k;

	if (!PAGE_DECODER_BUILD || !page_decoder_layout_ok() || reader->nattrs == 0)
		return false;

	attrs = palloc0(sizeof(GjPageAttr) * reader->max_heap_attno);
	for (attno = 1; attno <= reader->max_heap_attno; attno++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, attno - 1);

		attrs[attno - 1].attlen = att->attlen;
		/* 'c', 's', 'i', 'd' in bytes: where att_align_nominal puts offset 1 */
		attrs[attno - 1].align = att_align_nominal(1, att->attalign);
		if (att->attlen == 0 || att->attlen < -2)
			return false;
	}

	cols = palloc0(sizeof(GjPageColumn) * reader->nattrs);
	reader->page_out.values = palloc(sizeof(uint64_t *) * reader->nattrs);
	reader->page_out.isnull = palloc(sizeof(bool *) * reader->nattrs);
	reader->page_spec.fixed_end = 0;
	for (k = 0; k < reader->nattrs; k++)
	{
		const GjReadAttr *ra = &reader->attrs[k];
		Form_pg_attribute att = TupleDescAttr(tupdesc, ra->heap_attno - 1);
		GjPageColumn *col = &cols[k];
		bool		missing_isnull;
		Datum		missing;

		col->attno = ra->heap_attno;
		col->attlen = att->attlen;
		col->byval = att->attbyval;
		col->fixed_off = ra->fixed_off;
		if (col->byval && col->attlen != 1 && col->attlen != 2 && col->attlen != 4 &&
			col->attlen != 8)
			return false;
		if (ra->fixed_off >= 0)
			reader->page_spec.fixed_end = Max(reader->page_spec.fixed_end,
											  (uint32) (ra->fixed_off + att->attlen));

		/* what getmissingattr gives a tuple written before the column */
		missing = getmissingattr(tupdesc, ra->heap_attno, &missing_isnull);
		col->missing_isnull = missing_isnull;
		col->missing_value = missing_isnull || !col->byval ? 0 : (uint64_t) missing;
		col->missing_host = !missing_isnull && !col->byval;

		/* the decoder writes straight into the page's columns */
		reader->page_out.values[k] = (uint64_t *) reader->rows->values[ra->child_attno - 1];
		reader->page_out.isnull[k] = reader->rows->isnull[ra->child_attno - 1];
	}
	reader->page_out.host = reader->rows->page_host;
	reader->page_out.lineoffs = NULL;	/* the decoder reads a list */
	reader->page_out.data_offs = reader->rows->page_data_offs;
	reader->page_spec.page_size = BLCKSZ;
	reader->page_spec.walk_natts = reader->max_heap_attno;
	reader->page_spec.attrs = attrs;
	reader->page_spec.ncols = reader->nattrs;
	reader->page_spec.cols = cols;
	reader->page_spec.all_fixed = reader->all_fixed;
	return true;
}

/*
 * A Seq Scan's reader when it can stand in for the scan exactly (see the
 * header comment), else NULL.  buf says which columns of the scan's output
 * the join stores; rows, where not NULL, are the page rows of the Append's
 * reader made before (the same columns).  Called in cxt, the node's memory.
 */
static GjHeapReader *
seqscan_reader_create(SeqScanState *scan_state, const HostSideBuffer *buf, GjPageRows *rows)
{
	Relation	rel;
	GjHeapReader *reader;
	int			i;

	rel = scan_state->ss.ss_currentRelation;
	if (rel == NULL || rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		return NULL;

	reader = palloc0(sizeof(GjHeapReader));
	reader->scan_state = scan_state;
	reader->rel = rel;
	reader->tupdesc = RelationGetDescr(rel);
	reader->attrs = palloc0(sizeof(GjReadAttr) * (buf->ncols + buf->nkeys + 1));
	for (i = 0; i < buf->ncols + buf->nkeys; i++)
	{
		int			child_attno = i < buf->ncols ? buf->cols[i].attno :
			buf->keys[i - buf->ncols].attno;
		int			heap_attno = child_column_heap_attno(scan_state, child_attno);
		int			k;
		bool		seen = false;

		if (heap_attno <= 0 || heap_attno > reader->tupdesc->natts)
			return NULL;
		for (k = 0; k < reader->nattrs; k++)
			seen |= reader->attrs[k].child_attno == child_attno;
		if (seen)
			continue;
		reader->attrs[reader->nattrs].heap_attno = heap_attno;
		reader->attrs[reader->nattrs].child_attno = child_attno;
		reader->nattrs++;
		reader->max_heap_attno = Max(reader->max_heap_attno, heap_attno);
		reader->max_child_attno = Max(reader->max_child_attno, child_attno);
	}
	qsort(reader->attrs, reader->nattrs, sizeof(GjReadAttr), read_attr_cmp);
	compute_fixed_offsets(reader);

	if (rows == NULL)
	{
		rows = palloc(sizeof(GjPageRows));
		rows->values = palloc0(sizeof(Datum *) * Max(reader->max_child_attno, 1));
		rows->isnull = palloc0(sizeof(bool *) * Max(reader->max_child_attno, 1));
		for (i = 0; i < reader->nattrs; i++)
		{
			int			c = reader->attrs[i].child_attno - 1;

			rows->values[c] = palloc(sizeof(Datum) * MaxHeapTuplesPerPage);
			rows->isnull[c] = palloc(sizeof(bool) * MaxHeapTuplesPerPage);
		}
	}
	reader->rows = rows;
	reader->tuple_values = palloc(sizeof(Datum) * Max(reader->max_heap_attno, 1));
	reader->tuple_isnull = palloc(sizeof(bool) * Max(reader->max_heap_attno, 1));
	reader->use_page_decoder = gpujoin_page_decoder && page_decoder_init(reader);
	return reader;
}

/*
 * An Append's reader when every subplan is a Seq Scan the reader can read
 * and none runs in one process alone (see the header comment), else NULL.
 * Called in the node's memory.
 */
static GjHeapReader *
append_reader_create(AppendState *append_state, const HostSideBuffer *buf)
{
	GjHeapReader *reader;
	int			i;

	if (append_state->as_nasyncplans > 0 ||
		(append_state->as_prune_state != NULL && append_state->as_prune_state->do_exec_prune))
		return NULL;
	/* the subplans of a Parallel Append before the first partial one run in one process */
	if (append_state->ps.plan->parallel_aware && append_state->as_first_partial_plan > 0)
		return NULL;
	for (i = 0; i < append_state->as_nplans; i++)
	{
		if (!IsA(append_state->appendplans[i], SeqScanState))
			return NULL;
	}
	reader = palloc0(sizeof(GjHeapReader));
	reader->append_state = append_state;
	reader->parts = palloc0(sizeof(GjHeapReader *) * Max(append_state->as_nplans, 1));
	for (i = 0; i < append_state->as_nplans; i++)
	{
		reader->parts[i] = seqscan_reader_create((SeqScanState *) append_state->appendplans[i],
												 buf, i > 0 ? reader->parts[0]->rows : NULL);
		if (reader->parts[i] == NULL)
			return NULL;
	}
	reader->nparts = append_state->as_nplans;
	return reader;
}

/*
 * A reader for the child (a Seq Scan, or an Append of them) when it can
 * stand in for it exactly, else NULL.  buf says which columns of the
 * child's output the join stores.  Called at the node's start; what it
 * allocates lives in cxt, the node's memory.
 */
GjHeapReader *
gj_heap_reader_create(PlanState *child, const HostSideBuffer *buf, MemoryContext cxt)
{
	GjHeapReader *reader = NULL;
	MemoryContext old;

	if (!gpujoin_columnar_input || child->state->es_epq_active != NULL)
		return NULL;
	old = MemoryContextSwitchTo(cxt);
	if (IsA(child, SeqScanState))
		reader = seqscan_reader_create((SeqScanState *) child, buf, NULL);
	else if (IsA(child, AppendState))
		reader = append_reader_create((AppendState *) child, buf);
	MemoryContextSwitchTo(old);
	return reader;
}

/* The next block of the scan, or InvalidBlockNumber at its end. */
static BlockNumber
next_block(GjHeapReader *reader, HeapScanDesc scan)
{
	BlockNumber block;

	if (scan->rs_base.rs_parallel != NULL)
	{
		ParallelBlockTableScanDesc pbscan = (ParallelBlockTableScanDesc) scan->rs_base.rs_parallel;

		if (!reader->started)
			table_block_parallelscan_startblock_init(reader->rel, scan->rs_parallelworkerdata,
													 pbscan);
		reader->started = true;
		return table_block_parallelscan_nextpage(reader->rel, scan->rs_parallelworkerdata,
												 pbscan);
	}

	/* as heapgettup_pagemode: from the start block round to it again */
	if (!reader->started)
	{
		reader->started = true;
		if (scan->rs_nblocks == 0 || scan->rs_numblocks == 0)
			return InvalidBlockNumber;
		reader->next_block = scan->rs_startblock;
		return reader->next_block;
	}
	block = reader->next_block + 1;
	if (block >= scan->rs_nblocks)
		block = 0;
	if (block == scan->rs_startblock ||
		(scan->rs_numblocks != InvalidBlockNumber && --scan->rs_numblocks == 0))
		return InvalidBlockNumber;
	if (scan->rs_base.rs_flags & SO_ALLOW_SYNC)
		ss_report_location(reader->rel, block);
	reader->next_block = block;
	return block;
}

/* Deform a tuple up to max_heap_attno the slow way, as slot_deform_heap_tuple. */
static void
deform_tuple(GjHeapReader *reader, HeapTupleHeader tup)
{
	TupleDesc	tupdesc = reader->tupdesc;
	int			natts = Min((int) HeapTupleHeaderGetNatts(tup), reader->max_heap_attno);
	bool		hasnulls = (tup->t_infomask & HEAP_HASNULL) != 0;
	bits8	   *bp = tup->t_bits;
	char	   *tp = (char *) tup + tup->t_hoff;
	uint32		off = 0;
	int			attnum;

	for (attnum = 0; attnum < natts; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, attnum);

		if (hasnulls && att_isnull(attnum, bp))
		{
			reader->tuple_values[attnum] = (Datum) 0;
			reader->tuple_isnull[attnum] = true;
			continue;
		}
		if (att->attlen == -1)
			off = att_align_pointer(off, att->attalign, -1, tp + off);
		else
			off = att_align_nominal(off, att->attalign);
		reader->tuple_values[attnum] = fetchatt(att, tp + off);
		reader->tuple_isnull[attnum] = false;
		off = att_addlength_pointer(off, att->attlen, tp + off);
	}
	/* columns added after the tuple was written */
	for (; attnum < reader->max_heap_attno; attnum++)
		reader->tuple_values[attnum] = getmissingattr(tupdesc, attnum + 1,
													  &reader->tuple_isnull[attnum]);
}

/*
 * Whether a tuple can be read at the fixed offsets: it has no NULLs and is
 * not shorter than the last attribute read.
 */
static inline bool
tuple_on_fast_path(const GjHeapReader *reader, HeapTupleHeader tup)
{
	return reader->all_fixed && (tup->t_infomask & HEAP_HASNULL) == 0 &&
		HeapTupleHeaderGetNatts(tup) >= reader->max_heap_attno;
}

/* Put the needed attributes of one tuple off the fast path into row j. */
static void
read_tuple_slow(GjHeapReader *reader, HeapTupleHeader tup, int j)
{
	int			k;

	deform_tuple(reader, tup);
	for (k = 0; k < reader->nattrs; k++)
	{
		const GjReadAttr *ra = &reader->attrs[k];

		reader->rows->values[ra->child_attno - 1][j] = reader->tuple_values[ra->heap_attno - 1];
		reader->rows->isnull[ra->child_attno - 1][j] = reader->tuple_isnull[ra->heap_attno - 1];
	}
}

/*
 * Read rows 0 .. n - 1 of the page, all on the fast path (data[] holds their
 * data), an attribute at a time: one load per value, in a loop per width.
 */
static void
read_fast_rows(GjHeapReader *reader, int n)
{
	char	  **data = reader->rows->data;
	int			k,
				j;

	for (k = 0; k < reader->nattrs; k++)
	{
		const GjReadAttr *ra = &reader->attrs[k];
		Form_pg_attribute att = TupleDescAttr(reader->tupdesc, ra->heap_attno - 1);
		Datum	   *values = reader->rows->values[ra->child_attno - 1];
		int			off = ra->fixed_off;

		if (att->attbyval && att->attlen == 8)
			for (j = 0; j < n; j++)
				values[j] = *(Datum *) (data[j] + off);
		else if (att->attbyval && att->attlen == 4)
			for (j = 0; j < n; j++)
				values[j] = Int32GetDatum(*(int32 *) (data[j] + off));
		else
			for (j = 0; j < n; j++)
				values[j] = fetchatt(att, data[j] + off);
		memset(reader->rows->isnull[ra->child_attno - 1], 0, n * sizeof(bool));
	}
}

/*
 * Time since *mark, added to *part_ms, and the mark moved to now; nothing
 * where mark is NULL (the scan is not timed).  Three to four clock reads a
 * page: on the 2-core machine bench_columnar_input.sh's reader read 1-7%
 * slower with them (the most on its 12-column table, of the most pages),
 * so only with gpujoin.time_input_parts, under EXPLAIN ANALYZE with timing.
 * The clock is read out of line: inlined, the untimed reader measured 3-4%
 * slower on that table than without the laps at all.
 */
static pg_noinline void
lap_timed(instr_time *mark, double *part_ms)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	*part_ms += INSTR_TIME_GET_MILLISEC(now) - INSTR_TIME_GET_MILLISEC(*mark);
	*mark = now;
}

static inline void
lap(instr_time *mark, double *part_ms)
{
	if (unlikely(mark != NULL))
		lap_timed(mark, part_ms);
}

/*
 * Read the page's visible tuples, the ntuples at lineoffs, into rows 0 ..
 * ntuples - 1 with the page decoder, and the tuples it flags one at a time.
 * The page is pinned, so its visible tuples stay where they are;
 * by-reference values point into it until the host buffer copies them.
 */
static int
read_page_decoded(GjHeapReader *reader, Page page, const OffsetNumber *lineoffs,
				  int ntuples)
{
	int			nhost;
	int			n;
	int			j;

	n = gj_page_decode((const uint8_t *) page, (uint64_t) (uintptr_t) page, &reader->page_spec,
					   lineoffs, ntuples, &reader->page_out, &nhost);
	Assert(n == ntuples);
	for (j = 0; nhost > 0 && j < n; j++)
	{
		ItemId		lp;

		if (!reader->rows->page_host[j])
			continue;
		lp = PageGetItemId(page, lineoffs[j]);
		Assert(ItemIdIsNormal(lp));
		read_tuple_slow(reader, (HeapTupleHeader) PageGetItem(page, lp), j);
		nhost--;
	}
	return n;
}

/*
 * Whether the scan's quals pass a tuple, evaluated on the child's own scan
 * slot and expression context as ExecScan does.
 */
static bool
scan_quals_pass(GjHeapReader *reader, HeapScanDesc scan, HeapTupleHeader tup,
				ItemId lp, OffsetNumber lineoff)
{
	SeqScanState *ss = reader->scan_state;
	ExprContext *econtext = ss->ss.ps.ps_ExprContext;
	TupleTableSlot *slot = ss->ss.ss_ScanTupleSlot;

	reader->tuple.t_data = tup;
	reader->tuple.t_len = ItemIdGetLength(lp);
	ItemPointerSet(&reader->tuple.t_self, scan->rs_cblock, lineoff);
	reader->tuple.t_tableOid = RelationGetRelid(reader->rel);
	ExecStoreBufferHeapTuple(&reader->tuple, slot, scan->rs_cbuf);
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = slot;
	return ExecQual(ss->ss.ps.qual, econtext);
}

/*
 * Read the page's visible tuples that pass the scan's quals into rows 0,
 * 1, ... one at a time (those on the fast path an attribute at a time, as
 * long as no tuple before needed the slow way); returns the rows read and
 * adds the tuples the quals removed to *filtered.
 */
static int
read_page_tuples(GjHeapReader *reader, HeapScanDesc scan, Page page, int64 *filtered)
{
	PlanState  *ps = &reader->scan_state->ss.ps;
	int			n = 0;
	int			nslow = 0;
	int			i;

	for (i = 0; i < scan->rs_ntuples; i++)
	{
		OffsetNumber lineoff = scan->rs_vistuples[i];
		ItemId		lp = PageGetItemId(page, lineoff);
		HeapTupleHeader tup = (HeapTupleHeader) PageGetItem(page, lp);

		if (ps->qual != NULL && !scan_quals_pass(reader, scan, tup, lp, lineoff))
		{
			(*filtered)++;
			continue;
		}
		if (nslow == 0 && tuple_on_fast_path(reader, tup))
			reader->rows->data[n++] = (char *) tup + tup->t_hoff;
		else
		{
			/* the rows before on the fast path, then this one */
			if (nslow++ == 0 && n > 0)
				read_fast_rows(reader, n);
			read_tuple_slow(reader, tup, n++);
		}
	}
	if (nslow == 0 && n > 0)
		read_fast_rows(reader, n);
	return n;
}

/*
 * Decode the pending all-visible page, if any, into buf and drop its pin;
 * returns its rows.  mark: lap's, NULL when untimed (then only
 * read_pending_rows runs, the reader's code as it was without timing).
 */
static int
read_pending_rows(GjHeapReader *reader, HostSideBuffer *buf)
{
	int			n;

	if (!BufferIsValid(reader->pending_buf))
		return 0;
	n = read_page_decoded(reader, BufferGetPage(reader->pending_buf),
						  reader->rows->pending_lineoffs, reader->pending_ntuples);
	/* the values by reference point into the page: copied while pinned */
	if (n > 0)
		gj_host_buffer_append_columns(buf, n, reader->rows->values, reader->rows->isnull);
	ReleaseBuffer(reader->pending_buf);
	reader->pending_buf = InvalidBuffer;
	return n;
}

static pg_noinline int
read_pending_rows_timed(GjHeapReader *reader, HostSideBuffer *buf, instr_time *mark)
{
	int			n;

	if (!BufferIsValid(reader->pending_buf))
		return 0;
	n = read_page_decoded(reader, BufferGetPage(reader->pending_buf),
						  reader->rows->pending_lineoffs, reader->pending_ntuples);
	lap_timed(mark, &reader->counters.decode_ms);
	if (n > 0)
		gj_host_buffer_append_columns(buf, n, reader->rows->values, reader->rows->isnull);
	lap_timed(mark, &reader->counters.store_ms);
	ReleaseBuffer(reader->pending_buf);
	reader->pending_buf = InvalidBuffer;
	return n;
}

static inline int
read_pending_page(GjHeapReader *reader, HostSideBuffer *buf, instr_time *mark)
{
	return unlikely(mark != NULL) ? read_pending_rows_timed(reader, buf, mark) :
		read_pending_rows(reader, buf);
}

/*
 * The scan a Seq Scan reader reads, begun as SeqNext would, after the
 * rescan ExecProcNode would do first; NULL where it is not a page-at-a-time
 * one (no MVCC snapshot).
 */
static HeapScanDesc
seqscan_reader_begin(GjHeapReader *reader)
{
	SeqScanState *ss = reader->scan_state;
	PlanState  *ps = &ss->ss.ps;
	HeapScanDesc scan;

	if (ps->chgParam != NULL)
	{
		ExecReScan(ps);
		gj_heap_reader_rescan(reader);
	}
	Assert(!BufferIsValid(reader->pending_buf));
	if (ss->ss.ss_currentScanDesc == NULL)
		ss->ss.ss_currentScanDesc = table_beginscan(reader->rel, ps->state->es_snapshot, 0, NULL);
	scan = (HeapScanDesc) ss->ss.ss_currentScanDesc;
	if (!(scan->rs_base.rs_flags & SO_ALLOW_PAGEMODE))
		return NULL;
	return scan;
}

/*
 * Read a Seq Scan reader's table (this process's share of it, in a parallel
 * plan) into buf, from the scan seqscan_reader_begin gave; returns the rows.
 * reserve: make room for the rows the planner expects first.
 */
static int64
seqscan_reader_read(GjHeapReader *reader, HeapScanDesc scan, HostSideBuffer *buf,
					int64 other_side_bytes, bool reserve)
{
	SeqScanState *ss = reader->scan_state;
	PlanState  *ps = &ss->ss.ps;
	Instrumentation *instr = ps->instrument;
	int64		returned = 0;
	int64		filtered = 0;
	BlockNumber block;
	instr_time	mark_time;
	instr_time *mark = NULL;

	/* the planner's estimate of this process's rows, as room to start with */
	if (reserve && !reader->started)
		gj_host_buffer_reserve(buf, buf->nrows + (int64) Min(ps->plan->plan_rows * 1.05 + 1024,
															 (double) PG_INT64_MAX / 2));
	if (instr != NULL)
		InstrStartNode(instr);
	if (gpujoin_time_input_parts && instr != NULL && instr->need_timer)
	{
		mark = &mark_time;
		INSTR_TIME_SET_CURRENT(mark_time);
	}
	while (!reader->finished && (block = next_block(reader, scan)) != InvalidBlockNumber)
	{
		Page		page;
		int			n;

		heapgetpage(&scan->rs_base, block);
		page = BufferGetPage(scan->rs_cbuf);
		lap(mark, &reader->counters.read_ms);
		reader->counters.pages++;
		reader->counters.tuples += scan->rs_ntuples;

		/*
		 * The page decoder on all-visible pages, the pages the device will
		 * decode: on the others heapgetpage has just read every tuple's
		 * header, and the decoder's own checks measured 5% slower than
		 * deforming the visible tuples one by one (2-core machine, 2M rows).
		 * An all-visible page waits for the next page to be read first.
		 */
		if (ps->qual == NULL && reader->use_page_decoder && PageIsAllVisible(page))
		{
			if (scan->rs_ntuples == 0)
				continue;
			gj_page_prefetch_tuples((const uint8 *) page, BLCKSZ);
			returned += read_pending_page(reader, buf, mark);
			IncrBufferRefCount(scan->rs_cbuf);
			reader->pending_buf = scan->rs_cbuf;
			reader->pending_ntuples = scan->rs_ntuples;
			memcpy(reader->rows->pending_lineoffs, scan->rs_vistuples,
				   sizeof(OffsetNumber) * scan->rs_ntuples);
		}
		else
		{
			/* the rows stay in block order */
			returned += read_pending_page(reader, buf, mark);
			n = read_page_tuples(reader, scan, page, &filtered);
			lap(mark, &reader->counters.decode_ms);
			/* the values by reference point into the page: copied while pinned */
			if (n > 0)
				gj_host_buffer_append_columns(buf, n, reader->rows->values, reader->rows->isnull);
			returned += n;
		}
		gj_host_buffer_check_limit(buf, other_side_bytes);
		lap(mark, &reader->counters.store_ms);
	}
	returned += read_pending_page(reader, buf, mark);
	gj_host_buffer_check_limit(buf, other_side_bytes);
	reader->finished = true;

	/* as heapgettup_pagemode at the end of the scan */
	if (ps->qual != NULL)
		ExecClearTuple(ss->ss.ss_ScanTupleSlot);
	if (BufferIsValid(scan->rs_cbuf))
		ReleaseBuffer(scan->rs_cbuf);
	scan->rs_cbuf = InvalidBuffer;
	scan->rs_cblock = InvalidBlockNumber;

	/* what heap_getnextslot and ExecScan would have counted */
	if (pgstat_should_count_relation(reader->rel))
		reader->rel->pgstat_info->t_counts.t_tuples_returned += returned + filtered;
	reader->counters.filtered += filtered;
	if (instr != NULL)
	{
		instr->nfiltered1 += filtered;
		InstrStopNode(instr, (double) returned);
	}
	return returned;
}

/*
 * Read an Append's subplans in turn.  Every scan is begun before a row is
 * read, so that the caller can still drain the child plan where one cannot
 * be read page at a time.
 */
static bool
append_reader_drain(GjHeapReader *reader, HostSideBuffer *buf, int64 other_side_bytes)
{
	AppendState *append_state = reader->append_state;
	Plan	   *plan = append_state->ps.plan;
	Instrumentation *instr = append_state->ps.instrument;
	HeapScanDesc *scans;
	int64		returned = 0;
	int			i;

	/* what ExecProcNode does before it runs a node: the subplans follow */
	if (append_state->ps.chgParam != NULL)
	{
		ExecReScan(&append_state->ps);
		gj_heap_reader_rescan(reader);
	}
	scans = palloc(sizeof(HeapScanDesc) * Max(reader->nparts, 1));
	for (i = 0; i < reader->nparts; i++)
	{
		scans[i] = seqscan_reader_begin(reader->parts[i]);
		if (scans[i] == NULL)
		{
			pfree(scans);
			return false;
		}
	}
	if (!reader->started)
		gj_host_buffer_reserve(buf, buf->nrows + (int64) Min(plan->plan_rows * 1.05 + 1024,
															 (double) PG_INT64_MAX / 2));
	reader->started = true;
	if (instr != NULL)
		InstrStartNode(instr);
	for (i = 0; i < reader->nparts; i++)
		returned += seqscan_reader_read(reader->parts[i], scans[i], buf, other_side_bytes, false);
	if (instr != NULL)
		InstrStopNode(instr, (double) returned);
	reader->finished = true;
	pfree(scans);
	return true;
}

/*
 * Read the whole input (this process's share of it, in a parallel plan)
 * into buf.  False, before anything is read, when the scan turned out to
 * be one the reader cannot do (no MVCC snapshot): the caller drains the
 * child plan instead.
 */
bool
gj_heap_reader_drain(GjHeapReader *reader, HostSideBuffer *buf, int64 other_side_bytes)
{
	HeapScanDesc scan;

	if (reader->append_state != NULL)
		return append_reader_drain(reader, buf, other_side_bytes);
	scan = seqscan_reader_begin(reader);
	if (scan == NULL)
		return false;
	seqscan_reader_read(reader, scan, buf, other_side_bytes, true);
	return true;
}

/* The child was rescanned: the next drain reads the table again. */
void
gj_heap_reader_rescan(GjHeapReader *reader)
{
	int			i;

	/* a drain decodes its last page before it returns */
	Assert(!BufferIsValid(reader->pending_buf));
	reader->started = false;
	reader->finished = false;
	for (i = 0; i < reader->nparts; i++)
		gj_heap_reader_rescan(reader->parts[i]);
}

void
gj_heap_reader_counters(const GjHeapReader *reader, GjHeapReaderCounters *out)
{
	int			i;

	*out = reader->counters;
	for (i = 0; i < reader->nparts; i++)
	{
		GjHeapReaderCounters part;

		gj_heap_reader_counters(reader->parts[i], &part);
		out->pages += part.pages;
		out->tuples += part.tuples;
		out->filtered += part.filtered;
		out->read_ms += part.read_ms;
		out->decode_ms += part.decode_ms;
		out->store_ms += part.store_ms;
	}
}

/* The tables an Append reader reads, 0 for a Seq Scan's. */
int
gj_heap_reader_partitions(const GjHeapReader *reader)
{
	return reader->append_state != NULL ? reader->nparts : 0;
}
