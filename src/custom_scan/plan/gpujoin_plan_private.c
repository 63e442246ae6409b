/*-------------------------------------------------------------------------
 *
 * gpujoin_plan_private.c
 *	  Moves GpuJoinPlanInfo and GpuJoinAggInfo in and out of
 *	  CustomScan.custom_private, and builds a GpuJoin path's custom_private.
 *
 * The planner (gpujoin_plan.c, gpujoin_agg_path.c) serialises, the executor
 * (gpujoin_open.c, gpujoin_agg_exec.c) deserialises; this file is the only
 * code that knows what is inside the entries whose positions
 * gpujoin_plan_private.h names.  Each entry is written and read by a pair
 * of functions next to each other, so that the two stay in step.
 *
 * custom_private must be a tree of Nodes that copyObject(), outfuncs and
 * readfuncs understand, so everything is flattened into integer lists.  A
 * device instruction becomes five integers: op, type, arg and the two 32-bit
 * halves of its 64-bit constant.  The host hashing of key columns (hash
 * function and collation OIDs) travels as OID lists, a GROUP BY's operators
 * and collations as integers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "nodes/value.h"

#include "gpujoin.h"
#include "custom_scan/agg/gpujoin_agg.h"
#include "custom_scan/plan/gpujoin_plan_private.h"

/* The list of one device instruction. */
typedef enum InstrField
{
	INSTR_OP,
	INSTR_TYPE,
	INSTR_ARG,
	INSTR_IMM_HIGH,				/* bits 63..32 of the constant */
	INSTR_IMM_LOW				/* bits 31..0 */
} InstrField;

/* GJ_PRIVATE_HEAD */
typedef enum HeadField
{
	HEAD_ALGORITHM,
	HEAD_FILTER_NEEDED,
	HEAD_JOINTYPE
} HeadField;

/* GJ_PRIVATE_KEY_COLUMNS and GJ_PRIVATE_KEY_HASHES: two lists per side */
typedef enum KeyField
{
	KEY_OUTER_FIRST,			/* attnos, or hash functions */
	KEY_OUTER_SECOND,			/* types, or collations */
	KEY_INNER_FIRST,
	KEY_INNER_SECOND
} KeyField;

/* GJ_PRIVATE_SCAN_COLUMNS */
typedef enum ScanField
{
	SCAN_SIDES,
	SCAN_ATTNOS,
	SCAN_KEYS
} ScanField;

/* GJ_PRIVATE_SPECS, and the two lists it holds */
typedef enum SpecsField
{
	SPECS_RANGE,
	SPECS_EQUI
} SpecsField;

typedef enum RangeField
{
	RANGE_HEAD,					/* (inner_col, cls, lo_inclusive, hi_inclusive) */
	RANGE_LO_PROGRAM,
	RANGE_HI_PROGRAM
} RangeField;

typedef enum RangeHeadField
{
	RANGE_HEAD_INNER_COL,
	RANGE_HEAD_CLS,
	RANGE_HEAD_LO_INCLUSIVE,
	RANGE_HEAD_HI_INCLUSIVE
} RangeHeadField;

typedef enum EquiField
{
	EQUI_NKEYS,					/* list_make1_int(nkeys) */
	EQUI_OUTER_COLS,
	EQUI_INNER_COLS,
	EQUI_CLASSES
} EquiField;

/* GJ_PRIVATE_BAND_GUARD: (active, inner_col), then one list per term */
typedef enum GuardField
{
	GUARD_ACTIVE,
	GUARD_INNER_COL
} GuardField;

typedef enum GuardTermField
{
	TERM_TYPE,
	TERM_INNER_SIGN,
	TERM_OUTER_COL,
	TERM_OUTER_SIGN,
	TERM_OFFSET_HIGH,
	TERM_OFFSET_LOW,
	TERM_STRICT_MIN
} GuardTermField;

/* GJ_AGG_PRIVATE_ARGS: each argument column's ((side, type), program) */
typedef enum AggArgField
{
	AGG_ARG_HEAD,
	AGG_ARG_PROGRAM
} AggArgField;

/* ---- device programs and column arrays ---- */

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

