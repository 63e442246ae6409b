/*-------------------------------------------------------------------------
 *
 * flat_program.c
 *	  A device program written out as straight-line C (flat_program.h).
 *
 * Each instruction becomes a statement or two over named slots: the slot
 * an instruction pushes is a variable pair vK (its int64 bits, a double's
 * bits for a float, as the interpreter's GjSlot union holds it) and nK
 * (its NULL flag), and "ok" gathers the steps' failures.  The helpers
 * below are the interpreter's functions written again over those
 * variables (gj_int_arith, gj_float_arith_ok, gj_float_cmp_holds, ...):
 * the same tests in the same order, so that a flat kernel gives
 * gj_program_run_from's answer for every pair.  kernel_test's cpu part
 * checks that, compiling the text with the host's compiler.
 *
 * As in the compiled kernels of compiled_count.cuh, every step runs
 * (straight-line code, no branch), even after one that failed: the answer
 * is then GJ_RESULT_RECHECK whatever the later steps compute, and no step
 * can trap on what a failed one left (a division tests its divisor first,
 * floats do not trap).  The text is short and has no templates: NVRTC's
 * front end and optimizer, most of a compile of compiled_count.cuh's
 * kernels, have little to do.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernels/compiled_args.h"
#include "kernels/shared/flat_program.h"

/*
 * The helpers: the interpreter's semantics over int64 bits.  Opcodes and
 * types are passed as literals, which the compilers fold.
 */
