/*-------------------------------------------------------------------------
 *
 * tile_planner.c
 *	  Cuts the join matrix into tiles that fit the device memory budget.
 *
 * Following Bellas & Gounaris (section 3.3.1): a quarter of the budget holds
 * the match buffer, the rest the key columns of one outer tile and one inner
 * tile.  When everything fits there is one tile; when one side is small it
 * stays whole and the other is cut into strips; otherwise both are cut into
 * squares of equal bytes.  The match buffer must hold every pair of one outer
 * row, so the inner tile never has more rows than the buffer has pairs.
 *
 * Tiles are handed out inner-major: all outer tiles against inner tile 0,
 * then against inner tile 1, so an inner tile is copied to the device once.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "host_chunking/tile_planner.h"

/* Per-pair bytes of the match buffer: outer and inner row numbers. */
#define MATCH_PAIR_BYTES	(2 * sizeof(uint32))

/*
 * Per-outer-row scratch on the device: a match count and its prefix-sum
 * offset, used by count-then-write kernels.
 */
#define OUTER_ROW_SCRATCH_BYTES	(2 * sizeof(uint32))

void
gj_tile_schedule_plan(TileSchedule *sched, int64 outer_rows, int outer_row_bytes,
				   int64 inner_rows, int inner_row_bytes, int64 budget_bytes,
				   int64 max_matches)
{
	int64		match_capacity;
	int64		input_budget;
	int64		outer_bytes;
	int64		inner_bytes;
	int64		outer_tile;
	int64		inner_tile;

	memset(sched, 0, sizeof(TileSchedule));
	sched->outer_rows = outer_rows;
	sched->inner_rows = inner_rows;

	outer_row_bytes += OUTER_ROW_SCRATCH_BYTES;
	inner_row_bytes = Max(inner_row_bytes, 1);
	outer_bytes = outer_rows * outer_row_bytes;
	inner_bytes = inner_rows * inner_row_bytes;

	match_capacity = Max(budget_bytes / 4 / (int64) MATCH_PAIR_BYTES, 1);
	input_budget = Max(budget_bytes - match_capacity * (int64) MATCH_PAIR_BYTES, 2);

	if (outer_bytes + inner_bytes <= input_budget)
	{
		outer_tile = outer_rows;
		inner_tile = inner_rows;
	}
	else if (inner_bytes <= input_budget / 2)
	{
		inner_tile = inner_rows;
		outer_tile = (input_budget - inner_bytes) / outer_row_bytes;
	}
	else if (outer_bytes <= input_budget / 2)
	{
		outer_tile = outer_rows;
		inner_tile = (input_budget - outer_bytes) / inner_row_bytes;
	}
	else
	{
		outer_tile = input_budget / 2 / outer_row_bytes;
		inner_tile = input_budget / 2 / inner_row_bytes;
	}

	/* never more than 2^31 - 1 pairs in one buffer (row numbers are 31 bits) */
	match_capacity = Min(match_capacity, (int64) GJ_MAX_SIDE_ROWS);
	/* nor more than the buffer the matches travel back in holds (the service's) */
	if (max_matches > 0)
		match_capacity = Min(match_capacity, max_matches);
	/* a whole outer row's matches must fit the match buffer */
	inner_tile = Min(inner_tile, match_capacity);
	outer_tile = Max(outer_tile, 1);
	inner_tile = Max(inner_tile, 1);

	sched->outer_tile_rows = outer_tile;
	sched->inner_tile_rows = inner_tile;
	sched->match_capacity = match_capacity;
	sched->n_outer_tiles = outer_rows == 0 ? 0 : (outer_rows + outer_tile - 1) / outer_tile;
	sched->n_inner_tiles = inner_rows == 0 ? 0 : (inner_rows + inner_tile - 1) / inner_tile;
	sched->next_tile = 0;
}

/*
 * The device bytes a planned schedule fills: one outer tile and one inner
 * tile of key columns (with the outer rows' scratch) and the match buffer.
 * Less than the budget when both sides fit whole and the match buffer is
 * capped by max_matches; the GPU service reserves this much, not the budget.
 */
int64
gj_tile_schedule_bytes(const TileSchedule *sched, int outer_row_bytes,
					   int inner_row_bytes)
{
	return Min(sched->outer_tile_rows, sched->outer_rows) *
		(int64) (outer_row_bytes + OUTER_ROW_SCRATCH_BYTES) +
		Min(sched->inner_tile_rows, sched->inner_rows) * (int64) Max(inner_row_bytes, 1) +
		sched->match_capacity * (int64) MATCH_PAIR_BYTES;
}

bool
gj_tile_schedule_next(TileSchedule *sched, GjTile *tile)
{
	int64		ntiles = sched->n_outer_tiles * sched->n_inner_tiles;
	int64		inner_idx,
				outer_idx;

	if (sched->next_tile >= ntiles)
		return false;
	inner_idx = sched->next_tile / sched->n_outer_tiles;
	outer_idx = sched->next_tile % sched->n_outer_tiles;
	sched->next_tile++;

	tile->outer_begin = outer_idx * sched->outer_tile_rows;
	tile->outer_end = Min(tile->outer_begin + sched->outer_tile_rows, sched->outer_rows);
	tile->inner_begin = inner_idx * sched->inner_tile_rows;
	tile->inner_end = Min(tile->inner_begin + sched->inner_tile_rows, sched->inner_rows);
	return true;
}

void
gj_tile_schedule_restart(TileSchedule *sched)
{
	sched->next_tile = 0;
}
