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
 *	- the scan's own quals are evaluated on the child's scan slot, as
 *	  ExecScan would, and only the tuples that pass are deformed;
 *	- a page's rows go to the host buffer column by column
 *	  (gj_host_buffer_append_columns).
 *
 * The child stays in the plan tree: its instrumentation counts the rows and
 * the filtered rows the reader produced, so EXPLAIN ANALYZE shows the scan
 * as usual, and pg_stat_user_tables counts the scan and the tuples read.
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
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "gpujoin.h"
#include "host_chunking/heap_reader.h"

/* How to fetch one needed attribute at a fixed offset. */
typedef struct GjReadAttr
{
	int			heap_attno;		/* attribute of the table */
	int			child_attno;	/* where the child's output has it */
	int			fixed_off;		/* offset in a tuple without NULLs, or -1 */
} GjReadAttr;

struct GjHeapReader
{
	SeqScanState *scan_state;
	Relation	rel;
	TupleDesc	tupdesc;		/* the table's */
	int			nattrs;
	GjReadAttr *attrs;			/* sorted by heap_attno */
	int			max_heap_attno;
	bool		all_fixed;		/* every attrs[].fixed_off >= 0 */
	int			max_child_attno;

	/* a page's rows, column by column, indexed by child attno - 1 */
	Datum	  **values;
	bool	  **isnull;
	/* the data of a page's tuples on the fast path (no NULLs, long enough) */
	char	   *data[MaxHeapTuplesPerPage];
	/* one tuple deformed up to max_heap_attno, for tuples off the fast path */
	Datum	   *tuple_values;
	bool	   *tuple_isnull;

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
 * A reader for the child when it can stand in for it exactly (see the
 * header comment), else NULL.  buf says which columns of the child's output
 * the join stores.  Called at the node's start; what it allocates lives in
 * cxt, the node's memory.
 */
GjHeapReader *
gj_heap_reader_create(PlanState *child, const HostSideBuffer *buf, MemoryContext cxt)
{
	SeqScanState *scan_state;
	Relation	rel;
	GjHeapReader *reader;
	MemoryContext old;
	int			i;

	if (!gpujoin_columnar_input || !IsA(child, SeqScanState))
		return NULL;
	scan_state = (SeqScanState *) child;
	rel = scan_state->ss.ss_currentRelation;
	if (child->state->es_epq_active != NULL || rel == NULL ||
		rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		return NULL;

	old = MemoryContextSwitchTo(cxt);
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
		{
			MemoryContextSwitchTo(old);
			return NULL;
		}
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

	reader->values = palloc0(sizeof(Datum *) * Max(reader->max_child_attno, 1));
	reader->isnull = palloc0(sizeof(bool *) * Max(reader->max_child_attno, 1));
	for (i = 0; i < reader->nattrs; i++)
	{
		int			c = reader->attrs[i].child_attno - 1;

		reader->values[c] = palloc(sizeof(Datum) * MaxHeapTuplesPerPage);
		reader->isnull[c] = palloc(sizeof(bool) * MaxHeapTuplesPerPage);
	}
	reader->tuple_values = palloc(sizeof(Datum) * Max(reader->max_heap_attno, 1));
	reader->tuple_isnull = palloc(sizeof(bool) * Max(reader->max_heap_attno, 1));
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

		reader->values[ra->child_attno - 1][j] = reader->tuple_values[ra->heap_attno - 1];
		reader->isnull[ra->child_attno - 1][j] = reader->tuple_isnull[ra->heap_attno - 1];
	}
}

/*
 * Read rows 0 .. n - 1 of the page, all on the fast path (data[] holds their
 * data), an attribute at a time: one load per value, in a loop per width.
 */
static void
read_fast_rows(GjHeapReader *reader, int n)
{
	char	  **data = reader->data;
	int			k,
				j;

	for (k = 0; k < reader->nattrs; k++)
	{
		const GjReadAttr *ra = &reader->attrs[k];
		Form_pg_attribute att = TupleDescAttr(reader->tupdesc, ra->heap_attno - 1);
		Datum	   *values = reader->values[ra->child_attno - 1];
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
		memset(reader->isnull[ra->child_attno - 1], 0, n * sizeof(bool));
	}
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
 * Read the whole input (this process's share of it, in a parallel plan)
 * into buf.  False, before anything is read, when the scan turned out to
 * be one the reader cannot do (no MVCC snapshot): the caller drains the
 * child plan instead.
 */
bool
gj_heap_reader_drain(GjHeapReader *reader, HostSideBuffer *buf, int64 other_side_bytes)
{
	SeqScanState *ss = reader->scan_state;
	PlanState  *ps = &ss->ss.ps;
	HeapScanDesc scan;
	Instrumentation *instr = ps->instrument;
	int64		returned = 0;
	int64		filtered = 0;
	BlockNumber block;

	/* what ExecProcNode does before it runs a node */
	if (ps->chgParam != NULL)
	{
		ExecReScan(ps);
		gj_heap_reader_rescan(reader);
	}
	if (ss->ss.ss_currentScanDesc == NULL)
		ss->ss.ss_currentScanDesc = table_beginscan(reader->rel, ps->state->es_snapshot, 0, NULL);
	scan = (HeapScanDesc) ss->ss.ss_currentScanDesc;
	if (!(scan->rs_base.rs_flags & SO_ALLOW_PAGEMODE))
		return false;

	/* the planner's estimate of this process's rows, as room to start with */
	if (!reader->started)
		gj_host_buffer_reserve(buf, buf->nrows + (int64) Min(ps->plan->plan_rows * 1.05 + 1024,
															 (double) PG_INT64_MAX / 2));
	if (instr != NULL)
		InstrStartNode(instr);
	while (!reader->finished && (block = next_block(reader, scan)) != InvalidBlockNumber)
	{
		Page		page;
		int			n = 0;
		int			nslow = 0;
		int			i;

		heapgetpage(&scan->rs_base, block);
		page = BufferGetPage(scan->rs_cbuf);
		for (i = 0; i < scan->rs_ntuples; i++)
		{
			OffsetNumber lineoff = scan->rs_vistuples[i];
			ItemId		lp = PageGetItemId(page, lineoff);
			HeapTupleHeader tup = (HeapTupleHeader) PageGetItem(page, lp);

			if (ps->qual != NULL && !scan_quals_pass(reader, scan, tup, lp, lineoff))
			{
				filtered++;
				continue;
			}
			if (nslow == 0 && tuple_on_fast_path(reader, tup))
				reader->data[n++] = (char *) tup + tup->t_hoff;
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
		/* the values by reference point into the page: copied while pinned */
		if (n > 0)
			gj_host_buffer_append_columns(buf, n, reader->values, reader->isnull);
		returned += n;
		reader->counters.pages++;
		reader->counters.tuples += scan->rs_ntuples;
		gj_host_buffer_check_limit(buf, other_side_bytes);
	}
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
	return true;
}

/* The child was rescanned: the next drain reads the table again. */
void
gj_heap_reader_rescan(GjHeapReader *reader)
{
	reader->started = false;
	reader->finished = false;
}

void
gj_heap_reader_counters(const GjHeapReader *reader, GjHeapReaderCounters *out)
{
	*out = reader->counters;
}
