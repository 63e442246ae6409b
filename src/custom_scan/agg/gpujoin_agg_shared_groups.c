/*-------------------------------------------------------------------------
 *
 * gpujoin_agg_shared_groups.c
 *	  GROUP BY of the aggregate node in a parallel plan: the shared inner
 *	  side's groups, numbered by the plan's processes together.
 *
 * Every process of a parallel plan reads the same shared inner side
 * (shared_inner.c), row for row, and numbered all its rows itself: 1M inner
 * rows took 36-51 ms of Setup Time in each of the 9 processes of issue
 * 36's grouped query on the GPU machine, the same work 9 times.  Now the
 * process that shares the side leaves room after it (the layout below),
 * and each process, when it comes to number its groups, takes chunks of
 * SHARED_GROUPS_CHUNK rows that no process has taken yet and numbers them
 * into one table of values and groups in that room, then waits for the
 * chunks the others took.  The work is done once, by the processes that
 * are there: that query's Setup Time went to 4-9 ms a process
 * (docs/results/2026-11-28-h200-fc98d72-inner-groups.md).
 *
 * Only a side that gpujoin_agg_groups.c's side_number_by_value would number
 * (one key of a plain type) is numbered together.  Its groups get their
 * numbers in the order the processes find them, not in the order of their
 * first rows: any order will do, since each process returns its groups by
 * their keys' values and the rows the numbers are read from are the same
 * in every process.  A row whose key the program cannot compute exactly (a
 * deferred row), or more than SHARED_GROUPS_MAX groups, makes every
 * process number the side itself, as before.
 *
 * The table is open addressing over atomics: a slot is empty, busy (a
 * process is writing its value) or holds a group, whose value is written
 * before the group.  No slot goes back to empty.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "gpujoin.h"
#include "custom_scan/agg/gpujoin_agg_groups.h"
#include "host_chunking/key_encoding.h"
#include "host_chunking/staging.h"
#include "kernels/shared/gj_keys.h"

#define SHARED_GROUPS_MAGIC 0x474a4752	/* "GJGR" */
#define SHARED_GROUPS_CHUNK 16384
#define SHARED_GROUPS_MAX	65536
/* a slot's state, past every group number (groups < SHARED_GROUPS_MAX) */
#define SLOT_EMPTY			PG_UINT32_MAX
#define SLOT_BUSY			(PG_UINT32_MAX - 1)
#define SLOT_FAILED			(PG_UINT32_MAX - 2)	/* its group was one too many */
/* what the lookups return for no group: numbering together has failed */
#define NO_GROUP			PG_UINT32_MAX
/* a wait for another process: spins, then sleeps of SLEEP_US, up to WAIT_MS */
#define WAIT_SPINS			1000
#define SLEEP_US			100
#define WAIT_MS				10000
#define SLEEP_MS			10		/* a wait for the others' chunks */

typedef struct SharedGroupsHeader
{
	uint32		magic;
	int64		nrows;
	int64		nchunks;
	int64		max_groups;
	uint64		mask;			/* slots - 1 */
	pg_atomic_uint64 next_chunk;	/* the first chunk no process took */
	pg_atomic_uint64 chunks_done;
	pg_atomic_uint32 ngroups;
	pg_atomic_uint32 null_group;	/* the NULL key's group, or a slot state */
	pg_atomic_uint32 failed;	/* every process numbers the side itself */
	ConditionVariable cv;		/* every chunk done, or failed */
} SharedGroupsHeader;

/*
 * A float's device value made canonical for grouping: PostgreSQL's float
 * equality and hash (float8eq, hashfloat8) take -0.0 as 0.0 and every NaN
 * as one value.
 */
static inline int64
float_group_value(int64 bits)
{
	double		d = gj_bits_to_double(bits);

	if (isnan(d))
		return gj_double_to_bits(get_float8_nan());
	if (d == 0.0)
		return 0;
	return bits;
}

/*
 * The grouping key's value of a row, as both numberings by value read it
 * (here, below gpujoin_agg_groups.c): the stored column col where the key
 * is one, else its program over var_cols; floats made canonical.  False
 * where the program cannot compute it exactly (the row is deferred).
 */