static const char flat_helpers[] =
	"#ifdef __CUDACC__\n"
	"#define GJF_FN static __device__ __forceinline__\n"
	"GJF_FN double gjf_d(int64_t b) { return __longlong_as_double(b); }\n"
	"GJF_FN int64_t gjf_b(double d) { return __double_as_longlong(d); }\n"
	"GJF_FN bool gjf_mul_ovf(int64_t a, int64_t b)\n"
	"{ return __mul64hi(a, b) != ((int64_t) ((uint64_t) a * (uint64_t) b) >> 63); }\n"
	"#else\n"
	"#define GJF_FN static inline\n"
	"GJF_FN double gjf_d(int64_t b) { double d; memcpy(&d, &b, sizeof(d)); return d; }\n"
	"GJF_FN int64_t gjf_b(double d) { int64_t b; memcpy(&b, &d, sizeof(b)); return b; }\n"
	"GJF_FN bool gjf_mul_ovf(int64_t a, int64_t b)\n"
	"{ int64_t r; return __builtin_mul_overflow(a, b, &r); }\n"
	"#endif\n"
	"GJF_FN bool gjf_isnan(double x)\n"
	"{ return (gjf_b(x) & 0x7fffffffffffffffLL) > 0x7ff0000000000000LL; }\n"
	"GJF_FN bool gjf_isinf(double x)\n"
	"{ return (gjf_b(x) & 0x7fffffffffffffffLL) == 0x7ff0000000000000LL; }\n"
	/* gj_int_in_range */
	"GJF_FN bool gjf_in_range(int type, int64_t v)\n"
	"{\n"
	"\tif (type == GJF_INT2) return v >= -32768 && v <= 32767;\n"
	"\tif (type == GJF_INT4 || type == GJF_DATE) return v >= INT32_MIN && v <= INT32_MAX;\n"
	"\treturn 1;\n"
	"}\n"
	/* gj_int_arith_value */
	"GJF_FN int64_t gjf_ival(int op, int64_t a, int64_t b)\n"
	"{\n"
	"\tif (op == GJF_ADD) return (int64_t) ((uint64_t) a + (uint64_t) b);\n"
	"\tif (op == GJF_SUB) return (int64_t) ((uint64_t) a - (uint64_t) b);\n"
	"\tif (op == GJF_MUL) return (int64_t) ((uint64_t) a * (uint64_t) b);\n"
	"\tif (op == GJF_DIV) return b == 0 ? 0 : b == -1 ? (int64_t) (0 - (uint64_t) a) : a / b;\n"
	"\tif (op == GJF_MOD) return (b == 0 || b == -1) ? 0 : a % b;\n"
	"\tif (op == GJF_NEG) return (int64_t) (0 - (uint64_t) a);\n"
	"\treturn a < 0 ? (int64_t) (0 - (uint64_t) a) : a;\n"
	"}\n"
	/* gj_int_arith's success, for r = gjf_ival(op, a, b) */
	"GJF_FN bool gjf_iok(int op, int type, int64_t a, int64_t b, int64_t r)\n"
	"{\n"
	"\tif (op == GJF_ADD) { if (type == GJF_INT8 && ((a ^ r) & (b ^ r)) < 0) return 0; }\n"
	"\telse if (op == GJF_SUB) { if (type == GJF_INT8 && ((a ^ b) & (a ^ r)) < 0) return 0; }\n"
	"\telse if (op == GJF_MUL) { if (type == GJF_INT8 && gjf_mul_ovf(a, b)) return 0; }\n"
	"\telse if (op == GJF_DIV) { if (b == 0 || (b == -1 && a == INT64_MIN)) return 0; }\n"
	"\telse if (op == GJF_MOD) { if (b == 0) return 0; }\n"
	"\telse if (a == INT64_MIN) return 0;\n"
	"\treturn gjf_in_range(type, r);\n"
	"}\n"
	/* gj_int_arith32: int2/int4 arithmetic in 32 bits (gj_program_narrow) */
	"GJF_FN int32_t gjf_i32(int op, int32_t a, int32_t b)\n"
	"{\n"
	"\tif (op == GJF_ADD) return (int32_t) ((uint32_t) a + (uint32_t) b);\n"
	"\tif (op == GJF_SUB) return (int32_t) ((uint32_t) a - (uint32_t) b);\n"
	"\tif (op == GJF_MUL) return (int32_t) (uint32_t) ((uint64_t) a * (uint64_t) b);\n"
	"\tif (op == GJF_DIV) return (b == 0 || (b == -1 && a == INT32_MIN)) ? 0 : a / b;\n"
	"\tif (op == GJF_MOD) return (b == 0 || b == -1) ? 0 : a % b;\n"
	"\tif (op == GJF_NEG) return (int32_t) (0u - (uint32_t) a);\n"
	"\treturn a < 0 ? (int32_t) (0u - (uint32_t) a) : a;\n"
	"}\n"
	"GJF_FN bool gjf_ok32(int op, int type, int32_t a, int32_t b, int32_t r)\n"
	"{\n"
	"\tbool ok;\n"
	"\tif (op == GJF_ADD) ok = ((a ^ r) & (b ^ r)) >= 0;\n"
	"\telse if (op == GJF_SUB) ok = ((a ^ b) & (a ^ r)) >= 0;\n"
	"\telse if (op == GJF_MUL) ok = (int64_t) a * b == r;\n"
	"\telse if (op == GJF_DIV) ok = b != 0 && !(b == -1 && a == INT32_MIN);\n"
	"\telse if (op == GJF_MOD) ok = b != 0;\n"
	"\telse ok = a != INT32_MIN;\n"
	"\tif (type == GJF_INT2) ok = ok && r >= -32768 && r <= 32767;\n"
	"\treturn ok;\n"
	"}\n"
	/* gj_float_arith_value of float8 (fabs and negation on the bits) */
	"GJF_FN double gjf_fval(int op, double a, double b)\n"
	"{\n"
	"\tif (op == GJF_ADD) return a + b;\n"
	"\tif (op == GJF_SUB) return a - b;\n"
	"\tif (op == GJF_MUL) return a * b;\n"
	"\tif (op == GJF_DIV) return a / b;\n"
	"\tif (op == GJF_NEG) return gjf_d(gjf_b(a) ^ (int64_t) 0x8000000000000000ULL);\n"
	"\treturn gjf_d(gjf_b(a) & 0x7fffffffffffffffLL);\n"
	"}\n"
	/* gj_float_arith_ok of float8: gj_float_result_usual || _allowed */
	"GJF_FN bool gjf_fok(int op, double a, double b, double r)\n"
	"{\n"
	"\tif (op == GJF_DIV && b == 0.0) return 0;\n"
	"\tif (op == GJF_NEG || op == GJF_ABS) return 1;\n"
	"\tif ((op == GJF_ADD || op == GJF_SUB) ? !gjf_isinf(r) : (!gjf_isinf(r) && r != 0.0))\n"
	"\t\treturn 1;\n"
	"\tif (gjf_isinf(r) && !gjf_isinf(a) && !gjf_isinf(b)) return 0;\n"
	"\tif (r == 0.0 && a != 0.0 &&\n"
	"\t\t((op == GJF_MUL && b != 0.0) || (op == GJF_DIV && !gjf_isinf(b)))) return 0;\n"
	"\treturn 1;\n"
	"}\n"
	/* gj_float_cmp_holds */
	"GJF_FN bool gjf_fcmp(int op, double a, double b)\n"
	"{\n"
	"\tif (op == GJF_EQ) return a == b || (gjf_isnan(a) && gjf_isnan(b));\n"
	"\tif (op == GJF_NE) return !(a == b || (gjf_isnan(a) && gjf_isnan(b)));\n"
	"\tif (op == GJF_LT) return !gjf_isnan(a) && !(a >= b);\n"
	"\tif (op == GJF_LE) return gjf_isnan(b) || a <= b;\n"
	"\tif (op == GJF_GT) return !gjf_isnan(b) && !(b >= a);\n"
	"\treturn gjf_isnan(a) || b <= a;\n"
	"}\n";

