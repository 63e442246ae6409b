/*-------------------------------------------------------------------------
 *
 * side_drain.c
 *	  Draining one side of a join into its host buffer: through the
 *	  columnar heap reader (heap_reader.c) where the child is a Seq Scan of
 *	  a heap table, else row by row from the child plan, the side spilling
 *	  to temporary files past its share of gpujoin.max_host_memory
 *	  (spill.c).
 *
 * Called by the executor (gpujoin_open.c) for each side it drains, and by
 * shared_inner.c for a parallel join's inner side; it calls nothing above
 * host_chunking/ (staging.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "portability/instr_time.h"

#include "gpujoin.h"
#include "host_chunking/staging_internal.h"

static void drain_child(GpuJoinState *gjs, int side, PlanState *child, GjHeapReader *reader);

/*
 * Drain one side into its buffer: all of it (where the inner side is drained
 * in parallel, from its whole plan, the third child).
 */
void
gpujoin_drain_side(GpuJoinState *gjs, int side)
{
	if (side == GJ_SIDE_INNER && gjs->inner_whole_ps != NULL)
		drain_child(gjs, side, gjs->inner_whole_ps, gjs->inner_whole_reader);
	else if (side == GJ_SIDE_INNER)
		drain_child(gjs, side, gjs->inner_ps, gjs->inner_reader);
	else
		drain_child(gjs, side, gjs->outer_ps, gjs->outer_reader);
}

/*
 * Drain this process's share of an inner side drained in parallel: its
 * partial plan, the second child (shared_inner.c).
 */
void
gpujoin_drain_inner_share(GpuJoinState *gjs)
{
	Assert(gjs->inner_whole_ps != NULL);
	drain_child(gjs, GJ_SIDE_INNER, gjs->inner_ps, gjs->inner_reader);
}

/*
 * Drain a child into its side's buffer: through its columnar heap reader if
 * it has one, else row by row from the child plan.
 */
static void
drain_child(GpuJoinState *gjs, int side, PlanState *child, GjHeapReader *reader)
{
	bool		outer = side == GJ_SIDE_OUTER;
	HostSideBuffer *buf = outer ? &gjs->outer_buf : &gjs->inner_buf;
	int64		other_side_bytes = outer ? gjs->inner_buf.bytes_stored : gjs->outer_buf.bytes_stored;
	GjHeapReaderCounters before,
				after;
	instr_time	start,
				end;
	GjWallPart	part = gpujoin_wall_switch(gjs, GJ_WALL_DRAIN);

	INSTR_TIME_SET_CURRENT(start);
	gpujoin_spill_before_drain(gjs, side);
	if (reader != NULL)
		gj_heap_reader_counters(reader, &before);
	if (reader != NULL && gj_heap_reader_drain(reader, buf, other_side_bytes))
	{
		gj_heap_reader_counters(reader, &after);
		gjs->counters.input_pages[outer ? 0 : 1] += after.pages - before.pages;
		gjs->counters.input_read_ms[outer ? 0 : 1] += after.read_ms - before.read_ms;
		gjs->counters.input_decode_ms[outer ? 0 : 1] += after.decode_ms - before.decode_ms;
		gjs->counters.input_store_ms[outer ? 0 : 1] += after.store_ms - before.store_ms;
	}
	else
	{
		for (;;)
		{
			TupleTableSlot *slot;

			CHECK_FOR_INTERRUPTS();
			slot = ExecProcNode(child);
			if (TupIsNull(slot))
				break;
			gj_host_buffer_append(buf, slot);
			gj_host_buffer_check_limit(buf, other_side_bytes);
		}
		gjs->counters.child_plan_drains[outer ? 0 : 1]++;
	}
	gpujoin_spill_after_drain(gjs, side);
	buf->complete = true;
	if (outer)
		gjs->counters.outer_drained += buf->nrows + gjs->outer_spill.rows;
	else
		gjs->counters.inner_drained += buf->nrows + gjs->inner_spill.rows;
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	gjs->counters.input_ms[outer ? 0 : 1] += INSTR_TIME_GET_MILLISEC(end);
	gjs->counters.drain_ms += INSTR_TIME_GET_MILLISEC(end);
	(void) gpujoin_wall_switch(gjs, part);
}