bool
gpujoin_agg_group_value_of_row(const GjProgram *program, const HostDatumColumn *col, int type,
							   const GjKeyColumns var_cols[2], int64 row, int64 *value,
							   bool *isnull)
{
	GjSlot		slot = {0};

	if (col != NULL)
	{
		*isnull = col->isnull[row];
		if (!*isnull)
			slot.i = gj_datum_to_value(col->values[row], type);
	}
	else if (gj_program_run(program->instrs, program->ninstrs, &var_cols[0], row,
							&var_cols[1], row, &slot, isnull) == GJ_RESULT_RECHECK)
		return false;
	if (!*isnull && (type == GJT_FLOAT4 || type == GJT_FLOAT8))
		slot.i = float_group_value(slot.i);
	*value = *isnull ? 0 : slot.i;
	return true;
}

/* Where the arrays lie after the header. */
typedef struct SharedGroupsLayout
{
	uint32	   *row_group;		/* per row */
	int64	   *first_row;		/* per group: a row of it */
	int64	   *slot_value;		/* per slot */
	pg_atomic_uint32 *slot_group;	/* per slot */
	Size		size;
} SharedGroupsLayout;

static void
shared_groups_layout(char *base, int64 nrows, int64 max_groups, uint64 mask,
					 SharedGroupsLayout *lay)
{
	Size		row_group = MAXALIGN(sizeof(SharedGroupsHeader));
	Size		first_row = row_group + MAXALIGN(sizeof(uint32) * nrows);
	Size		slot_value = first_row + MAXALIGN(sizeof(int64) * max_groups);
	Size		slot_group = slot_value + MAXALIGN(sizeof(int64) * (mask + 1));

	lay->size = slot_group + MAXALIGN(sizeof(pg_atomic_uint32) * (mask + 1));
	if (base == NULL)
		return;					/* the size only */
	lay->row_group = (uint32 *) (base + row_group);
	lay->first_row = (int64 *) (base + first_row);
	lay->slot_value = (int64 *) (base + slot_value);
	lay->slot_group = (pg_atomic_uint32 *) (base + slot_group);
}

static void
shared_groups_bounds(int64 nrows, int64 *max_groups, uint64 *mask)
{
	*max_groups = Min(Max(nrows, 1), SHARED_GROUPS_MAX);
	/* at most half full */
	for (*mask = 1023; *mask + 1 < (uint64) (2 * *max_groups); *mask = *mask * 2 + 1)
		;
}

/*
 * The bytes the inner side's groups take in the shared chunk after an
 * inner side of nrows rows, when its key is one that side_number_by_value
 * takes (gpujoin_agg_groups_inner_value_type).
 */
Size
gpujoin_agg_groups_shared_size(int64 nrows)
{
	SharedGroupsLayout lay;
	int64		max_groups;
	uint64		mask;

	if (nrows <= 0)
		return 0;
	shared_groups_bounds(nrows, &max_groups, &mask);
	shared_groups_layout(NULL, nrows, max_groups, mask, &lay);
	return lay.size;
}

/* In the process that shares the inner side: the room, empty. */
void
gpujoin_agg_groups_shared_init(int64 nrows, char *dst, Size len)
{
	SharedGroupsHeader *h = (SharedGroupsHeader *) dst;
	SharedGroupsLayout lay;
	uint64		i;

	memset(h, 0, sizeof(SharedGroupsHeader));
	h->nrows = nrows;
	h->nchunks = (nrows + SHARED_GROUPS_CHUNK - 1) / SHARED_GROUPS_CHUNK;
	shared_groups_bounds(nrows, &h->max_groups, &h->mask);
	shared_groups_layout(dst, nrows, h->max_groups, h->mask, &lay);
	Assert(lay.size <= len);
	pg_atomic_init_u64(&h->next_chunk, 0);
	pg_atomic_init_u64(&h->chunks_done, 0);
	pg_atomic_init_u32(&h->ngroups, 0);
	pg_atomic_init_u32(&h->null_group, SLOT_EMPTY);
	pg_atomic_init_u32(&h->failed, lay.size <= len ? 0 : 1);
	ConditionVariableInit(&h->cv);
	for (i = 0; i <= h->mask; i++)
		pg_atomic_init_u32(&lay.slot_group[i], SLOT_EMPTY);
	pg_write_barrier();
	h->magic = SHARED_GROUPS_MAGIC;
}