bool
gj_text_append(char *buf, size_t len, size_t *at, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (*at >= len)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t) n >= len - *at)
		return false;
	*at += n;
	return true;
}

/* Is one instruction within what the flat source writes out? */
static bool
flat_instr_supported(const GjInstr *in)
{
	bool		is_float = gj_type_class(in->type) == GJ_CLASS_FLOAT;

	switch (in->op)
	{
		case GJOP_LOAD_OUTER:
		case GJOP_LOAD_INNER:
			return in->arg >= 0 && in->arg < GJ_MAX_KEY_COLS;
		case GJOP_CONST:
		case GJOP_CONST_NULL:
		case GJOP_INT_NARROW:
		case GJOP_FLOAT_TO_FLOAT4:
		case GJOP_AND:
		case GJOP_OR:
		case GJOP_NOT:
		case GJOP_IS_NULL:
		case GJOP_IS_NOT_NULL:
			return true;
		case GJOP_EQ:
		case GJOP_NE:
		case GJOP_LT:
		case GJOP_LE:
		case GJOP_GT:
		case GJOP_GE:
			return in->type == GJ_CLASS_INT || in->type == GJ_CLASS_FLOAT;
		case GJOP_ADD:
		case GJOP_SUB:
		case GJOP_MUL:
		case GJOP_DIV:
		case GJOP_NEG:
		case GJOP_ABS:
			return !is_float || in->type == GJT_FLOAT8;
		case GJOP_MOD:
			return !is_float;
		case GJOP_INT_TO_FLOAT:
			return in->type == GJT_FLOAT4 || in->type == GJT_FLOAT8;
		default:
			/* float4 arithmetic and dates keep the quick kernel */
			return false;
	}
}

bool
gj_flat_supported(const GjInstr *instrs, int ninstrs)
{
	int			sp = 0;

	if (ninstrs < 1 || ninstrs > GJ_FLAT_MAX_INSTRS)
		return false;
	for (int pc = 0; pc < ninstrs; pc++)
	{
		int			pops = gj_instr_pops(instrs[pc].op);

		if (!flat_instr_supported(&instrs[pc]) || pops < 0 || pops > sp ||
			sp - pops + 1 > GJ_MAX_STACK)
			return false;
		sp = sp - pops + 1;
	}
	return sp == 1;
}

/* The C operator of an integer compare. */
static const char *
flat_int_cmp(int op)
{
	switch (op)
	{
		case GJOP_EQ:
			return "==";
		case GJOP_NE:
			return "!=";
		case GJOP_LT:
			return "<";
		case GJOP_LE:
			return "<=";
		case GJOP_GT:
			return ">";
		default:
			return ">=";
	}
}

