/*-------------------------------------------------------------------------
 *
 * gpujoin_plan_info.c
 *	  Moves GpuJoinPlanInfo in and out of CustomScan.custom_private.
 *
 * custom_private must be a tree of Nodes that copyObject(), outfuncs and
 * readfuncs understand, so everything is flattened into integer lists.  A
 * device instruction becomes five integers: op, type, arg and the two 32-bit
 * halves of its 64-bit constant.  The host hashing of key columns (hash
 * function and collation OIDs) travels as OID lists.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "nodes/value.h"

#include "gpujoin.h"

static List *
program_to_list(const GjInstr *instrs, int ninstrs)
{
	List	   *program = NIL;
	int			i;

	for (i = 0; i < ninstrs; i++)
	{
		const GjInstr *in = &instrs[i];
		uint64		imm = (uint64) in->imm;

		program = lappend(program,
						  list_make5_int(in->op, in->type, in->arg,
										 (int32) (imm >> 32), (int32) (imm & 0xffffffff)));
	}
	return program;
}

static int
list_to_program(List *program, GjInstr *instrs)
{
	ListCell   *lc;
	int			n = 0;

	foreach(lc, program)
	{
		List	   *fields = lfirst(lc);
		GjInstr    *in = &instrs[n++];

		Assert(n <= GJ_MAX_INSTRS);
		in->op = linitial_int(fields);
		in->type = lsecond_int(fields);
		in->arg = lthird_int(fields);
		in->imm = (int64) (((uint64) (uint32) lfourth_int(fields) << 32) |
						   (uint64) (uint32) list_nth_int(fields, 4));
	}
	return n;
}

static List *
cols_to_list(const int32 *cols, int n)
{
	List	   *l = NIL;
	int			i;

	for (i = 0; i < n; i++)
		l = lappend_int(l, cols[i]);
	return l;
}

static void
list_to_cols(List *l, int32 *cols)
{
	ListCell   *lc;

	foreach(lc, l)
		cols[foreach_current_index(lc)] = lfirst_int(lc);
}

List *
gpujoin_plan_info_serialize(const GpuJoinPlanInfo *info)
{
	const GjRangeSpec *r = &info->range;
	const GjEquiSpec *e = &info->equi;
	const GpuJoinBandGuard *g = &info->band_guard;
	List	   *range;
	List	   *equi;
	List	   *private;

	range = list_make3(list_make4_int(r->inner_col, r->cls, r->lo_inclusive, r->hi_inclusive),
					   program_to_list(r->lo_instrs, r->lo_ninstrs),
					   program_to_list(r->hi_instrs, r->hi_ninstrs));
	equi = list_make4(list_make1_int(e->nkeys),
					  cols_to_list(e->outer_cols, e->nkeys),
					  cols_to_list(e->inner_cols, e->nkeys),
					  cols_to_list(e->cls, e->nkeys));

	private = list_make5(list_make3_int(info->algorithm, info->filter_needed,
										info->jointype),
						 list_make4(info->outer_key_attnos, info->outer_key_types,
									info->inner_key_attnos, info->inner_key_types),
						 list_make2(info->scan_sides, info->scan_attnos),
						 program_to_list(info->program.instrs, info->program.ninstrs),
						 list_make2(range, equi));
	private = lappend(private, list_make5_int(g->active, g->outer_col, g->inner_col,
											  g->outer_minus_inner, g->diff_type));
	private = lappend(private, list_make4(info->outer_key_hashfuncs, info->outer_key_collations,
										  info->inner_key_hashfuncs, info->inner_key_collations));
	Assert(list_length(private) == GPUJOIN_PRIVATE_LENGTH);
	return private;
}

void
gpujoin_plan_info_deserialize(List *private, GpuJoinPlanInfo *info)
{
	List	   *keys = lsecond(private);
	List	   *scan = lthird(private);
	List	   *specs = list_nth(private, 4);
	List	   *range = linitial(specs);
	List	   *range_head = linitial(range);
	List	   *equi = lsecond(specs);
	List	   *guard = list_nth(private, 5);
	List	   *hashes = list_nth(private, 6);

	Assert(list_length(private) >= GPUJOIN_PRIVATE_LENGTH);

	memset(info, 0, sizeof(GpuJoinPlanInfo));
	info->algorithm = linitial_int(linitial(private));
	info->filter_needed = lsecond_int(linitial(private));
	info->jointype = lthird_int(linitial(private));
	info->outer_key_attnos = linitial(keys);
	info->outer_key_types = lsecond(keys);
	info->inner_key_attnos = lthird(keys);
	info->inner_key_types = lfourth(keys);
	info->scan_sides = linitial(scan);
	info->scan_attnos = lsecond(scan);
	info->program.ninstrs = list_to_program(lfourth(private), info->program.instrs);

	info->range.inner_col = linitial_int(range_head);
	info->range.cls = lsecond_int(range_head);
	info->range.lo_inclusive = lthird_int(range_head);
	info->range.hi_inclusive = lfourth_int(range_head);
	info->range.lo_ninstrs = list_to_program(lsecond(range), info->range.lo_instrs);
	info->range.hi_ninstrs = list_to_program(lthird(range), info->range.hi_instrs);

	info->equi.nkeys = linitial_int(linitial(equi));
	list_to_cols(lsecond(equi), info->equi.outer_cols);
	list_to_cols(lthird(equi), info->equi.inner_cols);
	list_to_cols(lfourth(equi), info->equi.cls);

	info->band_guard.active = linitial_int(guard);
	info->band_guard.outer_col = lsecond_int(guard);
	info->band_guard.inner_col = lthird_int(guard);
	info->band_guard.outer_minus_inner = lfourth_int(guard);
	info->band_guard.diff_type = list_nth_int(guard, 4);

	info->outer_key_hashfuncs = linitial(hashes);
	info->outer_key_collations = lsecond(hashes);
	info->inner_key_hashfuncs = lthird(hashes);
	info->inner_key_collations = lfourth(hashes);
}
