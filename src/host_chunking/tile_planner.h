/*-------------------------------------------------------------------------
 *
 * tile_planner.h
 *	  Cuts the join matrix (outer rows x inner rows) into tiles whose key
 *	  columns and match buffer fit the device memory budget, and walks them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_TILE_PLANNER_H
#define GPUJOIN_TILE_PLANNER_H

#include "postgres.h"

#include "kernels/backend.h"

typedef struct TileSchedule
{
	int64		outer_rows;
	int64		inner_rows;
	int64		outer_tile_rows;
	int64		inner_tile_rows;
	int64		match_capacity; /* pairs; at least inner_tile_rows */
	int64		n_outer_tiles;
	int64		n_inner_tiles;
	int64		next_tile;		/* index of the next tile to hand out */
} TileSchedule;

extern void gj_tile_schedule_plan(TileSchedule *sched,
							   int64 outer_rows, int outer_row_bytes,
							   int64 inner_rows, int inner_row_bytes,
							   int64 budget_bytes, int64 max_matches);
extern int64 gj_tile_schedule_bytes(const TileSchedule *sched,
								   int outer_row_bytes, int inner_row_bytes);
extern bool gj_tile_schedule_next(TileSchedule *sched, GjTile *tile);
extern void gj_tile_schedule_restart(TileSchedule *sched);

#endif							/* GPUJOIN_TILE_PLANNER_H */