/* The NULL flag of column c of a side: its flag, or 0 where it has none. */
static const char *
flat_null(char *out, size_t len, bool outer, int c, uint32_t nullable)
{
	if ((nullable >> c) & 1u)
		snprintf(out, len, "(%s[%d] != 0)", outer ? "on" : "in", c);
	else
		snprintf(out, len, "0");
	return out;
}

bool
gj_flat_source(const GjInstr *instrs, int ninstrs, uint32_t outer_nullable,
			   uint32_t inner_nullable, bool helpers, const char *name,
			   char *buf, size_t len, size_t *at)
{
	GjLeadingCompares lead;
	GjNarrowing nw;
	int			slot[GJ_MAX_STACK];
	int			sp = 0;
	int			next = 0;
	char		null_text[32];
	bool		ok = true;

	if (!gj_flat_supported(instrs, ninstrs))
		return false;
	gj_program_leading_compares(instrs, ninstrs, &lead);
	gj_program_narrow(instrs, ninstrs, &nw);

	if (helpers)
	{
		ok = gj_text_append(buf, len, at,
						 "#define GJF_INT2 %d\n#define GJF_INT4 %d\n#define GJF_INT8 %d\n"
						 "#define GJF_DATE %d\n#define GJF_EQ %d\n#define GJF_NE %d\n"
						 "#define GJF_LT %d\n#define GJF_LE %d\n#define GJF_GT %d\n"
						 "#define GJF_GE %d\n#define GJF_ADD %d\n#define GJF_SUB %d\n"
						 "#define GJF_MUL %d\n#define GJF_DIV %d\n#define GJF_MOD %d\n"
						 "#define GJF_NEG %d\n#define GJF_ABS %d\n%s",
						 GJT_INT2, GJT_INT4, GJT_INT8, GJT_DATE, GJOP_EQ, GJOP_NE, GJOP_LT,
						 GJOP_LE, GJOP_GT, GJOP_GE, GJOP_ADD, GJOP_SUB, GJOP_MUL, GJOP_DIV,
						 GJOP_MOD, GJOP_NEG, GJOP_ABS, flat_helpers);
	}
	ok = ok && gj_text_append(buf, len, at,
						   "GJF_FN int\n%s(const int64_t *o, const uint8_t *on, "
						   "const int64_t *i, const uint8_t *in)\n{\n"
						   "\tbool pass = 1;\n\tbool ok = 1;\n", name);

	/* the leading compares: a pair failing one counts nothing */
	for (int k = 0; ok && k < lead.conj.n; k++)
	{
		const GjSimpleCompare *sc = &lead.conj.cmp[k];
		char		inner_null[32];

		flat_null(null_text, sizeof(null_text), true, sc->outer_col, outer_nullable);
		flat_null(inner_null, sizeof(inner_null), false, sc->inner_col, inner_nullable);
		if (sc->cls == GJ_CLASS_FLOAT)
			ok = gj_text_append(buf, len, at,
							 "\tpass &= !%s & !%s & gjf_fcmp(%d, gjf_d(o[%d]), gjf_d(i[%d]));\n",
							 null_text, inner_null, sc->op, sc->outer_col, sc->inner_col);
		else
		{
			/* in 32 bits where both columns hold ints within int32 */
			const char *cast = ((nw.outer_cols >> sc->outer_col) & 1u) &&
			((nw.inner_cols >> sc->inner_col) & 1u) ? "(int32_t) " : "";

			ok = gj_text_append(buf, len, at, "\tpass &= !%s & !%s & (%so[%d] %s %si[%d]);\n",
								null_text, inner_null, cast, sc->outer_col,
								flat_int_cmp(sc->op), cast, sc->inner_col);
		}
	}

	/* their TRUE slots, then the rest of the program */
	for (; ok && sp < lead.depth; sp++)
	{
		slot[sp] = next++;
		ok = gj_text_append(buf, len, at, "\tint64_t v%d = 1;\n\tbool n%d = 0;\n", slot[sp],
						 slot[sp]);
	}
	for (int pc = lead.pc; ok && pc < ninstrs; pc++)
	{
		const GjInstr *in = &instrs[pc];
		int			pops = gj_instr_pops(in->op);
		int			a = pops >= 1 ? slot[sp - pops] : -1;
		int			b = pops == 2 ? slot[sp - 1] : -1;
		int			r = next++;
		bool		is_float = gj_type_class(in->type) == GJ_CLASS_FLOAT;

		switch (in->op)
		{
			case GJOP_LOAD_OUTER:
			case GJOP_LOAD_INNER:
				{
					bool		outer = in->op == GJOP_LOAD_OUTER;

					flat_null(null_text, sizeof(null_text), outer, in->arg,
							  outer ? outer_nullable : inner_nullable);
					ok = gj_text_append(buf, len, at, "\tint64_t v%d = %s[%d];\n\tbool n%d = %s;\n",
									 r, outer ? "o" : "i", in->arg, r, null_text);
					break;
				}
			case GJOP_CONST:
			case GJOP_CONST_NULL:
				ok = gj_text_append(buf, len, at,
								 "\tint64_t v%d = (int64_t) 0x%llxULL;\n\tbool n%d = %d;\n", r,
								 in->op == GJOP_CONST ? (unsigned long long) in->imm : 0ULL, r,
								 in->op != GJOP_CONST);
				break;
			case GJOP_EQ:
			case GJOP_NE:
			case GJOP_LT:
			case GJOP_LE:
			case GJOP_GT:
			case GJOP_GE:
				if (in->type == GJ_CLASS_FLOAT)
					ok = gj_text_append(buf, len, at,
									 "\tint64_t v%d = gjf_fcmp(%d, gjf_d(v%d), gjf_d(v%d));\n",
									 r, in->op, a, b);
				else if (nw.op32[pc])
					ok = gj_text_append(buf, len, at,
										"\tint64_t v%d = (int32_t) v%d %s (int32_t) v%d;\n", r, a,
										flat_int_cmp(in->op), b);
				else
					ok = gj_text_append(buf, len, at, "\tint64_t v%d = v%d %s v%d;\n", r, a,
									 flat_int_cmp(in->op), b);
				ok = ok && gj_text_append(buf, len, at, "\tbool n%d = n%d | n%d;\n", r, a, b);
				break;
			case GJOP_ADD:
			case GJOP_SUB:
			case GJOP_MUL:
			case GJOP_DIV:
			case GJOP_MOD:
			case GJOP_NEG:
			case GJOP_ABS:
				{
					bool		unary = in->op == GJOP_NEG || in->op == GJOP_ABS;
					char		operand_b[16];

					/* a unary step's second operand is 0, as gj_apply_unary's */
					if (unary)
						snprintf(operand_b, sizeof(operand_b), "0");
					else
						snprintf(operand_b, sizeof(operand_b), "v%d", b);
					if (unary)
						ok = gj_text_append(buf, len, at, "\tbool n%d = n%d;\n", r, a);
					else
						ok = gj_text_append(buf, len, at, "\tbool n%d = n%d | n%d;\n", r, a, b);
					if (is_float)
						ok = ok && gj_text_append(buf, len, at,
											   "\tdouble f%d = gjf_fval(%d, gjf_d(v%d), gjf_d(%s));\n"
											   "\tint64_t v%d = gjf_b(f%d);\n"
											   "\tok &= n%d | gjf_fok(%d, gjf_d(v%d), gjf_d(%s), f%d);\n",
											   r, in->op, a, operand_b, r, r, r, in->op, a,
											   operand_b, r);
					else if (nw.op32[pc])
						ok = ok && gj_text_append(buf, len, at,
												  "\tint32_t t%d = gjf_i32(%d, (int32_t) v%d, (int32_t) %s);\n"
												  "\tint64_t v%d = t%d;\n"
												  "\tok &= n%d | gjf_ok32(%d, %d, (int32_t) v%d, (int32_t) %s, t%d);\n",
												  r, in->op, a, operand_b, r, r, r, in->op,
												  in->type, a, operand_b, r);
					else
						ok = ok && gj_text_append(buf, len, at,
											   "\tint64_t v%d = gjf_ival(%d, v%d, %s);\n"
											   "\tok &= n%d | gjf_iok(%d, %d, v%d, %s, v%d);\n",
											   r, in->op, a, operand_b, r, in->op, in->type, a,
											   operand_b, r);
					break;
				}
			case GJOP_INT_TO_FLOAT:
				ok = gj_text_append(buf, len, at, "\tint64_t v%d = gjf_b(%s v%d);\n\tbool n%d = n%d;\n",
								 r, in->type == GJT_FLOAT4 ? "(double) (float)" : "(double)",
								 a, r, a);
				break;
			case GJOP_FLOAT_TO_FLOAT4:
				/* gj_apply_convert: an overflow or underflow to float4 fails */
				ok = gj_text_append(buf, len, at,
								 "\tfloat g%d = (float) gjf_d(v%d);\n"
								 "\tint64_t v%d = gjf_b((double) g%d);\n\tbool n%d = n%d;\n"
								 "\tok &= n%d | !((gjf_isinf((double) g%d) && !gjf_isinf(gjf_d(v%d))) ||\n"
								 "\t\t(g%d == 0.0f && gjf_d(v%d) != 0.0));\n",
								 r, a, r, r, r, a, r, r, a, r, a);
				break;
			case GJOP_INT_NARROW:
				ok = gj_text_append(buf, len, at,
								 "\tint64_t v%d = v%d;\n\tbool n%d = n%d;\n"
								 "\tok &= n%d | gjf_in_range(%d, v%d);\n",
								 r, a, r, a, r, in->type, a);
				break;
			case GJOP_AND:
			case GJOP_OR:
				{
					int			wins = in->op == GJOP_OR;

					/* gj_apply_and_or: AND's false and OR's true win over NULL */
					ok = gj_text_append(buf, len, at,
									 "\tbool w%d = (!n%d & ((v%d != 0) == %d)) | (!n%d & ((v%d != 0) == %d));\n"
									 "\tbool n%d = !w%d & (n%d | n%d);\n"
									 "\tint64_t v%d = w%d ? %d : %d;\n",
									 r, a, a, wins, b, b, wins, r, r, a, b, r, r, wins, !wins);
					break;
				}
			case GJOP_NOT:
				ok = gj_text_append(buf, len, at,
								 "\tint64_t v%d = n%d ? v%d : (int64_t) (v%d == 0);\n"
								 "\tbool n%d = n%d;\n", r, a, a, a, r, a);
				break;
			default:			/* GJOP_IS_NULL, GJOP_IS_NOT_NULL */
				ok = gj_text_append(buf, len, at, "\tint64_t v%d = n%d == %d;\n\tbool n%d = 0;\n",
								 r, a, in->op == GJOP_IS_NULL, r);
				break;
		}
		sp -= pops;
		slot[sp++] = r;
	}
	return ok && gj_text_append(buf, len, at,
							 "\t(void) pass;\n\treturn !pass ? %d : !ok ? %d : "
							 "(!n%d & (v%d != 0)) ? %d : %d;\n}\n",
							 GJ_RESULT_FALSE, GJ_RESULT_RECHECK, slot[0], slot[0],
							 GJ_RESULT_TRUE, GJ_RESULT_FALSE);
}

