/*-------------------------------------------------------------------------
 *
 * gpujoin_agg_groups.c
 *	  GROUP BY of the aggregate node: each side's groups, numbered once the
 *	  inputs are drained, and the partials of the groups of pairs (see
 *	  gpujoin_agg_groups.h for the layout).
 *
 * A grouping expression the device program cannot compute exactly for a
 * row (an overflow, a division by zero) defers the row: PostgreSQL
 * evaluates it only on the rows that reach the aggregate, so the host
 * evaluates it on each of the row's joined pairs (gpujoin_agg_groups_of_pair),
 * raising PostgreSQL's error if there is one; a row that joins nothing
 * raises nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "catalog/pg_type_d.h"
#include "utils/date.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "gpujoin.h"
#include "custom_scan/agg/gpujoin_agg_groups.h"
#include "host_chunking/key_encoding.h"
#include "kernels/shared/gj_keys.h"

/* An entry of the hash table of groups past the dense area. */
typedef struct GjAggExtraGroup
{
	uint64		key;			/* outer group << 32 | inner group */
	int64		group;
} GjAggExtraGroup;

/*
 * A device value of GjType type (one of the argument types) as a Datum.
 * Here, below gpujoin_agg_exec.c, because both the groups' keys and the
 * aggregate's MIN/MAX results are converted with it.
 */
Datum
gpujoin_agg_value_to_datum(int64 v, int type)
{
	switch (type)
	{
		case GJT_BOOL:
			return BoolGetDatum(v != 0);
		case GJT_INT2:
			return Int16GetDatum((int16) v);
		case GJT_INT4:
			return Int32GetDatum((int32) v);
		case GJT_DATE:
			return DateADTGetDatum((DateADT) v);
		case GJT_FLOAT4:
			return Float4GetDatum((float4) gj_bits_to_double(v));
		case GJT_FLOAT8:
			return Float8GetDatum(gj_bits_to_double(v));
		default:				/* int8, timestamp, timestamptz */
			return Int64GetDatum(v);
	}
}

/*
 * Set up each side's key slot, hashing and equality functions and key
 * expressions (evaluated on a pair's scan tuple for deferred rows).
 */
void
gpujoin_agg_groups_init(GpuJoinAggGroups *groups, const GpuJoinAggInfo *info,
						List *group_exprs, PlanState *ps, EState *estate)
{
	int			side;

	memset(groups, 0, sizeof(GpuJoinAggGroups));
	groups->info = info;
	for (side = 0; side < 2; side++)
	{
		GjAggSideGroups *sg = &groups->side[side];
		Oid			eqops[GJ_AGG_MAX_GROUP_COLS];
		TupleDesc	desc;
		ListCell   *lc;
		int			j;

		foreach(lc, group_exprs)
		{
			int			k = foreach_current_index(lc);

			if (info->group_side[k] != side)
				continue;
			sg->keys[sg->nkeys] = k;
			sg->key_exprs[sg->nkeys] = ExecInitExpr(lfirst(lc), ps);
			eqops[sg->nkeys] = info->group_eqop[k];
			sg->collations[sg->nkeys] = info->group_collation[k];
			sg->nkeys++;
		}
		if (sg->nkeys == 0)
			continue;
		desc = CreateTemplateTupleDesc(sg->nkeys);
		for (j = 0; j < sg->nkeys; j++)
		{
			Node	   *expr = list_nth(group_exprs, sg->keys[j]);

			TupleDescInitEntry(desc, j + 1, NULL, exprType(expr), exprTypmod(expr), 0);
			TupleDescInitEntryCollation(desc, j + 1, sg->collations[j]);
		}
		sg->slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
		execTuplesHashPrepare(sg->nkeys, eqops, &sg->eqfuncs, &sg->hashfuncs);
		sg->slot_cols = palloc(sizeof(AttrNumber) * sg->nkeys);
		for (j = 0; j < sg->nkeys; j++)
			sg->slot_cols[j] = j + 1;
	}
}