/* Fills instrs (at most GJ_MAX_INSTRS) and returns how many there are. */
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
		in->op = list_nth_int(fields, INSTR_OP);
		in->type = list_nth_int(fields, INSTR_TYPE);
		in->arg = list_nth_int(fields, INSTR_ARG);
		in->imm = (int64) (((uint64) (uint32) list_nth_int(fields, INSTR_IMM_HIGH) << 32) |
						   (uint64) (uint32) list_nth_int(fields, INSTR_IMM_LOW));
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

/* ---- GJ_PRIVATE_SPECS: the keys of the sort-merge and hash algorithms ---- */

static List *
specs_to_list(const GjRangeSpec *r, const GjEquiSpec *e)
{
	List	   *range;
	List	   *equi;

	range = list_make3(list_make4_int(r->inner_col, r->cls, r->lo_inclusive, r->hi_inclusive),
					   program_to_list(r->lo_instrs, r->lo_ninstrs),
					   program_to_list(r->hi_instrs, r->hi_ninstrs));
	equi = list_make4(list_make1_int(e->nkeys),
					  cols_to_list(e->outer_cols, e->nkeys),
					  cols_to_list(e->inner_cols, e->nkeys),
					  cols_to_list(e->cls, e->nkeys));
	return list_make2(range, equi);
}

static void
list_to_specs(List *specs, GjRangeSpec *r, GjEquiSpec *e)
{
	List	   *range = list_nth(specs, SPECS_RANGE);
	List	   *range_head = list_nth(range, RANGE_HEAD);
	List	   *equi = list_nth(specs, SPECS_EQUI);

	r->inner_col = list_nth_int(range_head, RANGE_HEAD_INNER_COL);
	r->cls = list_nth_int(range_head, RANGE_HEAD_CLS);
	r->lo_inclusive = list_nth_int(range_head, RANGE_HEAD_LO_INCLUSIVE);
	r->hi_inclusive = list_nth_int(range_head, RANGE_HEAD_HI_INCLUSIVE);
	r->lo_ninstrs = list_to_program(list_nth(range, RANGE_LO_PROGRAM), r->lo_instrs);
	r->hi_ninstrs = list_to_program(list_nth(range, RANGE_HI_PROGRAM), r->hi_instrs);

	e->nkeys = linitial_int(list_nth(equi, EQUI_NKEYS));
	list_to_cols(list_nth(equi, EQUI_OUTER_COLS), e->outer_cols);
	list_to_cols(list_nth(equi, EQUI_INNER_COLS), e->inner_cols);
	list_to_cols(list_nth(equi, EQUI_CLASSES), e->cls);
}

/* ---- GJ_PRIVATE_BAND_GUARD ---- */

static List *
guard_to_list(const GpuJoinBandGuard *g)
{
	List	   *terms = NIL;
	int			t;

	for (t = 0; t < g->nterms; t++)
	{
		const GpuJoinGuardTerm *term = &g->terms[t];
		uint64		offset = (uint64) term->offset;

		List	   *fields;

		/* in GuardTermField order */
		fields = list_make5_int(term->type, term->inner_sign, term->outer_col,
								term->outer_sign, (int32) (offset >> 32));
		fields = lappend_int(fields, (int32) (offset & 0xffffffff));
		fields = lappend_int(fields, term->strict_min);
		terms = lappend(terms, fields);
	}
	return lcons(list_make2_int(g->active, g->inner_col), terms);
}

static void
list_to_guard(List *guard, GpuJoinBandGuard *g)
{
	List	   *head = linitial(guard);
	ListCell   *lc;

	memset(g, 0, sizeof(GpuJoinBandGuard));
	g->active = list_nth_int(head, GUARD_ACTIVE);
	g->inner_col = list_nth_int(head, GUARD_INNER_COL);
	for_each_from(lc, guard, 1)
	{
		List	   *fields = lfirst(lc);
		GpuJoinGuardTerm *term = &g->terms[g->nterms++];

		Assert(g->nterms <= GJ_BAND_GUARD_MAX_TERMS);
		term->type = list_nth_int(fields, TERM_TYPE);
		term->inner_sign = list_nth_int(fields, TERM_INNER_SIGN);
		term->outer_col = list_nth_int(fields, TERM_OUTER_COL);
		term->outer_sign = list_nth_int(fields, TERM_OUTER_SIGN);
		term->offset = (int64) (((uint64) (uint32) list_nth_int(fields, TERM_OFFSET_HIGH) << 32) |
								(uint64) (uint32) list_nth_int(fields, TERM_OFFSET_LOW));
		term->strict_min = list_nth_int(fields, TERM_STRICT_MIN);
	}
}