/* ---------------------------------------------------------------------
 * The source of a flat kernel (compiled_flat.cuh)
 * ---------------------------------------------------------------------
 */

uint32_t
gj_program_loaded_columns(const GjInstr *instrs, int ninstrs, int op)
{
	uint32_t	mask = 0;

	for (int pc = 0; pc < ninstrs; pc++)
	{
		if (instrs[pc].op == op && instrs[pc].arg >= 0 && instrs[pc].arg < GJ_MAX_KEY_COLS)
			mask |= 1u << instrs[pc].arg;
	}
	return mask;
}

/*
 * compiled_flat.cuh's statements over the loaded columns (see there): the
 * outer row's into ov[r] and onull[r] (or zeros), the inner row's staged
 * into shared memory (slot by slot, as the columns come: svalues32 for
 * those gj_program_narrow keeps in 32 bits, whose values are ints within
 * int32, svalues for the others) and read back.
 */
static bool
flat_column_macros(uint32_t outer, uint32_t outer_nullable, uint32_t inner,
				   uint32_t inner_nullable, uint32_t narrow_outer, uint32_t narrow_inner,
				   char *buf, size_t len, size_t *at)
{
	int			slot = 0,
				slot32 = 0,
				null_slot = 0;
	bool		ok;

	ok = gj_text_append(buf, len, at, "#define GJF_LOAD_OUTER(r, row) do { ");
	for (int c = 0; ok && c < GJ_MAX_KEY_COLS; c++)
	{
		if (!((outer >> c) & 1u))
			continue;
		ok = gj_text_append(buf, len, at, "ov[r][%d] = %sGJF_VALUES(GJF_OFF_OUTER, %d)[row]; ", c,
							((narrow_outer >> c) & 1u) ? "(int32_t) " : "", c);
		if (ok && ((outer_nullable >> c) & 1u))
			ok = gj_text_append(buf, len, at,
								"onull[r][%d] = GJF_ISNULL(GJF_OFF_OUTER, %d)[row]; ", c, c);
		else
			ok = ok && gj_text_append(buf, len, at, "onull[r][%d] = 0; ", c);
	}
	ok = ok && gj_text_append(buf, len, at, "} while (0)\n#define GJF_ZERO_OUTER(r) do { ");
	for (int c = 0; ok && c < GJ_MAX_KEY_COLS; c++)
		if ((outer >> c) & 1u)
			ok = gj_text_append(buf, len, at, "ov[r][%d] = 0; onull[r][%d] = 0; ", c, c);
	ok = ok && gj_text_append(buf, len, at, "} while (0)\n#define GJF_STAGE(t) do { ");
	for (int c = 0; ok && c < GJ_MAX_KEY_COLS; c++)
	{
		if (!((inner >> c) & 1u))
			continue;
		if ((narrow_inner >> c) & 1u)
			ok = gj_text_append(buf, len, at, "svalues32[%d][t] = (int32_t) "
								"GJF_VALUES(GJF_OFF_INNER, %d)[ib + t]; ", slot32++, c);
		else
			ok = gj_text_append(buf, len, at, "svalues[%d][t] = "
								"GJF_VALUES(GJF_OFF_INNER, %d)[ib + t]; ", slot++, c);
		if (ok && ((inner_nullable >> c) & 1u))
			ok = gj_text_append(buf, len, at,
								"snull[%d][t] = GJF_ISNULL(GJF_OFF_INNER, %d)[ib + t]; ",
								null_slot++, c);
	}
	slot = slot32 = null_slot = 0;
	ok = ok && gj_text_append(buf, len, at, "} while (0)\n#define GJF_READ_INNER(t) do { ");
	for (int c = 0; ok && c < GJ_MAX_KEY_COLS; c++)
	{
		if (!((inner >> c) & 1u))
			continue;
		if ((narrow_inner >> c) & 1u)
			ok = gj_text_append(buf, len, at, "iv[%d] = svalues32[%d][t]; inull[%d] = ", c,
								slot32++, c);
		else
			ok = gj_text_append(buf, len, at, "iv[%d] = svalues[%d][t]; inull[%d] = ", c,
								slot++, c);
		if (ok && ((inner_nullable >> c) & 1u))
			ok = gj_text_append(buf, len, at, "snull[%d][t]; ", null_slot++);
		else
			ok = ok && gj_text_append(buf, len, at, "0; ");
	}
	return ok && gj_text_append(buf, len, at, "} while (0)\n");
}