/* Room for group g in the partial arrays (zeroed). */
static void
groups_room(GpuJoinAggGroups *groups, int64 g)
{
	int64		old = groups->capacity;
	int64		cap;

	if (g < old)
		return;
	cap = Max(Max(old * 2, g + 1), 64);
	if (old == 0)
	{
		groups->pairs = MemoryContextAllocExtended(groups->cxt, sizeof(int64) * cap,
												   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		groups->acc = MemoryContextAllocExtended(groups->cxt,
												 sizeof(GjAggAcc) * cap * groups->nargs,
												 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	}
	else
	{
		groups->pairs = repalloc_huge(groups->pairs, sizeof(int64) * cap);
		groups->acc = repalloc_huge(groups->acc, sizeof(GjAggAcc) * cap * groups->nargs);
		memset(groups->pairs + old, 0, sizeof(int64) * (cap - old));
		memset(groups->acc + old * groups->nargs, 0,
			   sizeof(GjAggAcc) * (cap - old) * groups->nargs);
	}
	groups->capacity = cap;
}

/* A new group of side sg whose first row is row: its number. */
static uint32
side_new_group(GpuJoinAggGroups *groups, GjAggSideGroups *sg, int64 row)
{
	/* at most one group a row: inputs have fewer than 2^31 rows */
	Assert(sg->ngroups < (int64) GJ_AGG_GROUP_DEFERRED);
	if (sg->ngroups >= sg->first_row_cap)
	{
		int64		cap = Max(sg->first_row_cap * 2, 64);

		sg->first_row = sg->first_row == NULL ?
			MemoryContextAllocHuge(groups->cxt, sizeof(int64) * cap) :
			repalloc_huge(sg->first_row, sizeof(int64) * cap);
		sg->first_row_cap = cap;
	}
	sg->first_row[sg->ngroups] = row;
	return (uint32) sg->ngroups++;
}

/* The side group of the key values in sg->slot, a new one if need be. */
static uint32
side_lookup(GpuJoinAggGroups *groups, GjAggSideGroups *sg, int64 row)
{
	TupleHashEntry entry;
	bool		isnew;

	entry = LookupTupleHashEntry(sg->table, sg->slot, &isnew, NULL);
	if (isnew)
		entry->additional = (void *) (uintptr_t) side_new_group(groups, sg, row);
	MemoryContextReset(groups->hash_temp_cxt);
	return (uint32) (uintptr_t) entry->additional;
}

/*
 * The device type of a grouping key whose equality (its eqop) is the
 * equality of its 8-byte device values, once floats are made canonical
 * (gpujoin_agg_group_value_of_row): integers, bool, oid, date, timestamps
 * and floats under their types' default equality.  -1 for any other key,
 * which the hash table of side_number groups.
 */
static int
group_value_type(const GpuJoinAggInfo *info, const GjAggSideGroups *sg, int k)
{
	Oid			typid = TupleDescAttr(sg->slot->tts_tupleDescriptor, 0)->atttypid;
	int			type;

	switch (typid)
	{
		case BOOLOID:
			type = GJT_BOOL;
			break;
		case INT2OID:
			type = GJT_INT2;
			break;
		case INT4OID:
			type = GJT_INT4;
			break;
		case INT8OID:
			type = GJT_INT8;
			break;
		case OIDOID:
			type = GJT_OID;
			break;
		case FLOAT4OID:
			type = GJT_FLOAT4;
			break;
		case FLOAT8OID:
			type = GJT_FLOAT8;
			break;
		case DATEOID:
			type = GJT_DATE;
			break;
		case TIMESTAMPOID:
			type = GJT_TIMESTAMP;
			break;
		case TIMESTAMPTZOID:
			type = GJT_TIMESTAMPTZ;
			break;
		default:
			return -1;
	}
	if (info->group_scan[k] < 0 && info->group_type[k] != type)
		return -1;
	if (info->group_eqop[k] != lookup_type_cache(typid, TYPECACHE_EQ_OPR)->eq_opr)
		return -1;
	if (type == GJT_FLOAT8 && !FLOAT8PASSBYVAL)
		return -1;
	return type;
}

/*
 * side_number for a side of one grouping key that group_value_type takes:
 * an open-addressing table from the key's device value to its group, in
 * place of the TupleHashTable's hash and equality function calls per row
 * (1M inner rows numbered in 100-130 ms per process of a parallel plan on
 * the GPU machine, in every process).  The groups are numbered in the
 * same order, by their first rows.  Returns false, having numbered
 * nothing, where it does not apply, or where a row is deferred: the
 * deferred rows' groups are looked up later in the TupleHashTable, which
 * must then hold every group, so side_number builds it from the start.
 */
static bool
side_number_by_value(GpuJoinAggGroups *groups, GpuJoinState *gjs, int side,
					 const GjKeyColumns var_cols[2])
{
	const GpuJoinAggInfo *info = groups->info;
	GjAggSideGroups *sg = &groups->side[side];
	HostSideBuffer *buf = side == GJ_SIDE_OUTER ? &gjs->outer_buf : &gjs->inner_buf;
	int			k = sg->keys[0];
	int			type;
	const GjProgram *program = &info->group_program[k];
	HostDatumColumn *col = NULL;
	MemoryContext table_cxt;
	int64	   *slot_value;
	uint32	   *slot_group;		/* UINT32_MAX: empty */
	uint64		mask;
	int64		used = 0;
	int64		null_group = -1;
	int64		nrows = buf->nrows;
	int64		row;

	if (sg->nkeys != 1 || (type = group_value_type(info, sg, k)) < 0)
		return false;
	if (info->group_scan[k] >= 0)
		col = buf->cols + gjs->scan_cols[info->group_scan[k]];
	table_cxt = AllocSetContextCreate(groups->cxt, "GpuJoin groups by value",
									  ALLOCSET_DEFAULT_SIZES);
	mask = 1023;
	slot_value = MemoryContextAlloc(table_cxt, sizeof(int64) * (mask + 1));
	slot_group = MemoryContextAlloc(table_cxt, sizeof(uint32) * (mask + 1));
	memset(slot_group, 0xff, sizeof(uint32) * (mask + 1));
	sg->ngroups = 0;
	sg->row_group = MemoryContextAllocHuge(groups->cxt, sizeof(uint32) * Max(nrows, 1));
	for (row = 0; row < nrows; row++)
	{
		int64		value;
		bool		isnull;
		uint64		i;

		if ((row & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!gpujoin_agg_group_value_of_row(program, col, type, var_cols, row, &value, &isnull))
		{
			/* a deferred row: numbered by side_number instead */
			pfree(sg->row_group);
			sg->row_group = NULL;
			sg->ngroups = 0;
			MemoryContextDelete(table_cxt);
			return false;
		}
		if (isnull)
		{
			if (null_group < 0)
				null_group = side_new_group(groups, sg, row);
			sg->row_group[row] = (uint32) null_group;
			continue;
		}
		for (i = gj_hash64((uint64) value) & mask;
			 slot_group[i] != PG_UINT32_MAX && slot_value[i] != value;
			 i = (i + 1) & mask)
			;
		if (slot_group[i] == PG_UINT32_MAX)
		{
			uint32		g = side_new_group(groups, sg, row);

			slot_value[i] = value;
			slot_group[i] = g;
			sg->row_group[row] = g;
			/* at half full, twice the slots */
			if (++used * 2 > (int64) mask)
			{
				uint64		newmask = mask * 2 + 1;
				int64	   *new_value = MemoryContextAllocHuge(table_cxt, sizeof(int64) * (newmask + 1));
				uint32	   *new_group = MemoryContextAllocHuge(table_cxt, sizeof(uint32) * (newmask + 1));
				uint64		j;

				memset(new_group, 0xff, sizeof(uint32) * (newmask + 1));
				for (j = 0; j <= mask; j++)
				{
					uint64		h;

					if (slot_group[j] == PG_UINT32_MAX)
						continue;
					for (h = gj_hash64((uint64) slot_value[j]) & newmask;
						 new_group[h] != PG_UINT32_MAX;
						 h = (h + 1) & newmask)
						;
					new_value[h] = slot_value[j];
					new_group[h] = slot_group[j];
				}
				pfree(slot_value);
				pfree(slot_group);
				slot_value = new_value;
				slot_group = new_group;
				mask = newmask;
			}
			continue;
		}
		sg->row_group[row] = slot_group[i];
	}
	MemoryContextDelete(table_cxt);
	return true;
}

/*
 * Number the groups of one side's rows: a hash table over the key values,
 * built as nodeAgg.c builds its own, so that "equal" is what it is for
 * PostgreSQL's hashed GROUP BY (NULLs one group, -0.0 and 0.0 one, NaNs
 * one), unless side_number_by_value numbers them.  Every row gets a group,
 * also one that no pair will use: such groups are never returned.
 */
static void
side_number(GpuJoinAggGroups *groups, GpuJoinState *gjs, int side,
			const GjKeyColumns var_cols[2])
{
	const GpuJoinAggInfo *info = groups->info;
	GjAggSideGroups *sg = &groups->side[side];
	HostSideBuffer *buf = side == GJ_SIDE_OUTER ? &gjs->outer_buf : &gjs->inner_buf;
	TupleTableSlot *slot = sg->slot;
	MemoryContext table_cxt;
	int64		nrows = buf->nrows;
	int64		row;

	/* a side without keys (GROUP BY the inner side's columns only): one group */
	if (sg->nkeys == 0)
	{
		sg->row_group = MemoryContextAllocHuge(groups->cxt, sizeof(uint32) * Max(nrows, 1));
		memset(sg->row_group, 0, sizeof(uint32) * Max(nrows, 1));
		sg->ngroups = 0;
		if (nrows > 0)
		{
			if (sg->first_row_cap == 0)
			{
				sg->first_row = MemoryContextAllocHuge(groups->cxt, sizeof(int64) * 64);
				sg->first_row_cap = 64;
			}
			sg->first_row[sg->ngroups++] = 0;
		}
		return;
	}
	if (side == GJ_SIDE_INNER && sg->nkeys == 1 &&
		gpujoin_agg_groups_number_shared(groups, gjs, var_cols,
										 group_value_type(info, sg, sg->keys[0])))
		return;
	if (side_number_by_value(groups, gjs, side, var_cols))
		return;
	table_cxt = AllocSetContextCreate(groups->cxt, "GpuJoin groups", ALLOCSET_DEFAULT_SIZES);
	sg->table = BuildTupleHashTableExt(&gjs->css.ss.ps, slot->tts_tupleDescriptor,
									   sg->nkeys, sg->slot_cols, sg->eqfuncs, sg->hashfuncs,
									   sg->collations, Min(Max(nrows, 16), 65536), 0,
									   table_cxt, table_cxt, groups->hash_temp_cxt, false);
	sg->row_group = MemoryContextAllocHuge(groups->cxt, sizeof(uint32) * Max(nrows, 1));
	for (row = 0; row < nrows; row++)
	{
		bool		deferred = false;
		int			j;

		if ((row & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		ExecClearTuple(slot);
		for (j = 0; j < sg->nkeys && !deferred; j++)
		{
			int			k = sg->keys[j];
			const GjProgram *program = &info->group_program[k];
			GjSlot		value = {0};	/* a deferred row's are never read */
			bool		isnull = true;

			if (info->group_scan[k] >= 0)
			{
				HostDatumColumn *col = buf->cols + gjs->scan_cols[info->group_scan[k]];

				slot->tts_values[j] = col->values[row];
				slot->tts_isnull[j] = col->isnull[row];
				continue;
			}
			/* the program loads only its own side: row is that side's */
			if (gj_program_run(program->instrs, program->ninstrs, &var_cols[0], row,
							   &var_cols[1], row, &value, &isnull) == GJ_RESULT_RECHECK)
				deferred = true;
			slot->tts_isnull[j] = isnull;
			slot->tts_values[j] = isnull ? (Datum) 0 :
				gpujoin_agg_value_to_datum(value.i, info->group_type[k]);
		}
		if (deferred)
		{
			sg->row_group[row] = GJ_AGG_GROUP_DEFERRED;
			sg->deferred_rows++;
			continue;
		}
		ExecStoreVirtualTuple(slot);
		sg->row_group[row] = side_lookup(groups, sg, row);
	}
}

/*
 * The device type of the inner side's grouping key where the processes of
 * a parallel plan may number its groups together (one key that
 * side_number_by_value takes: gpujoin_agg_shared_groups.c), else -1.
 */
int
gpujoin_agg_groups_inner_value_type(const GpuJoinAggGroups *groups)
{
	const GjAggSideGroups *sg = &groups->side[GJ_SIDE_INNER];

	if (sg->nkeys != 1)
		return -1;
	return group_value_type(groups->info, sg, sg->keys[0]);
}

/*
 * Number both sides' groups, then lay out the partials: the dense area of
 * outer groups x inner groups, unless it would take more than
 * gpujoin.max_dense_groups groups, or more than half of
 * gpujoin.max_host_memory or than what the inputs and the columns and
 * groups numbered so far leave of it (the node checks the total once the
 * groups are numbered): then every group of pairs goes through the hash
 * table, which holds only the groups that have a pair, and the backend
 * reduces nothing.  Too many groups is never an error.
 */
void
gpujoin_agg_groups_number(GpuJoinAggGroups *groups, GpuJoinState *gjs,
						  const GjKeyColumns var_cols[2], MemoryContext cxt, int nargs)
{
	GjAggSideGroups *outer = &groups->side[GJ_SIDE_OUTER];
	GjAggSideGroups *inner = &groups->side[GJ_SIDE_INNER];
	MemoryContext old = MemoryContextSwitchTo(cxt);

	groups->cxt = cxt;
	groups->nargs = Max(nargs, 1);
	groups->hash_temp_cxt = AllocSetContextCreate(cxt, "GpuJoin group hashing",
												  ALLOCSET_SMALL_SIZES);
	side_number(groups, gjs, GJ_SIDE_OUTER, var_cols);
	if (!gpujoin_agg_groups_inner(groups))
	{
		/* the outer groups themselves, growing with deferred rows' groups */
		groups->dense = true;
		groups->dense_outer = outer->ngroups;
		groups->dense_inner = 1;
		groups->ngroups = outer->ngroups;
		groups_room(groups, Max(groups->ngroups, 1) - 1);
	}
	else
	{
		double		ndense;
		double		bytes;
		double		budget = (double) gpujoin_max_host_memory_kb * 1024.0;
		double		used;

		side_number(groups, gjs, GJ_SIDE_INNER, var_cols);
		/* a side whose rows are all deferred still has one group's slot */
		groups->dense_outer = Max(outer->ngroups, 1);
		groups->dense_inner = Max(inner->ngroups, 1);
		ndense = (double) groups->dense_outer * groups->dense_inner;
		bytes = ndense * (sizeof(int64) + sizeof(GjAggAcc) * groups->nargs);
		used = (double) gjs->outer_buf.bytes_stored + (double) gjs->inner_buf.bytes_stored +
			(double) MemoryContextMemAllocated(cxt, true);
		groups->dense = ndense <= gpujoin_max_dense_groups &&
			bytes <= Min(budget / 2, budget - used);
		if (groups->dense)
		{
			groups->ngroups = (int64) ndense;
			groups_room(groups, groups->ngroups - 1);
		}
		else
			groups->dense_outer = groups->dense_inner = 0;
	}
	groups->shown_outer = outer->ngroups;
	groups->shown_inner = inner->ngroups;
	groups->shown_dense = groups->dense;
	MemoryContextSwitchTo(old);
}

/* What the backend needs of the groups: each row's, and the dense area. */
void
gpujoin_agg_groups_spec(const GpuJoinAggGroups *groups, GjAggSpec *spec)
{
	spec->outer_group = groups->side[GJ_SIDE_OUTER].row_group;
	spec->ngroups = Max(groups->dense_outer, 1);
	if (gpujoin_agg_groups_inner(groups))
	{
		spec->inner_group = groups->side[GJ_SIDE_INNER].row_group;
		spec->ninner_groups = groups->dense_inner;
	}
	if (groups->side[GJ_SIDE_OUTER].deferred_rows > 0 ||
		groups->side[GJ_SIDE_INNER].deferred_rows > 0)
		spec->rows_need_host = true;
}

/*
 * The side group of a pair's row of side `side`: numbered, or for a
 * deferred row its key expressions evaluated on the pair's scan tuple (as
 * PostgreSQL's Agg evaluates them on a joined row), then looked up or
 * added.  The scan tuple is formed once per pair (*formed).
 */
static uint32
side_group_of_pair(GpuJoinAggGroups *groups, GpuJoinState *gjs, int side,
				   uint32 orow, uint32 irow, bool *formed)
{
	GjAggSideGroups *sg = &groups->side[side];
	ExprContext *econtext = gjs->css.ss.ps.ps_ExprContext;
	uint32		row = side == GJ_SIDE_OUTER ? orow : irow;
	int			j;

	if (sg->nkeys == 0)
		return 0;
	if (sg->row_group[row] != GJ_AGG_GROUP_DEFERRED)
		return sg->row_group[row];
	if (!*formed)
	{
		ResetExprContext(econtext);
		gpujoin_form_scan_tuple(gjs, orow, irow);
		econtext->ecxt_scantuple = gjs->css.ss.ss_ScanTupleSlot;
		*formed = true;
	}
	ExecClearTuple(sg->slot);
	for (j = 0; j < sg->nkeys; j++)
		sg->slot->tts_values[j] = ExecEvalExpr(sg->key_exprs[j], econtext,
											   &sg->slot->tts_isnull[j]);
	ExecStoreVirtualTuple(sg->slot);
	return side_lookup(groups, sg, row);
}

/*
 * The group of the pair (orow, irow) that the host reduces: its place in
 * the partial arrays, made if it is new.
 */
int64
gpujoin_agg_groups_of_pair(GpuJoinAggGroups *groups, GpuJoinState *gjs,
						   uint32 orow, uint32 irow, bool *formed)
{
	uint32		og = side_group_of_pair(groups, gjs, GJ_SIDE_OUTER, orow, irow, formed);
	uint32		ig = side_group_of_pair(groups, gjs, GJ_SIDE_INNER, orow, irow, formed);
	GjAggExtraGroup *entry;
	uint64		key;
	bool		found;

	if (!gpujoin_agg_groups_inner(groups))
	{
		groups_room(groups, og);
		groups->ngroups = Max(groups->ngroups, (int64) og + 1);
		return og;
	}
	if (og < groups->dense_outer && ig < groups->dense_inner)
		return (int64) og * groups->dense_inner + ig;

	if (groups->extra == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint64);
		ctl.entrysize = sizeof(GjAggExtraGroup);
		ctl.hcxt = groups->cxt;
		groups->extra = hash_create("GpuJoin groups of pairs", 1024, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	key = (uint64) og << 32 | ig;
	entry = hash_search(groups->extra, &key, HASH_ENTER, &found);
	if (!found)
	{
		int64		nextra = groups->ngroups - groups->dense_outer * groups->dense_inner;

		entry->group = groups->ngroups++;
		groups_room(groups, entry->group);
		if (nextra >= groups->extra_cap)
		{
			int64		cap = Max(groups->extra_cap * 2, 64);

			groups->extra_key = groups->extra_key == NULL ?
				MemoryContextAllocHuge(groups->cxt, sizeof(uint64) * cap) :
				repalloc_huge(groups->extra_key, sizeof(uint64) * cap);
			groups->extra_cap = cap;
		}
		groups->extra_key[nextra] = key;
	}
	return entry->group;
}

/*
 * The first outer and inner row of group g (inner -1 without inner keys),
 * or false when the group has no pair: an inner join has no such group.
 */
bool
gpujoin_agg_groups_rows(const GpuJoinAggGroups *groups, int64 g, int64 *orow, int64 *irow)
{
	int64		ndense = groups->dense_outer * groups->dense_inner;
	int64		og,
				ig;

	if (groups->pairs[g] == 0)
		return false;
	if (!gpujoin_agg_groups_inner(groups))
	{
		*orow = groups->side[GJ_SIDE_OUTER].first_row[g];
		*irow = -1;
		return true;
	}
	if (g < ndense)
	{
		og = g / groups->dense_inner;
		ig = g % groups->dense_inner;
	}
	else
	{
		og = (int64) (groups->extra_key[g - ndense] >> 32);
		ig = (int64) (groups->extra_key[g - ndense] & 0xffffffff);
	}
	*orow = groups->side[GJ_SIDE_OUTER].first_row[og];
	*irow = groups->side[GJ_SIDE_INNER].first_row[ig];
	return true;
}

/* After agg_cxt was reset (rescan): nothing numbered. */
void
gpujoin_agg_groups_reset(GpuJoinAggGroups *groups)
{
	int			side;

	for (side = 0; side < 2; side++)
	{
		GjAggSideGroups *sg = &groups->side[side];

		sg->table = NULL;
		sg->row_group = NULL;
		sg->first_row = NULL;
		sg->first_row_cap = 0;
		sg->ngroups = 0;
		sg->deferred_rows = 0;
		sg->shared = false;
	}
	groups->cxt = NULL;
	groups->hash_temp_cxt = NULL;
	groups->dense = false;
	groups->dense_outer = groups->dense_inner = 0;
	groups->ngroups = 0;
	groups->capacity = 0;
	groups->pairs = NULL;
	groups->acc = NULL;
	groups->extra = NULL;
	groups->extra_key = NULL;
	groups->extra_cap = 0;
}

/*
 * EXPLAIN ANALYZE, grouping by both sides: the groups of each side's rows
 * and where the groups of pairs were kept.
 */
void
gpujoin_agg_groups_explain(const GpuJoinAggGroups *groups, ExplainState *es)
{
	char	   *text;

	if (!gpujoin_agg_groups_inner(groups))
		return;
	text = psprintf("%lld x %lld, %s", (long long) groups->shown_outer,
					(long long) groups->shown_inner,
					groups->shown_dense ? "dense" : "host hash table");
	ExplainPropertyText("Groups of Outer x Inner Rows", text, es);
}