/* ---- GpuJoinPlanInfo: the first GJ_PRIVATE_JOIN_LENGTH entries ---- */

List *
gpujoin_plan_info_serialize(const GpuJoinPlanInfo *info)
{
	List	   *private = NIL;

	/* in GpuJoinPrivateIndex order */
	private = lappend(private, list_make3_int(info->algorithm, info->filter_needed,
											  info->jointype));
	private = lappend(private, list_make4(info->outer_key_attnos, info->outer_key_types,
										  info->inner_key_attnos, info->inner_key_types));
	private = lappend(private, list_make3(info->scan_sides, info->scan_attnos,
										  info->scan_keys));
	private = lappend(private, program_to_list(info->program.instrs, info->program.ninstrs));
	private = lappend(private, specs_to_list(&info->range, &info->equi));
	private = lappend(private, guard_to_list(&info->band_guard));
	private = lappend(private, list_make4(info->outer_key_hashfuncs, info->outer_key_collations,
										  info->inner_key_hashfuncs, info->inner_key_collations));
	Assert(list_length(private) == GJ_PRIVATE_JOIN_LENGTH);
	return private;
}

/* Reads a GpuJoin's custom_private, or the join part of a GpuJoinAgg's. */
void
gpujoin_plan_info_deserialize(List *private, GpuJoinPlanInfo *info)
{
	List	   *head = list_nth(private, GJ_PRIVATE_HEAD);
	List	   *keys = list_nth(private, GJ_PRIVATE_KEY_COLUMNS);
	List	   *scan = list_nth(private, GJ_PRIVATE_SCAN_COLUMNS);
	List	   *hashes = list_nth(private, GJ_PRIVATE_KEY_HASHES);

	Assert(list_length(private) >= GJ_PRIVATE_JOIN_LENGTH);

	memset(info, 0, sizeof(GpuJoinPlanInfo));
	info->algorithm = list_nth_int(head, HEAD_ALGORITHM);
	info->filter_needed = list_nth_int(head, HEAD_FILTER_NEEDED);
	info->jointype = list_nth_int(head, HEAD_JOINTYPE);
	info->outer_key_attnos = list_nth(keys, KEY_OUTER_FIRST);
	info->outer_key_types = list_nth(keys, KEY_OUTER_SECOND);
	info->inner_key_attnos = list_nth(keys, KEY_INNER_FIRST);
	info->inner_key_types = list_nth(keys, KEY_INNER_SECOND);
	info->scan_sides = list_nth(scan, SCAN_SIDES);
	info->scan_attnos = list_nth(scan, SCAN_ATTNOS);
	info->scan_keys = list_nth(scan, SCAN_KEYS);
	info->program.ninstrs = list_to_program(list_nth(private, GJ_PRIVATE_PROGRAM),
											info->program.instrs);
	list_to_specs(list_nth(private, GJ_PRIVATE_SPECS), &info->range, &info->equi);
	list_to_guard(list_nth(private, GJ_PRIVATE_BAND_GUARD), &info->band_guard);
	info->outer_key_hashfuncs = list_nth(hashes, KEY_OUTER_FIRST);
	info->outer_key_collations = list_nth(hashes, KEY_OUTER_SECOND);
	info->inner_key_hashfuncs = list_nth(hashes, KEY_INNER_FIRST);
	info->inner_key_collations = list_nth(hashes, KEY_INNER_SECOND);
}

/* ---- GpuJoinAggInfo: the entry at GJ_PRIVATE_AGG_INFO ---- */

List *
gpujoin_agg_info_serialize(const GpuJoinAggInfo *info)
{
	List	   *aggs = NIL;
	List	   *args = NIL;
	List	   *vars = NIL;
	List	   *groups = NIL;
	int			i,
				side;

	for (i = 0; i < info->naggs; i++)
		aggs = lappend(aggs, list_make2_int(info->agg_kind[i], info->agg_arg[i]));
	for (i = 0; i < info->nargs; i++)
		args = lappend(args, list_make2(list_make2_int(info->arg_side[i], info->arg_type[i]),
										program_to_list(info->arg_program[i].instrs,
														info->arg_program[i].ninstrs)));
	for (side = 0; side < 2; side++)
	{
		List	   *cols = NIL;

		for (i = 0; i < info->nvars[side]; i++)
			cols = lappend(cols, list_make2_int(info->var_scan[side][i], info->var_type[side][i]));
		vars = lappend(vars, cols);
	}
	for (i = 0; i < info->ngroup; i++)
		groups = lappend(groups,
						 list_make2(list_make5_int(info->group_scan[i], info->group_type[i],
												   (int) info->group_eqop[i],
												   (int) info->group_collation[i],
												   info->group_side[i]),
									program_to_list(info->group_program[i].instrs,
													info->group_program[i].ninstrs)));
	/* in GpuJoinAggPrivateIndex order */
	return list_make5(aggs, args, vars, groups,
					  list_make2_int(info->dominance, info->partial));
}

