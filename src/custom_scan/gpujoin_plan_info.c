/*-------------------------------------------------------------------------
 *
 * gpujoin_plan_info.c
 *	  Moves GpuJoinPlanInfo in and out of CustomScan.custom_private.
 *
 * custom_private must be a tree of Nodes that copyObject(), outfuncs and
 * readfuncs understand, so everything is flattened into integer lists.  A
 * device instruction becomes five integers: op, type, arg and the two 32-bit
 * halves of its 64-bit constant.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "nodes/value.h"

#include "gpujoin.h"

List *
gpujoin_plan_info_serialize(const GpuJoinPlanInfo *info)
{
	List	   *program = NIL;
	int			i;

	for (i = 0; i < info->program.ninstrs; i++)
	{
		const GjInstr *in = &info->program.instrs[i];
		uint64		imm = (uint64) in->imm;

		program = lappend(program,
						  list_make5_int(in->op, in->type, in->arg,
										 (int32) (imm >> 32), (int32) (imm & 0xffffffff)));
	}

	return list_make5(list_make1_int(info->algorithm),
					  list_make4(info->outer_key_attnos, info->outer_key_types,
								 info->inner_key_attnos, info->inner_key_types),
					  info->scan_sides,
					  info->scan_attnos,
					  program);
}

void
gpujoin_plan_info_deserialize(List *private, GpuJoinPlanInfo *info)
{
	List	   *keys = lsecond(private);
	ListCell   *lc;
	int			n = 0;

	memset(info, 0, sizeof(GpuJoinPlanInfo));
	info->algorithm = linitial_int(linitial(private));
	info->outer_key_attnos = linitial(keys);
	info->outer_key_types = lsecond(keys);
	info->inner_key_attnos = lthird(keys);
	info->inner_key_types = lfourth(keys);
	info->scan_sides = lthird(private);
	info->scan_attnos = lfourth(private);

	foreach(lc, (List *) list_nth(private, 4))
	{
		List	   *fields = lfirst(lc);
		GjInstr    *in = &info->program.instrs[n++];

		Assert(n <= GJ_MAX_INSTRS);
		in->op = linitial_int(fields);
		in->type = lsecond_int(fields);
		in->arg = lthird_int(fields);
		in->imm = (int64) (((uint64) (uint32) lfourth_int(fields) << 32) |
						   (uint64) (uint32) list_nth_int(fields, 4));
	}
	info->program.ninstrs = n;
}