/* A new group whose row is row, or NO_GROUP past max_groups. */
static uint32
shared_new_group(SharedGroupsHeader *h, SharedGroupsLayout *lay, int64 row)
{
	uint32		g = pg_atomic_fetch_add_u32(&h->ngroups, 1);

	if ((int64) g >= h->max_groups)
	{
		pg_atomic_write_u32(&h->failed, 1);
		return NO_GROUP;
	}
	lay->first_row[g] = row;
	return g;
}

/*
 * The group of a slot that another process claimed (*state, SLOT_BUSY
 * while it writes a few words): waited for, spinning, then sleeping.
 * NO_GROUP where that failed, or where the wait goes on for WAIT_MS (that
 * process is gone, or off the CPU: the caller numbers the side itself).
 */
static uint32
shared_wait_slot(pg_atomic_uint32 *state)
{
	uint32		g;
	int			spins = 0;
	int64		slept_us = 0;

	while ((g = pg_atomic_read_u32(state)) == SLOT_BUSY)
	{
		if (++spins <= WAIT_SPINS)
		{
			pg_spin_delay();
			continue;
		}
		if (slept_us >= (int64) WAIT_MS * 1000)
			return NO_GROUP;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(SLEEP_US);
		slept_us += SLEEP_US;
	}
	return g == SLOT_FAILED ? NO_GROUP : g;
}

/* The group of a key value, a new one where no process found it yet. */
static uint32
shared_group_of(SharedGroupsHeader *h, SharedGroupsLayout *lay, int64 value, int64 row)
{
	uint64		i = gj_hash64((uint64) value) & h->mask;
	uint64		probes;

	for (probes = 0; probes <= h->mask; probes++, i = (i + 1) & h->mask)
	{
		pg_atomic_uint32 *state = &lay->slot_group[i];
		uint32		g = pg_atomic_read_u32(state);

		if (g == SLOT_EMPTY)
		{
			uint32		expected = SLOT_EMPTY;

			if (pg_atomic_compare_exchange_u32(state, &expected, SLOT_BUSY))
			{
				lay->slot_value[i] = value;
				g = shared_new_group(h, lay, row);
				/* the value, then the group (pg_atomic_write has no barrier) */
				pg_write_barrier();
				pg_atomic_write_u32(state, g == NO_GROUP ? SLOT_FAILED : g);
				return g;
			}
			g = expected;		/* another process claimed it first */
		}
		if (g == SLOT_BUSY || g == SLOT_FAILED)
			g = shared_wait_slot(state);
		if (g == NO_GROUP)
			return NO_GROUP;
		pg_read_barrier();
		if (lay->slot_value[i] == value)
			return g;
	}
	return NO_GROUP;
}

/* The group of the NULL key. */
static uint32
shared_null_group(SharedGroupsHeader *h, SharedGroupsLayout *lay, int64 row)
{
	uint32		expected = SLOT_EMPTY;
	uint32		g;

	if (pg_atomic_compare_exchange_u32(&h->null_group, &expected, SLOT_BUSY))
	{
		g = shared_new_group(h, lay, row);
		pg_write_barrier();
		pg_atomic_write_u32(&h->null_group, g == NO_GROUP ? SLOT_FAILED : g);
		return g;
	}
	if (expected == SLOT_BUSY || expected == SLOT_FAILED)
		return shared_wait_slot(&h->null_group);
	return expected;
}

/*
 * Number rows [begin, end) of the inner side into the shared table, as
 * gpujoin_agg_groups.c's side_number_by_value numbers them.  False where
 * a row is deferred or a group fails.
 */