/* private is the entry at GJ_PRIVATE_AGG_INFO, not the whole custom_private */
void
gpujoin_agg_info_deserialize(List *private, GpuJoinAggInfo *info)
{
	ListCell   *lc;
	int			side;

	Assert(list_length(private) == GJ_AGG_PRIVATE_LENGTH);

	memset(info, 0, sizeof(GpuJoinAggInfo));
	foreach(lc, (List *) list_nth(private, GJ_AGG_PRIVATE_AGGS))
	{
		info->agg_kind[info->naggs] = linitial_int(lfirst(lc));
		info->agg_arg[info->naggs++] = lsecond_int(lfirst(lc));
	}
	foreach(lc, (List *) list_nth(private, GJ_AGG_PRIVATE_ARGS))
	{
		List	   *head = list_nth(lfirst(lc), AGG_ARG_HEAD);
		GjProgram  *program = &info->arg_program[info->nargs];

		info->arg_side[info->nargs] = linitial_int(head);
		info->arg_type[info->nargs] = lsecond_int(head);
		program->ninstrs = list_to_program(list_nth(lfirst(lc), AGG_ARG_PROGRAM),
										   program->instrs);
		info->nargs++;
	}
	for (side = 0; side < 2; side++)
	{
		foreach(lc, (List *) list_nth(list_nth(private, GJ_AGG_PRIVATE_VARS), side))
		{
			info->var_scan[side][info->nvars[side]] = linitial_int(lfirst(lc));
			info->var_type[side][info->nvars[side]++] = lsecond_int(lfirst(lc));
		}
	}
	foreach(lc, (List *) list_nth(private, GJ_AGG_PRIVATE_GROUPS))
	{
		List	   *head = linitial(lfirst(lc));
		GjProgram  *program = &info->group_program[info->ngroup];

		info->group_scan[info->ngroup] = linitial_int(head);
		info->group_type[info->ngroup] = lsecond_int(head);
		info->group_eqop[info->ngroup] = (Oid) lthird_int(head);
		info->group_collation[info->ngroup] = (Oid) lfourth_int(head);
		info->group_side[info->ngroup] = list_nth_int(head, 4);
		program->ninstrs = list_to_program(lsecond(lfirst(lc)), program->instrs);
		info->ngroup++;
	}
	info->dominance = linitial_int(list_nth(private, GJ_AGG_PRIVATE_METHOD)) != 0;
	info->partial = lsecond_int(list_nth(private, GJ_AGG_PRIVATE_METHOD)) != 0;
}

/* ---- CustomPath.custom_private ---- */

/* The custom_private of a GpuJoin or GpuJoinAgg path: GpuJoinPathPrivateIndex. */
List *
gpujoin_path_private_make(List *device_rinfos, List *host_rinfos, List *join_rinfos,
						  List *filter_rinfos, JoinType jointype, int algorithm)
{
	List	   *private = list_make5(device_rinfos, host_rinfos, join_rinfos,
									 filter_rinfos, list_make2_int(jointype, algorithm));

	Assert(list_length(private) == GJ_PATH_PRIVATE_LENGTH);
	return private;
}

JoinType
gpujoin_path_private_jointype(List *path_private)
{
	return (JoinType) linitial_int(list_nth(path_private, GJ_PATH_JOINTYPE));
}

/*
 * The algorithm the path was costed with (a GjAlgorithm, or GJ_ALGO_AUTO for
 * the chooser's own pick): the plan compiles its keys for the same one.
 */
int
gpujoin_path_private_algorithm(List *path_private)
{
	return lsecond_int(list_nth(path_private, GJ_PATH_JOINTYPE));
}