bool
gj_flat_kernel_source(int kind, const GjInstr *instrs, int ninstrs, uint32_t outer_nullable,
					  uint32_t inner_nullable, const char *prelude, int rows, char *buf,
					  size_t len)
{
	uint32_t	outer = gj_program_loaded_columns(instrs, ninstrs, GJOP_LOAD_OUTER);
	uint32_t	inner = gj_program_loaded_columns(instrs, ninstrs, GJOP_LOAD_INNER);
	GjNarrowing nw;
	int			ninner64,
				ninner32,
				nnulls;
	size_t		row_bytes;
	int			chunk = GJC_CHUNK;
	size_t		at = 0;

	if (!gj_flat_supported(instrs, ninstrs))
		return false;
	gj_program_narrow(instrs, ninstrs, &nw);
	ninner64 = __builtin_popcount(inner & ~nw.inner_cols);
	ninner32 = __builtin_popcount(inner & nw.inner_cols);
	nnulls = __builtin_popcount(inner & inner_nullable);
	row_bytes = 8 * ninner64 + 4 * ninner32 + nnulls;

	while (chunk > 256 && row_bytes * chunk > GJ_FLAT_STAGED_BYTES)
		chunk /= 2;
	outer_nullable &= outer;
	inner_nullable &= inner;
	return gj_text_append(buf, len, &at, "%s", prelude) &&
		flat_column_macros(outer, outer_nullable, inner, inner_nullable,
						   outer & nw.outer_cols, inner & nw.inner_cols, buf, len, &at) &&
		gj_flat_source(instrs, ninstrs, outer_nullable, inner_nullable, true, "gjf_eval",
					   buf, len, &at) &&
		gj_text_append(buf, len, &at,
			   "#define GJF_ARGS_SIZE %zu\n#define GJF_OFF_OUTER %zu\n#define GJF_OFF_INNER %zu\n"
			   "#define GJF_OFF_VALUES %zu\n#define GJF_OFF_ISNULL %zu\n"
			   "#define GJF_OFF_OUTER_BASE %zu\n#define GJF_OFF_O_BEGIN %zu\n"
			   "#define GJF_OFF_NROWS %zu\n#define GJF_OFF_NINNER %zu\n"
			   "#define GJF_OFF_SLICE_LEN %zu\n#define GJF_OFF_COUNTS %zu\n"
			   "#define GJF_OFF_TOTAL %zu\n#define GJF_OFF_HOST %zu\n"
			   "#define GJF_OFF_SCRATCH %zu\n#define GJF_OFF_NSLICES %zu\n"
			   "#define GJF_OFF_OUT_OUTER %zu\n#define GJF_OFF_OUT_INNER %zu\n"
			   "#define GJF_OFF_OUTER_FIRST %zu\n#define GJF_OFF_INNER_FIRST %zu\n"
			   "#define GJF_OFF_MATCH_BITS %zu\n#define GJF_OFF_RECHECK_BITS %zu\n",
			   sizeof(GjcArgs), offsetof(GjcArgs, outer), offsetof(GjcArgs, inner),
			   offsetof(GjKeyColumns, values), offsetof(GjKeyColumns, isnull),
			   offsetof(GjcArgs, outer_base), offsetof(GjcArgs, o_begin),
			   offsetof(GjcArgs, nrows), offsetof(GjcArgs, ninner),
			   offsetof(GjcArgs, slice_len), offsetof(GjcArgs, counts),
			   offsetof(GjcArgs, total), offsetof(GjcArgs, host),
			   offsetof(GjcArgs, scratch), offsetof(GjcArgs, nslices),
			   offsetof(GjcArgs, out_outer), offsetof(GjcArgs, out_inner),
			   offsetof(GjcArgs, outer_first), offsetof(GjcArgs, inner_first),
			   offsetof(GjcArgs, match_bits), offsetof(GjcArgs, recheck_bits)) &&
		gj_text_append(buf, len, &at,
			   "#define GJF_OUTER_COLS 0x%xu\n#define GJF_INNER_COLS 0x%xu\n"
			   "#define GJF_OUTER_NULLABLE 0x%xu\n#define GJF_INNER_NULLABLE 0x%xu\n"
			   "#define GJF_NINNER %d\n#define GJF_NINNER32 %d\n#define GJF_NINNER_NULLS %d\n"
			   "#define GJF_LEN %d\n#define GJF_LEN32 %d\n#define GJF_LEN_NULLS %d\n"
			   "#define GJF_ROWS %d\n#define GJF_CHUNK %d\n#define GJF_KIND %d\n"
			   "#include \"kernels/cuda/compiled_flat.cuh\"\n",
			   outer, inner, outer_nullable, inner_nullable, ninner64 > 0 ? ninner64 : 1,
			   ninner32 > 0 ? ninner32 : 1, nnulls > 0 ? nnulls : 1,
			   ninner64 > 0 ? chunk : 1, ninner32 > 0 ? chunk : 1, nnulls > 0 ? chunk : 1,
			   rows, chunk, kind);
}