static bool
shared_number_rows(SharedGroupsHeader *h, SharedGroupsLayout *lay, int64 begin, int64 end,
				   const GjProgram *program, const HostDatumColumn *col, int type,
				   const GjKeyColumns var_cols[2])
{
	int64		row;

	for (row = begin; row < end; row++)
	{
		int64		value;
		bool		isnull;
		uint32		g;

		if ((row & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!gpujoin_agg_group_value_of_row(program, col, type, var_cols, row, &value, &isnull))
			return false;
		g = isnull ? shared_null_group(h, lay, row) : shared_group_of(h, lay, value, row);
		if (g == NO_GROUP)
			return false;
		lay->row_group[row] = g;
	}
	return true;
}

/*
 * side_number for the inner side (gpujoin_agg_groups.c), whose one key has
 * device type type (-1: none that side_number_by_value takes), numbered
 * together with the other processes in the room after the shared side:
 * false where it is not, the caller numbers the side itself then.
 */
bool
gpujoin_agg_groups_number_shared(GpuJoinAggGroups *groups, GpuJoinState *gjs,
								 const GjKeyColumns var_cols[2], int type)
{
	const GpuJoinAggInfo *info = groups->info;
	GjAggSideGroups *sg = &groups->side[GJ_SIDE_INNER];
	HostSideBuffer *buf = &gjs->inner_buf;
	Size		len;
	char	   *extra = (char *) gpujoin_shared_inner_extra(gjs, &len);
	SharedGroupsHeader *h = (SharedGroupsHeader *) extra;
	SharedGroupsLayout lay;
	const HostDatumColumn *col = NULL;
	uint64		done;
	uint64		last_done;
	bool		failed;
	int			quiet_ms = 0;
	int			k;
	uint32		ngroups;

	if (extra == NULL || len < MAXALIGN(sizeof(SharedGroupsHeader)) || sg->nkeys != 1 ||
		type < 0 || h->magic != SHARED_GROUPS_MAGIC)
		return false;
	/* the header's fields were written before its magic */
	pg_read_barrier();
	if (h->nrows != buf->nrows ||
		h->max_groups < 1 || h->max_groups > SHARED_GROUPS_MAX ||
		h->nchunks != (h->nrows + SHARED_GROUPS_CHUNK - 1) / SHARED_GROUPS_CHUNK)
		return false;
	shared_groups_layout(extra, h->nrows, h->max_groups, h->mask, &lay);
	if (lay.size > len)
		return false;
	k = sg->keys[0];
	if (info->group_scan[k] >= 0)
		col = buf->cols + gjs->scan_cols[info->group_scan[k]];

	/* the chunks no process took yet */
	while (pg_atomic_read_u32(&h->failed) == 0)
	{
		uint64		c = pg_atomic_fetch_add_u64(&h->next_chunk, 1);
		int64		begin = (int64) c * SHARED_GROUPS_CHUNK;

		if (c >= (uint64) h->nchunks)
			break;
		if (!shared_number_rows(h, &lay, begin, Min(begin + SHARED_GROUPS_CHUNK, h->nrows),
								&info->group_program[k], col, type, var_cols))
			pg_atomic_write_u32(&h->failed, 1);
		if (pg_atomic_add_fetch_u64(&h->chunks_done, 1) == (uint64) h->nchunks ||
			pg_atomic_read_u32(&h->failed) != 0)
			ConditionVariableBroadcast(&h->cv);
	}

	/*
	 * Those other processes took: wait for them.  A process that numbers a
	 * chunk takes a few ms; one that made no progress for WAIT_MS is taken
	 * to be gone (its ERROR ends the query), and this one numbers the side
	 * itself meanwhile.  A process sets failed before it counts its chunk
	 * done (a full barrier), so once every chunk is done, failed is read
	 * after a read barrier, as are the rows' groups and the groups' rows.
	 */
	last_done = pg_atomic_read_u64(&h->chunks_done);
	ConditionVariablePrepareToSleep(&h->cv);
	for (;;)
	{
		done = pg_atomic_read_u64(&h->chunks_done);
		pg_read_barrier();
		failed = pg_atomic_read_u32(&h->failed) != 0;
		if (done >= (uint64) h->nchunks || failed)
			break;
		if (!ConditionVariableTimedSleep(&h->cv, SLEEP_MS, PG_WAIT_EXTENSION))
			continue;
		quiet_ms = done == last_done ? quiet_ms + SLEEP_MS : 0;
		last_done = done;
		if (quiet_ms >= WAIT_MS)
			break;
	}
	ConditionVariableCancelSleep();
	if (done < (uint64) h->nchunks || failed)
		return false;
	ngroups = pg_atomic_read_u32(&h->ngroups);
	if ((int64) ngroups > h->max_groups)
		return false;
	sg->row_group = lay.row_group;
	sg->first_row_cap = Max(ngroups, 1);
	sg->first_row = MemoryContextAllocHuge(groups->cxt, sizeof(int64) * sg->first_row_cap);
	memcpy(sg->first_row, lay.first_row, sizeof(int64) * ngroups);
	sg->ngroups = ngroups;
	sg->shared = true;
	return true;
}
