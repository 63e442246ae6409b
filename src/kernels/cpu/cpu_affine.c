/*-------------------------------------------------------------------------
 *
 * cpu_affine.c
 *	  The cpu backend's evaluator of the programs that are an AND of
 *	  integer compares whose operands are a column, a constant, or the sum
 *	  or difference of two of them ("r.a < s.a AND r.b > s.b AND r.a + s.b
 *	  > 0"): per pair a few loads and compares, without the interpreter's
 *	  stack and dispatch.  The sort-merge and hash steps evaluate a
 *	  program for every candidate pair (cpu_sorted.c), the program count
 *	  and the nested loop the rest of one after its leading compares
 *	  (cpu_program_count.c, cpu_nestloop.c).
 *
 * Exactly the interpreter's answers (gj_program_run_from): a sum or
 * difference that leaves its type's range (gj_int_arith) makes the pair
 * GJ_RESULT_RECHECK whatever the compares give, since the interpreter
 * stops there; an operand that is NULL makes its sum and its compare NULL,
 * and the AND is TRUE only where every compare is TRUE.  The cuda backend
 * keeps its own (compiled) kernels; the cpu backend's interpreter runs
 * every other program.
 *
 * On the 2-core machine, count(*) of rq (5k rows) and sq (20k) ON r.a <
 * s.a AND r.b > s.b AND r.a + s.b > 0 (bench_plan_quality.sh's three_qual,
 * serial): sort-merge 468 ms interpreted, 181 ms here; forced nested loop
 * 408 ms, 218 ms.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "cpu_internal.h"

/* an entry of the postfix stack while a program is read */
typedef struct AffineEntry
{
	bool		is_bool;		/* a compare's (or AND's) result */
	GjCpuAffineOperand operand; /* else: the value */
} AffineEntry;

/*
 * Read instrs[pc0, ninstrs), which start with depth0 boolean slots already
 * TRUE on the stack (the leading compares a prefilter tested), into aff;
 * false where the program is anything else.
 */
bool
gj_cpu_affine_init(GjCpuAffine *aff, const GjInstr *instrs, int ninstrs, int pc0, int depth0)
{
	AffineEntry stack[GJ_MAX_STACK];
	int			sp = 0;
	int			pc;

	memset(aff, 0, sizeof(GjCpuAffine));
	if (depth0 < 0 || depth0 > 1 || pc0 >= ninstrs)
		return false;
	for (; sp < depth0; sp++)
		stack[sp].is_bool = true;
	for (pc = pc0; pc < ninstrs; pc++)
	{
		const GjInstr *in = &instrs[pc];

		switch (in->op)
		{
			case GJOP_LOAD_OUTER:
			case GJOP_LOAD_INNER:
			case GJOP_CONST:
				if (sp == GJ_MAX_STACK)
					return false;
				stack[sp].is_bool = false;
				memset(&stack[sp].operand, 0, sizeof(GjCpuAffineOperand));
				stack[sp].operand.kind = in->op == GJOP_CONST ? GJ_AFFINE_CONST : GJ_AFFINE_COLUMN;
				stack[sp].operand.a.outer = in->op == GJOP_LOAD_OUTER;
				stack[sp].operand.a.col = in->arg;
				stack[sp].operand.a.value = in->imm;
				stack[sp].operand.a.is_const = in->op == GJOP_CONST;
				sp++;
				break;
			case GJOP_ADD:
			case GJOP_SUB:
				{
					GjCpuAffineOperand *x,
							   *y;

					if (sp < 2 || stack[sp - 1].is_bool || stack[sp - 2].is_bool ||
						(in->type != GJT_INT2 && in->type != GJT_INT4 && in->type != GJT_INT8))
						return false;
					x = &stack[sp - 2].operand;
					y = &stack[sp - 1].operand;
					if (x->kind == GJ_AFFINE_ARITH || y->kind == GJ_AFFINE_ARITH)
						return false;
					x->b = y->a;
					x->kind = GJ_AFFINE_ARITH;
					x->op = in->op;
					x->type = in->type;
					sp--;
					break;
				}
			case GJOP_AND:
				if (sp < 2 || !stack[sp - 1].is_bool || !stack[sp - 2].is_bool)
					return false;
				sp--;
				break;
			default:
				{
					GjCpuAffineTerm *t;

					/* a compare, GJOP_EQ .. GJOP_GE, of two integer operands */
					if (in->op < GJOP_EQ || in->op > GJOP_GE ||
						sp < 2 || stack[sp - 1].is_bool || stack[sp - 2].is_bool ||
						in->type != GJ_CLASS_INT || aff->nterms == GJ_CPU_AFFINE_MAX_TERMS)
						return false;
					t = &aff->terms[aff->nterms++];
					t->op = in->op;
					t->left = stack[sp - 2].operand;
					t->right = stack[sp - 1].operand;
					sp--;
					stack[sp - 1].is_bool = true;
					break;
				}
		}
	}
	aff->valid = sp == 1 && stack[0].is_bool && aff->nterms > 0;
	return aff->valid;
}
