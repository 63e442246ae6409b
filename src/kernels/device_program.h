/*-------------------------------------------------------------------------
 *
 * device_program.h
 *	  The device program: a small typed postfix language that the planner
 *	  compiles device-evaluable join quals into, and the one interpreter for
 *	  it that both backends run (plain C on the cpu backend, __device__ code
 *	  on the cuda backend).
 *
 * The program is evaluated once per candidate (outer row, inner row) pair.
 * Its result is three-valued plus one: GJ_RESULT_FALSE (false or NULL, the
 * pair does not join), GJ_RESULT_TRUE, and GJ_RESULT_RECHECK: some step would
 * have raised an ERROR in PostgreSQL (integer overflow, division by zero,
 * float overflow, date out of range).  The device never guesses in that case;
 * the pair goes back to the host, which evaluates the original quals with
 * ExecQual and so raises exactly PostgreSQL's error, or not, if PostgreSQL's
 * own short-circuit evaluation never reaches the failing step.
 *
 * Values live in 8-byte slots: integers, booleans, dates and timestamps as
 * int64, float4 and float8 as double (float4 -> double is exact, so float4
 * arithmetic converts back to float and rounds as float4, like float4pl()).
 * timetz, interval and numeric arrive as order-preserving int64 encodings
 * made by the host, so the interpreter and kernels see plain integers.
 *
 * This header must stay free of PostgreSQL headers: nvcc compiles it as C++.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_DEVICE_PROGRAM_H
#define GPUJOIN_DEVICE_PROGRAM_H

/*
 * NVRTC (cuda_compile.cu compiles programs to GPU code at run time, with
 * this header's text) has no C library headers: it declares the math
 * functions itself, and cuda_compile.cu's source defines the fixed-width
 * types and limits before including this header.
 */
#ifndef __CUDACC_RTC__
#include <stdint.h>
#include <stdbool.h>
#include <math.h>
#endif

#ifdef __CUDACC__
#define GJ_HD __host__ __device__ __forceinline__
#else
#define GJ_HD static inline
#endif

/* Limits of one program; the compiler refuses anything larger. */
#define GJ_MAX_STACK		16
#define GJ_MAX_INSTRS		64
#define GJ_MAX_KEY_COLS		8

/* Storage class of a key column and of a stack slot. */
typedef enum GjClass
{
	GJ_CLASS_INT = 0,			/* int64 */
	GJ_CLASS_FLOAT = 1			/* double */
} GjClass;

/* SQL types the device understands; decides overflow ranges and rounding. */
typedef enum GjType
{
	GJT_BOOL = 0,
	GJT_INT2,
	GJT_INT4,
	GJT_INT8,
	GJT_FLOAT4,
	GJT_FLOAT8,
	GJT_DATE,
	GJT_TIMESTAMP,
	GJT_TIMESTAMPTZ,

	/*
	 * Types the host encodes into an int64 whose signed order and equality
	 * are PostgreSQL's (see host_buffers.h): the device only loads and
	 * compares them, as integers, and never computes with them.
	 */
	GJT_TIMETZ,					/* GMT time and zone, packed */
	GJT_INTERVAL,				/* interval_cmp_value(), where it fits */
	GJT_NUMERIC,				/* fixed point, scale chosen per execution */

	/*
	 * oid and the reg* types, which compare as oid: the unsigned 32-bit value
	 * zero-extended into the int64, so that signed int64 order is oid's
	 * unsigned order (oidlt).  PostgreSQL has no arithmetic on them.
	 */
	GJT_OID
} GjType;

GJ_HD GjClass
gj_type_class(int type)
{
	return (type == GJT_FLOAT4 || type == GJT_FLOAT8) ? GJ_CLASS_FLOAT : GJ_CLASS_INT;
}

/*
 * Is the device value of the type an encoding made by the host, which only
 * comparisons may read (not the type's Datum, nor an aggregate argument)?
 */
GJ_HD bool
gj_type_host_encoded(int type)
{
	return type == GJT_TIMETZ || type == GJT_INTERVAL || type == GJT_NUMERIC;
}

typedef enum GjOpcode
{
	GJOP_LOAD_OUTER = 1,		/* arg = outer key column */
	GJOP_LOAD_INNER,			/* arg = inner key column */
	GJOP_CONST,					/* imm = value bits */
	GJOP_CONST_NULL,
	/* comparisons: type = operand class (both operands already converted) */
	GJOP_EQ,
	GJOP_NE,
	GJOP_LT,
	GJOP_LE,
	GJOP_GT,
	GJOP_GE,
	/* arithmetic: type = result type, operands already of matching class */
	GJOP_ADD,
	GJOP_SUB,
	GJOP_MUL,
	GJOP_DIV,
	GJOP_MOD,
	GJOP_NEG,
	GJOP_ABS,
	GJOP_DATE_PLI,				/* date + int4 */
	GJOP_DATE_MII,				/* date - int4 */
	GJOP_DATE_MI,				/* date - date -> int4 */
	/* conversions: type = result type */
	GJOP_INT_TO_FLOAT,			/* int2/4/8 -> float4/float8 */
	GJOP_FLOAT_TO_FLOAT4,		/* float8 -> float4 (dtof) */
	GJOP_INT_NARROW,			/* int8/int4 -> int4/int2 with range check */
	/* SQL three-valued logic */
	GJOP_AND,
	GJOP_OR,
	GJOP_NOT,
	GJOP_IS_NULL,
	GJOP_IS_NOT_NULL
} GjOpcode;

typedef struct GjInstr
{
	int16_t		op;				/* GjOpcode */
	int16_t		type;			/* GjType or GjClass, see GjOpcode */
	int32_t		arg;			/* column number */
	int64_t		imm;			/* constant bits */
} GjInstr;

typedef struct GjProgram
{
	int32_t		ninstrs;
	GjInstr		instrs[GJ_MAX_INSTRS];
} GjProgram;

/* One side's key columns, as the backend sees them (host or device memory). */
typedef struct GjKeyColumns
{
	int32_t		ncols;
	const int64_t *values[GJ_MAX_KEY_COLS]; /* double columns are stored as bits */
	const uint8_t *isnull[GJ_MAX_KEY_COLS]; /* NULL when the column has no NULLs */
} GjKeyColumns;

typedef enum GjResult
{
	GJ_RESULT_FALSE = 0,
	GJ_RESULT_TRUE = 1,
	GJ_RESULT_RECHECK = 2
} GjResult;

typedef union GjSlot
{
	int64_t		i;
	double		f;
} GjSlot;

GJ_HD double
gj_bits_to_double(int64_t bits)
{
	GjSlot		s;

	s.i = bits;
	return s.f;
}

GJ_HD int64_t
gj_double_to_bits(double d)
{
	GjSlot		s;

	s.f = d;
	return s.i;
}

/*
 * float comparison with PostgreSQL's btree semantics (float8_cmp_internal):
 * NaN equals NaN and sorts above every other value, -0.0 equals 0.0.
 */
GJ_HD int
gj_float_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return (a > b) - (a < b);
}

/*
 * An int64 whose signed order is PostgreSQL's float order: NaN above
 * +Infinity, -0.0 equal to 0.0.  Lets the specialised kernels and sorts
 * treat float keys as integers.
 */
/*
 * Does op hold between two floats in gj_float_cmp's order?  The answers of
 * gj_cmp_holds(op, gj_float_cmp(a, b)) in fewer compares: an unordered
 * compare (!(a >= b) holds where either is NaN) settles most of the NaN
 * cases, so a compare with a constant that is not NaN folds to one
 * instruction, and two columns take two.  The compiled kernels' float
 * programs are bound by the device's float64 compares (kernel_test
 * bench-program-count).
 */
GJ_HD bool
gj_float_cmp_holds(int op, double a, double b)
{
	switch (op)
	{
		case GJOP_EQ:
			return a == b || (isnan(a) && isnan(b));
		case GJOP_NE:
			return !(a == b || (isnan(a) && isnan(b)));
		case GJOP_LT:
			/* NaN is below nothing; every other value is below NaN */
			return !isnan(a) && !(a >= b);
		case GJOP_LE:
			return isnan(b) || a <= b;
		case GJOP_GT:
			return !isnan(b) && !(b >= a);
		default:				/* GJOP_GE */
			return isnan(a) || b <= a;
	}
}

/*
 * gj_float_cmp_holds where one operand is known not to be NaN (b where
 * b_not_nan, else a): one compare, ordered or unordered as the NaN the
 * other may be must sort.  A compiled program's compare with a float
 * constant (gj_program_steps_fixed) takes this form; gj_float_cmp_holds'
 * for a column against a constant folds to one compare for > and >= but
 * keeps a NaN test for <, <= (a NaN column must not pass "x < 0.5").
 */
GJ_HD bool
gj_float_cmp_holds_known(int op, double a, double b, bool b_not_nan)
{
	switch (op)
	{
		case GJOP_EQ:
			return a == b;
		case GJOP_NE:
			return !(a == b);
		case GJOP_LT:
			return b_not_nan ? a < b : !(a >= b);
		case GJOP_LE:
			return b_not_nan ? a <= b : !(a > b);
		case GJOP_GT:
			return b_not_nan ? !(a <= b) : a > b;
		default:				/* GJOP_GE */
			return b_not_nan ? !(a < b) : a >= b;
	}
}

GJ_HD int64_t
gj_float_order_key(double d)
{
	int64_t		bits;

	if (isnan(d))
		return INT64_MAX;
	if (d == 0.0)
		return 0;
	bits = gj_double_to_bits(d);
	return bits >= 0 ? bits : (int64_t) (bits ^ INT64_MAX);
}

GJ_HD int
gj_int_cmp(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

GJ_HD bool
gj_cmp_holds(int op, int cmp)
{
	switch (op)
	{
		case GJOP_EQ:
			return cmp == 0;
		case GJOP_NE:
			return cmp != 0;
		case GJOP_LT:
			return cmp < 0;
		case GJOP_LE:
			return cmp <= 0;
		case GJOP_GT:
			return cmp > 0;
		default:
			return cmp >= 0;
	}
}

/* Does an int64 fit the SQL integer type? */
GJ_HD bool
gj_int_in_range(int type, int64_t v)
{
	if (type == GJT_INT2)
		return v >= -32768 && v <= 32767;
	if (type == GJT_INT4 || type == GJT_DATE)
		return v >= INT32_MIN && v <= INT32_MAX;
	return true;
}

/*
 * The result of integer arithmetic where gj_int_arith succeeds, computed
 * in int64 with wrap-around (and 0 for a division by zero, where it
 * fails): the one computation of the result, for gj_int_arith and for a
 * compiled program that proved no step can fail (gj_bounds_step).
 */
GJ_HD int64_t
gj_int_arith_value(int op, int64_t a, int64_t b)
{
	switch (op)
	{
		case GJOP_ADD:
			return (int64_t) ((uint64_t) a + (uint64_t) b);
		case GJOP_SUB:
			return (int64_t) ((uint64_t) a - (uint64_t) b);
		case GJOP_MUL:
			return (int64_t) ((uint64_t) a * (uint64_t) b);
		case GJOP_DIV:
			/* avoid the traps of a division by 0 and of INT64_MIN / -1 */
			return b == 0 ? 0 : b == -1 ? (int64_t) (0 - (uint64_t) a) : a / b;
		case GJOP_MOD:
			return (b == 0 || b == -1) ? 0 : a % b;
		case GJOP_NEG:
			return (int64_t) (0 - (uint64_t) a);
		default:				/* GJOP_ABS */
			return a < 0 ? (int64_t) (0 - (uint64_t) a) : a;
	}
}

/*
 * Does the int64 product a * b overflow?  On the device, the high word of
 * the 128-bit product against the low word's sign (two multiplies); on
 * the host, the compiler's test.  Either is exact, and takes no division,
 * which costs a GPU a hundred instructions.
 */
GJ_HD bool
gj_int8_mul_overflows(int64_t a, int64_t b)
{
#ifdef __CUDA_ARCH__
	return __mul64hi(a, b) != ((int64_t) ((uint64_t) a * (uint64_t) b) >> 63);
#else
	int64_t		r;

	return __builtin_mul_overflow(a, b, &r);
#endif
}

/*
 * Integer arithmetic with PostgreSQL's errors.  Returns false where
 * PostgreSQL would raise an ERROR (overflow, division by zero).  Operands of
 * int2/int4 types are at most 32 bits wide, so their results cannot overflow
 * int64 before the range check; int8 needs careful checks: a sum
 * overflows where both operands' signs differ from the wrapped result's,
 * a difference where the operands' signs differ and the result's differs
 * from the first's.
 */
GJ_HD bool
gj_int_arith(int op, int type, int64_t a, int64_t b, int64_t *result)
{
	int64_t		r;

	switch (op)
	{
		case GJOP_ADD:
			if (type == GJT_INT8)
			{
				r = (int64_t) ((uint64_t) a + (uint64_t) b);
				if (((a ^ r) & (b ^ r)) < 0)
					return false;
			}
			break;
		case GJOP_SUB:
			if (type == GJT_INT8)
			{
				r = (int64_t) ((uint64_t) a - (uint64_t) b);
				if (((a ^ b) & (a ^ r)) < 0)
					return false;
			}
			break;
		case GJOP_MUL:
			if (type == GJT_INT8 && gj_int8_mul_overflows(a, b))
				return false;
			break;
		case GJOP_DIV:
			/* -INT_MIN overflows */
			if (b == 0 || (b == -1 && a == INT64_MIN))
				return false;
			break;
		case GJOP_MOD:
			if (b == 0)
				return false;
			break;
		default:				/* GJOP_NEG, GJOP_ABS */
			if (a == INT64_MIN)
				return false;
			break;
	}
	r = gj_int_arith_value(op, a, b);
	if (!gj_int_in_range(type, r))
		return false;
	*result = r;
	return true;
}

/*
 * The result r of float step op, where no error is possible: a negation or
 * absolute value is exact, a sum or difference fails only where it is
 * infinite, a product or quotient only where it is infinite or zero.  The
 * usual result takes this test alone (one or two compares); the others go
 * on to gj_float_result_allowed.  Split so that a compiled program's step
 * costs its operation and one or two compares in the usual case, not the
 * four to six of the full test (kernel_test bench-program-count: the float
 * programs were bound by the device's float64 compares).
 */
GJ_HD bool
gj_float_result_usual(int op, double r)
{
	if (op == GJOP_NEG || op == GJOP_ABS)
		return true;
	if (op == GJOP_ADD || op == GJOP_SUB)
		return !isinf(r);
	return !isinf(r) && r != 0.0;
}

/*
 * The full test, PostgreSQL's float8_pl .. float8_div (and float4's): an
 * infinite result of finite operands overflows, a zero product of nonzero
 * operands or a zero quotient of a nonzero dividend and a finite divisor
 * underflows.  (A division by zero never gets here.)
 */
GJ_HD bool
gj_float_result_allowed(int op, double a, double b, double r)
{
	if (op == GJOP_NEG || op == GJOP_ABS)
		return true;
	if (isinf(r) && !isinf(a) && !isinf(b))
		return false;
	if (r == 0.0 && a != 0.0 &&
		((op == GJOP_MUL && b != 0.0) || (op == GJOP_DIV && !isinf(b))))
		return false;
	return true;
}

/*
 * The value of float step op on a and b, no test made: a float4 step
 * computes in float and rounds as float4pl() does.  A division by zero
 * gives an infinity or NaN here (the device does not trap); the callers
 * test the divisor.
 */
GJ_HD double
gj_float_arith_value(int op, int type, double a, double b)
{
	if (type == GJT_FLOAT4)
	{
		float		fa = (float) a,
					fb = (float) b;

		switch (op)
		{
			case GJOP_ADD:
				return (double) (fa + fb);
			case GJOP_SUB:
				return (double) (fa - fb);
			case GJOP_MUL:
				return (double) (fa * fb);
			case GJOP_DIV:
				return (double) (fa / fb);
			case GJOP_NEG:
				return (double) -fa;
			default:
				return (double) fabsf(fa);
		}
	}
	switch (op)
	{
		case GJOP_ADD:
			return a + b;
		case GJOP_SUB:
			return a - b;
		case GJOP_MUL:
			return a * b;
		case GJOP_DIV:
			return a / b;
		case GJOP_NEG:
			return -a;
		default:
			return fabs(a);
	}
}

/*
 * Does float step op on a and b, of value r (gj_float_arith_value), fail
 * where PostgreSQL might raise an error (overflow, underflow, division by
 * zero)?  A float4 step's tests see its float operands and result.
 */
GJ_HD bool
gj_float_arith_ok(int op, int type, double a, double b, double r)
{
	if (type == GJT_FLOAT4)
	{
		float		fa = (float) a,
					fb = (float) b,
					fr = (float) r;

		if (op == GJOP_DIV && fb == 0.0f)
			return false;
		return gj_float_result_usual(op, fr) || gj_float_result_allowed(op, fa, fb, fr);
	}
	if (op == GJOP_DIV && b == 0.0)
		return false;
	return gj_float_result_usual(op, r) || gj_float_result_allowed(op, a, b, r);
}

/*
 * Float arithmetic.  Returns false whenever PostgreSQL might raise an error
 * (overflow, underflow, division by zero); the host then decides.  Being more
 * cautious than PostgreSQL costs a recheck, never a wrong answer.
 */
GJ_HD bool
gj_float_arith(int op, int type, double a, double b, double *result)
{
	double		r = gj_float_arith_value(op, type, a, b);

	if (!gj_float_arith_ok(op, type, a, b, r))
		return false;
	*result = r;
	return true;
}

/* PostgreSQL's date range (IS_VALID_DATE), in days since 2000-01-01. */
#define GJ_DATE_MIN			(-2451545)
#define GJ_DATE_MAX_EXCL	(2147483494 - 2451545)
#define GJ_DATE_NOBEGIN		INT32_MIN
#define GJ_DATE_NOEND		INT32_MAX

/*
 * "a op b" for op one of GJOP_EQ .. GJOP_GE on integers: the same as
 * gj_cmp_holds(op, gj_int_cmp(a, b)), one comparison.
 */
GJ_HD bool
gj_int_cmp_holds(int op, int64_t a, int64_t b)
{
	switch (op)
	{
		case GJOP_EQ:
			return a == b;
		case GJOP_NE:
			return a != b;
		case GJOP_LT:
			return a < b;
		case GJOP_LE:
			return a <= b;
		case GJOP_GT:
			return a > b;
		default:
			return a >= b;
	}
}

/*
 * The instructions other than loads, one function for each group of
 * opcodes.  Each applies its instruction to the stack of *spp slots and
 * leaves *spp as the instruction does (one slot pushed, after its pops),
 * whatever the result.  Each returns false when the step would raise an
 * error in PostgreSQL (the pair goes to the host: GJ_RESULT_RECHECK),
 * leaving the slot it would have written as it was.  These functions are
 * the one definition of the language's semantics: the interpreter calls
 * them through gj_program_apply's switch; a program compiled to GPU code
 * (gj_program_eval_fixed) calls each directly, the switch resolved when
 * the kernel is compiled.
 */

/* GJOP_CONST, GJOP_CONST_NULL */
GJ_HD bool
gj_apply_const(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = (*spp)++;

	stack[sp].i = in->op == GJOP_CONST ? in->imm : 0;
	isnull[sp] = in->op != GJOP_CONST;
	return true;
}

/* GJOP_EQ .. GJOP_GE: type is the operands' class */
GJ_HD bool
gj_apply_compare(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	stack[sp - 1].i = in->type == GJ_CLASS_FLOAT ?
		gj_float_cmp_holds(in->op, stack[sp - 1].f, stack[sp].f) :
		gj_int_cmp_holds(in->op, stack[sp - 1].i, stack[sp].i);
	return true;
}

/* GJOP_ADD .. GJOP_MOD: type is the result type */
GJ_HD bool
gj_apply_arith(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	if (gj_type_class(in->type) == GJ_CLASS_FLOAT)
		return gj_float_arith(in->op, in->type, stack[sp - 1].f, stack[sp].f,
							  &stack[sp - 1].f);
	return gj_int_arith(in->op, in->type, stack[sp - 1].i, stack[sp].i, &stack[sp - 1].i);
}

/* GJOP_NEG, GJOP_ABS */
GJ_HD bool
gj_apply_unary(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = *spp;

	if (isnull[sp - 1])
		return true;
	if (gj_type_class(in->type) == GJ_CLASS_FLOAT)
		return gj_float_arith(in->op, in->type, stack[sp - 1].f, 0.0, &stack[sp - 1].f);
	return gj_int_arith(in->op, in->type, stack[sp - 1].i, 0, &stack[sp - 1].i);
}

/* GJOP_DATE_PLI, GJOP_DATE_MII: date_pli/date_mii, infinite dates stay */
GJ_HD bool
gj_apply_date_pm(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	if (stack[sp - 1].i != GJ_DATE_NOBEGIN && stack[sp - 1].i != GJ_DATE_NOEND)
	{
		/*
		 * unsigned: an operand a failed step left (compiled kernels keep its
		 * wrapped value, gj_apply_int_arith_fixed) may be near 2^63
		 */
		int64_t		r = (int64_t) ((in->op == GJOP_DATE_PLI) ?
								   (uint64_t) stack[sp - 1].i + (uint64_t) stack[sp].i :
								   (uint64_t) stack[sp - 1].i - (uint64_t) stack[sp].i);

		if (r < GJ_DATE_MIN || r >= GJ_DATE_MAX_EXCL)
			return false;
		stack[sp - 1].i = r;
	}
	return true;
}

/* GJOP_DATE_MI: date_mi raises an error on infinite dates */
GJ_HD bool
gj_apply_date_mi(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	if (stack[sp - 1].i == GJ_DATE_NOBEGIN || stack[sp - 1].i == GJ_DATE_NOEND ||
		stack[sp].i == GJ_DATE_NOBEGIN || stack[sp].i == GJ_DATE_NOEND)
		return false;
	stack[sp - 1].i = (int64_t) ((uint64_t) stack[sp - 1].i - (uint64_t) stack[sp].i);
	return true;
}

/* GJOP_INT_TO_FLOAT, GJOP_FLOAT_TO_FLOAT4, GJOP_INT_NARROW */
GJ_HD bool
gj_apply_convert(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = *spp;

	if (isnull[sp - 1])
		return true;
	if (in->op == GJOP_INT_TO_FLOAT)
		stack[sp - 1].f = (in->type == GJT_FLOAT4) ?
			(double) (float) stack[sp - 1].i : (double) stack[sp - 1].i;
	else if (in->op == GJOP_FLOAT_TO_FLOAT4)
	{
		double		d = stack[sp - 1].f;
		float		f = (float) d;

		if ((isinf(f) && !isinf(d)) || (f == 0.0f && d != 0.0))
			return false;
		stack[sp - 1].f = (double) f;
	}
	else if (!gj_int_in_range(in->type, stack[sp - 1].i))
		return false;
	return true;
}

/* GJOP_AND, GJOP_OR: SQL's three-valued logic */
GJ_HD bool
gj_apply_and_or(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);
	bool		wins = in->op == GJOP_OR;

	/*
	 * AND: false wins over NULL, NULL over true; OR: true over NULL, NULL
	 * over false.  Written without branches (& and |, not && and ||): in a
	 * compiled program it is then a few predicate operations.
	 */
	bool		won = ((!isnull[sp - 1]) & ((stack[sp - 1].i != 0) == wins)) |
		((!isnull[sp]) & ((stack[sp].i != 0) == wins));

	isnull[sp - 1] = (!won) & (isnull[sp - 1] | isnull[sp]);
	stack[sp - 1].i = won ? wins : !wins;
	return true;
}

/* GJOP_NOT, GJOP_IS_NULL, GJOP_IS_NOT_NULL */
GJ_HD bool
gj_apply_logic(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = *spp;

	if (in->op == GJOP_NOT)
	{
		if (!isnull[sp - 1])
			stack[sp - 1].i = !stack[sp - 1].i;
	}
	else
	{
		stack[sp - 1].i = isnull[sp - 1] == (in->op == GJOP_IS_NULL);
		isnull[sp - 1] = false;
	}
	return true;
}

/*
 * int2 and int4 arithmetic in 32 bits, for a kernel compiled for one
 * program (gj_program_narrow decides where): for a and b within int32,
 * the same answer as gj_int_arith(op, type, a, b, &r64) with type GJT_INT2
 * or GJT_INT4, and where that succeeds *result == r64.  That function
 * computes in int64 and range-checks the result; here a 32-bit add or
 * subtract overflows exactly where the int64 result leaves int32 (the
 * sign test below), a product is exact in int64 (mul.wide), and the rest
 * cannot leave int32 but for INT32_MIN / -1 and -INT32_MIN.  Unlike
 * gj_int_arith, *result is written even where the step fails (the pair is
 * rechecked whatever follows, and straight-line code needs no select).
 */
GJ_HD bool
gj_int_arith32(int op, int type, int32_t a, int32_t b, int32_t *result)
{
	int32_t		r;
	bool		ok;

	switch (op)
	{
		case GJOP_ADD:
			r = (int32_t) ((uint32_t) a + (uint32_t) b);
			ok = ((a ^ r) & (b ^ r)) >= 0;	/* same-signed operands, other-signed sum */
			break;
		case GJOP_SUB:
			r = (int32_t) ((uint32_t) a - (uint32_t) b);
			ok = ((a ^ b) & (a ^ r)) >= 0;	/* other-signed operands, sum unlike a */
			break;
		case GJOP_MUL:
			{
				int64_t		p = (int64_t) a * b;

				r = (int32_t) p;
				ok = p == r;
				break;
			}
		case GJOP_DIV:
			ok = b != 0 && !(b == -1 && a == INT32_MIN);
			r = ok ? a / b : 0;
			break;
		case GJOP_MOD:
			ok = b != 0;
			r = (b == 0 || b == -1) ? 0 : a % b;
			break;
		case GJOP_NEG:
			ok = a != INT32_MIN;
			r = (int32_t) (0u - (uint32_t) a);
			break;
		default:				/* GJOP_ABS */
			ok = a != INT32_MIN;
			r = a < 0 ? (int32_t) (0u - (uint32_t) a) : a;
			break;
	}
	if (type == GJT_INT2)
		ok = ok && r >= -32768 && r <= 32767;
	*result = r;
	return ok;
}

/*
 * A 32-bit division by a divisor that many dividends share (an inner row's,
 * in a compiled kernel that prepares the divisors of a chunk once): the
 * hardware has no integer divider, and a / b compiles to about 20
 * instructions (a float reciprocal and its corrections), where a
 * multiplier prepared for b leaves two multiplies.
 *
 * For |b| >= 2 the multiplier (gj_div32_magic) is c = ceil(2^64 / |b|),
 * and |a| / |b| is the high 64 bits of c * |a|: with c * |b| = 2^64 + e,
 * 0 <= e < |b|, c * |a| / 2^64 = |a| / |b| + |a| * e / (|b| * 2^64), and as
 * |a| and e are at most 2^31 the added fraction stays under 1 / |b|, too
 * little to reach the next integer (the remainder of |a| / |b| is at most
 * |b| - 1).  |b| = 1 gets 0 (2^64 does not fit) and unit 1: the quotient
 * is |a|.  b = 0 gets 0 too; its quotient is never read.
 */
typedef struct GjDivisor
{
	uint64_t	magic;			/* gj_div32_magic */
	uint32_t	unit;			/* 1 where magic is 0: |b| <= 1 */
} GjDivisor;

GJ_HD uint64_t
gj_div32_magic(int32_t b)
{
	uint32_t	ub = b < 0 ? 0u - (uint32_t) b : (uint32_t) b;

	return ub <= 1 ? 0 : UINT64_MAX / ub + 1;
}

/* a * b + c in 64 bits: one instruction (IMAD.WIDE.U32) on the device */
GJ_HD uint64_t
gj_mul_wide_add(uint32_t a, uint32_t b, uint64_t c)
{
#ifdef __CUDA_ARCH__
	uint64_t	r;

	asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(a), "r"(b), "l"(c));
	return r;
#else
	return (uint64_t) a * b + c;
#endif
}

/*
 * a / b truncated toward zero, as C's and PostgreSQL's int4div, for the
 * divisor d of b (d.magic = gj_div32_magic(b), d.unit = d.magic == 0),
 * b != 0; INT32_MIN / -1 (which overflows) gives INT32_MIN.  kernel_test
 * checks it against the division.
 */
GJ_HD int32_t
gj_div32_by(int32_t a, int32_t b, GjDivisor d)
{
	uint32_t	ua = a < 0 ? 0u - (uint32_t) a : (uint32_t) a;

	/* the high 32 bits of the 96-bit magic * ua */
	uint64_t	low = gj_mul_wide_add((uint32_t) d.magic, ua, 0);
	uint64_t	high = gj_mul_wide_add((uint32_t) (d.magic >> 32), ua, low >> 32);
	uint32_t	q = (uint32_t) (high >> 32) + ua * d.unit;
	uint32_t	negative = (uint32_t) ((a ^ b) >> 31);	/* all ones: signs differ */

	return (int32_t) ((q ^ negative) - negative);
}

/*
 * gj_apply_arith, gj_apply_unary and gj_apply_compare (integer class) where
 * every operand is an int within int32 (sign-extended in its slot, see
 * gj_program_narrow): the same slots, the same answer, in 32 bits.  A
 * failed step leaves its slot unspecified (gj_int_arith32).
 */
GJ_HD bool
gj_apply_arith32(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);
	int32_t		r;
	bool		ok;

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	ok = gj_int_arith32(in->op, in->type, (int32_t) stack[sp - 1].i, (int32_t) stack[sp].i, &r);
	stack[sp - 1].i = r;
	return ok;
}

GJ_HD bool
gj_apply_unary32(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = *spp;
	int32_t		r;
	bool		ok;

	if (isnull[sp - 1])
		return true;
	ok = gj_int_arith32(in->op, in->type, (int32_t) stack[sp - 1].i, 0, &r);
	stack[sp - 1].i = r;
	return ok;
}

GJ_HD bool
gj_apply_compare32(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);
	int32_t		a = (int32_t) stack[sp - 1].i,
				b = (int32_t) stack[sp].i;

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	stack[sp - 1].i = gj_int_cmp_holds(in->op, a, b);
	return true;
}

/*
 * gj_apply_arith32 of a division or remainder whose divisor came prepared
 * (GjDivisor: a compiled kernel's divisor of an inner row): the same slots
 * and answer, gj_int_arith32's tests, no divide and no branch (nothing
 * traps on a NULL operand's value, which the answer then ignores).
 */
GJ_HD bool
gj_apply_divmod32_by(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp,
					 GjDivisor d)
{
	int			sp = --(*spp);
	int32_t		a = (int32_t) stack[sp - 1].i,
				b = (int32_t) stack[sp].i,
				q = gj_div32_by(a, b, d),
				r;
	bool		null = isnull[sp - 1] | isnull[sp];
	bool		ok;

	if (in->op == GJOP_DIV)
	{
		ok = b != 0 && !(b == -1 && a == INT32_MIN);
		r = q;
	}
	else
	{
		/* a - q * b wraps to 0 for b = -1, as the remainder must be */
		ok = b != 0;
		r = (int32_t) ((uint32_t) a - (uint32_t) q * (uint32_t) b);
	}
	if (in->type == GJT_INT2)
		ok = ok && r >= -32768 && r <= 32767;
	isnull[sp - 1] = null;
	stack[sp - 1].i = r;
	return ok | null;
}

/*
 * gj_apply_arith and gj_apply_unary for a step that cannot fail (a
 * compiled kernel's chunk where gj_bounds_step proved it): the result
 * alone, without the tests for the errors.
 */
GJ_HD bool
gj_apply_arith_value(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	if (gj_type_class(in->type) == GJ_CLASS_FLOAT)
		stack[sp - 1].f = gj_float_arith_value(in->op, in->type, stack[sp - 1].f,
											   stack[sp].f);
	else
		stack[sp - 1].i = gj_int_arith_value(in->op, stack[sp - 1].i, stack[sp].i);
	return true;
}

GJ_HD bool
gj_apply_unary_value(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = *spp;

	if (isnull[sp - 1])
		return true;
	if (gj_type_class(in->type) == GJ_CLASS_FLOAT)
		stack[sp - 1].f = gj_float_arith_value(in->op, in->type, stack[sp - 1].f, 0.0);
	else
		stack[sp - 1].i = gj_int_arith_value(in->op, stack[sp - 1].i, 0);
	return true;
}

/*
 * gj_apply_arith of an integer type in a compiled program's checked steps:
 * the same answer, but the slot holds the wrapped result even where the
 * step fails (the pair is rechecked whatever follows, and no later step
 * traps on it: gj_int_arith_value divides by nothing it has not tested),
 * so that no select keeps the old value: gj_int_arith's own result is
 * dead, its computation shared with this one.
 */
GJ_HD bool
gj_apply_int_arith_fixed(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);
	int64_t		a = stack[sp - 1].i,
				b = stack[sp].i,
				unused;
	bool		ok;

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	ok = gj_int_arith(in->op, in->type, a, b, &unused);
	stack[sp - 1].i = gj_int_arith_value(in->op, a, b);
	return ok;
}

/*
 * gj_apply_arith of a float type in a compiled program's checked steps:
 * the same answer, the slot written even where the step fails (as
 * gj_apply_int_arith_fixed; a float step traps on nothing).
 */
GJ_HD bool
gj_apply_float_arith_fixed(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);
	double		a = stack[sp - 1].f,
				b = stack[sp].f,
				r = gj_float_arith_value(in->op, in->type, a, b);

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	stack[sp - 1].f = r;
	return gj_float_arith_ok(in->op, in->type, a, b, r);
}

/* One instruction other than a load, whichever it is (see above). */
GJ_HD bool
gj_program_apply(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	switch (in->op)
	{
		case GJOP_CONST:
		case GJOP_CONST_NULL:
			return gj_apply_const(in, stack, isnull, spp);
		case GJOP_EQ:
		case GJOP_NE:
		case GJOP_LT:
		case GJOP_LE:
		case GJOP_GT:
		case GJOP_GE:
			return gj_apply_compare(in, stack, isnull, spp);
		case GJOP_ADD:
		case GJOP_SUB:
		case GJOP_MUL:
		case GJOP_DIV:
		case GJOP_MOD:
			return gj_apply_arith(in, stack, isnull, spp);
		case GJOP_NEG:
		case GJOP_ABS:
			return gj_apply_unary(in, stack, isnull, spp);
		case GJOP_DATE_PLI:
		case GJOP_DATE_MII:
			return gj_apply_date_pm(in, stack, isnull, spp);
		case GJOP_DATE_MI:
			return gj_apply_date_mi(in, stack, isnull, spp);
		case GJOP_INT_TO_FLOAT:
		case GJOP_FLOAT_TO_FLOAT4:
		case GJOP_INT_NARROW:
			return gj_apply_convert(in, stack, isnull, spp);
		case GJOP_AND:
		case GJOP_OR:
			return gj_apply_and_or(in, stack, isnull, spp);
		case GJOP_NOT:
		case GJOP_IS_NULL:
		case GJOP_IS_NOT_NULL:
			return gj_apply_logic(in, stack, isnull, spp);
	}
	return true;
}

/*
 * Run a program for one pair, leaving its value in *value / *isnull.
 * Returns GJ_RESULT_RECHECK when a step would raise an error in PostgreSQL,
 * else GJ_RESULT_TRUE.  Programs that read only the outer side (the bounds
 * of a range join) may be run with inner == NULL.  Column numbers and the
 * stack depth were checked by the compiler, so the interpreter trusts them.
 *
 * gj_program_run_from starts at instruction pc0 with depth0 slots of TRUE
 * on the stack: the rest of a program whose leading compares a pair is
 * known to pass (gj_program_leading_compares).
 */
GJ_HD int
gj_program_run_from(const GjInstr *instrs, int ninstrs, int pc0, int depth0,
					const GjKeyColumns *outer, int64_t outer_row,
					const GjKeyColumns *inner, int64_t inner_row,
					GjSlot *value, bool *value_isnull)
{
	GjSlot		stack[GJ_MAX_STACK];
	bool		isnull[GJ_MAX_STACK];
	int			sp;
	int			pc;

	for (sp = 0; sp < depth0; sp++)
	{
		stack[sp].i = 1;
		isnull[sp] = false;
	}
	for (pc = pc0; pc < ninstrs; pc++)
	{
		const GjInstr *in = &instrs[pc];

		if (in->op == GJOP_LOAD_OUTER || in->op == GJOP_LOAD_INNER)
		{
			const GjKeyColumns *side = (in->op == GJOP_LOAD_OUTER) ? outer : inner;
			int64_t		row = (in->op == GJOP_LOAD_OUTER) ? outer_row : inner_row;

			stack[sp].i = side->values[in->arg][row];
			isnull[sp] = side->isnull[in->arg] != NULL && side->isnull[in->arg][row];
			sp++;
		}
		else if (!gj_program_apply(in, stack, isnull, &sp))
			return GJ_RESULT_RECHECK;
	}
	*value = stack[0];
	*value_isnull = isnull[0];
	return GJ_RESULT_TRUE;
}

/*
 * Bounds of a program's values over many pairs, to prove that no step can
 * fail for any of them: a kernel compiled for one program then counts
 * them without the tests for errors (compiled_count.cuh, chunk by chunk).
 * A slot's bounds hold every value it takes where it is not NULL (a NULL
 * operand fails no step); flt marks a converted float, on which no integer
 * step is proved.  fmag bounds the magnitude of the slot's finite values
 * read as float8 (the bits of |v|: their order is the magnitudes'), for
 * every slot, whatever its type (gj_bounds_fmag).  gj_bounds_step applies
 * one instruction other than a load and returns false where the step
 * might fail for some values within the bounds: integer arithmetic whose
 * bounds, computed exactly (any int64 overflow of a bound counts as a
 * failure), leave the result type's range or divide by a range holding 0;
 * narrowing out of range; a float8 sum or difference of an operand above
 * 2^1022 (which may overflow: below, it cannot reach DBL_MAX; an infinite
 * or NaN operand makes a result PostgreSQL allows); float products and
 * quotients (they also underflow), float4 arithmetic and rounding, and
 * dates always.
 */
typedef struct GjBounds
{
	int64_t		lo;
	int64_t		hi;
	bool		flt;
	uint64_t	fmag;
} GjBounds;

/* The magnitude bound of one value as float8: |v|'s bits, 0 if not finite. */
GJ_HD uint64_t
gj_bounds_fmag(int64_t v)
{
	uint64_t	m = (uint64_t) v & 0x7fffffffffffffffULL;

	return m < 0x7ff0000000000000ULL ? m : 0;
}

/* Bounds of float arithmetic (GJOP_ADD .. GJOP_ABS); false if it may fail. */
GJ_HD bool
gj_bounds_float(int op, int type, GjBounds a, GjBounds b, GjBounds *r)
{
	const uint64_t limit = 0x7fd0000000000000ULL;	/* 2^1022 */
	uint64_t	m = a.fmag > b.fmag ? a.fmag : b.fmag;

	r->lo = r->hi = 0;
	r->flt = true;
	r->fmag = a.fmag;
	if (type != GJT_FLOAT8)
		return false;
	switch (op)
	{
		case GJOP_NEG:
		case GJOP_ABS:
			return true;
		case GJOP_ADD:
		case GJOP_SUB:
			/* |a +- b| <= 2 max(|a|, |b|): one more in the exponent */
			r->fmag = m + ((uint64_t) 1 << 52);
			return m <= limit;
		default:
			return false;
	}
}

GJ_HD int	gj_instr_pops(int op);

/* |v|, INT64_MAX for INT64_MIN (a bound, so rounding up is safe) */
GJ_HD int64_t
gj_bounds_abs(int64_t v)
{
	return v == INT64_MIN ? INT64_MAX : v < 0 ? -v : v;
}

/* Bounds of integer arithmetic (GJOP_ADD .. GJOP_ABS); false if it may fail. */
GJ_HD bool
gj_bounds_arith(int op, int type, GjBounds a, GjBounds b, GjBounds *r)
{
	int64_t		c[4] = {0, 0, 0, 0};
	int			n = 2;
	bool		ok = true;

	switch (op)
	{
		case GJOP_ADD:
			ok = gj_int_arith(GJOP_ADD, GJT_INT8, a.lo, b.lo, &c[0]) &&
				gj_int_arith(GJOP_ADD, GJT_INT8, a.hi, b.hi, &c[1]);
			break;
		case GJOP_SUB:
			ok = gj_int_arith(GJOP_SUB, GJT_INT8, a.lo, b.hi, &c[0]) &&
				gj_int_arith(GJOP_SUB, GJT_INT8, a.hi, b.lo, &c[1]);
			break;
		case GJOP_MUL:
		case GJOP_DIV:
			/* monotonic in each operand where the divisor keeps its sign */
			if (op == GJOP_DIV && b.lo <= 0 && b.hi >= 0)
				return false;
			n = 4;
			ok = gj_int_arith(op, GJT_INT8, a.lo, b.lo, &c[0]) &&
				gj_int_arith(op, GJT_INT8, a.lo, b.hi, &c[1]) &&
				gj_int_arith(op, GJT_INT8, a.hi, b.lo, &c[2]) &&
				gj_int_arith(op, GJT_INT8, a.hi, b.hi, &c[3]);
			break;
		case GJOP_MOD:
			{
				/* |a % b| < |b| and <= |a|, its sign a's */
				int64_t		m = gj_bounds_abs(b.lo) > gj_bounds_abs(b.hi) ?
				gj_bounds_abs(b.lo) - 1 : gj_bounds_abs(b.hi) - 1;
				int64_t		ma = gj_bounds_abs(a.lo) > gj_bounds_abs(a.hi) ?
				gj_bounds_abs(a.lo) : gj_bounds_abs(a.hi);

				if (b.lo <= 0 && b.hi >= 0)
					return false;
				m = m < ma ? m : ma;
				c[0] = a.lo < 0 ? -m : 0;
				c[1] = a.hi > 0 ? m : 0;
				break;
			}
		case GJOP_NEG:
			if (a.lo == INT64_MIN)
				return false;
			c[0] = -a.hi;
			c[1] = -a.lo;
			break;
		default:				/* GJOP_ABS */
			if (a.lo == INT64_MIN)
				return false;
			c[0] = a.lo >= 0 ? a.lo : a.hi <= 0 ? -a.hi : 0;
			c[1] = a.lo >= 0 ? a.hi : a.hi <= 0 ? -a.lo : (-a.lo > a.hi ? -a.lo : a.hi);
			break;
	}
	r->lo = r->hi = c[0];
	r->flt = false;
	for (int k = 1; k < n; k++)
	{
		r->lo = c[k] < r->lo ? c[k] : r->lo;
		r->hi = c[k] > r->hi ? c[k] : r->hi;
	}
	return ok && gj_int_in_range(type, r->lo) && gj_int_in_range(type, r->hi);
}

/* One instruction other than a load over the bounds of *spp slots (above). */
GJ_HD bool
gj_bounds_step(const GjInstr *in, GjBounds *st, int *spp)
{
	int			pops = gj_instr_pops(in->op);
	int			sp = *spp - pops;
	GjBounds	zero = {0, 0, false, 0};
	GjBounds	a = pops >= 1 ? st[sp] : zero;
	GjBounds	b = pops == 2 ? st[sp + 1] : zero;
	GjBounds	r = {0, 1, false, 1};	/* a boolean */
	bool		ok = true;

	switch (in->op)
	{
		case GJOP_CONST:
			r.lo = r.hi = in->imm;
			r.flt = gj_type_class(in->type) == GJ_CLASS_FLOAT;
			r.fmag = gj_bounds_fmag(in->imm);
			break;
		case GJOP_CONST_NULL:
			r.hi = 0;
			break;
		case GJOP_ADD:
		case GJOP_SUB:
		case GJOP_MUL:
		case GJOP_DIV:
		case GJOP_MOD:
		case GJOP_NEG:
		case GJOP_ABS:
			if (gj_type_class(in->type) == GJ_CLASS_FLOAT)
				ok = gj_bounds_float(in->op, in->type, a, b, &r);
			else
				ok = !a.flt && !b.flt && gj_bounds_arith(in->op, in->type, a, b, &r);
			r.fmag = gj_type_class(in->type) == GJ_CLASS_FLOAT ? r.fmag : 0x7fefffffffffffffULL;
			break;
		case GJOP_INT_NARROW:
			ok = !a.flt && gj_int_in_range(in->type, a.lo) && gj_int_in_range(in->type, a.hi);
			r = a;
			break;
		case GJOP_INT_TO_FLOAT:
			{
				/* |v| as a double rounds up by less than doubling it */
				int64_t		m = gj_bounds_abs(a.lo) > gj_bounds_abs(a.hi) ?
				gj_bounds_abs(a.lo) : gj_bounds_abs(a.hi);

				r.flt = true;
				r.fmag = gj_bounds_fmag(gj_double_to_bits((double) m)) + ((uint64_t) 1 << 52);
				break;
			}
		case GJOP_FLOAT_TO_FLOAT4:
		case GJOP_DATE_PLI:
		case GJOP_DATE_MII:
		case GJOP_DATE_MI:
			ok = false;
			break;
		default:				/* compares and logic: a boolean, never fail */
			break;
	}
	st[sp] = r;
	*spp = sp + 1;
	return ok;
}

/*
 * Can no step from instruction pc0 on (with depth0 booleans on the stack)
 * fail for any outer row within outer's bounds and inner row within
 * inner's, column by column?  The host's version of what
 * compiled_count.cuh proves per chunk, for kernel_test.
 */
GJ_HD bool
gj_program_bounds(const GjInstr *instrs, int ninstrs, int pc0, int depth0,
				  const GjBounds *outer, const GjBounds *inner)
{
	GjBounds	st[GJ_MAX_STACK];
	int			sp = 0;
	bool		ok = true;

	for (; sp < depth0; sp++)
	{
		st[sp].lo = 0;
		st[sp].hi = 1;
		st[sp].flt = false;
		st[sp].fmag = 1;
	}
	for (int pc = pc0; pc < ninstrs; pc++)
	{
		if (instrs[pc].op == GJOP_LOAD_OUTER || instrs[pc].op == GJOP_LOAD_INNER)
			st[sp++] = (instrs[pc].op == GJOP_LOAD_OUTER ? outer : inner)[instrs[pc].arg];
		else
			ok = gj_bounds_step(&instrs[pc], st, &sp) && ok;
	}
	return ok;
}

#ifdef __CUDACC__
/*
 * gj_program_apply for an opcode known when the kernel is compiled: the
 * function of its group, called directly (an opcode this does not list
 * goes through the switch, which then folds as well).
 */
template <int OP>
__device__ __forceinline__ bool
gj_program_apply_op(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	if constexpr (OP == GJOP_CONST || OP == GJOP_CONST_NULL)
		return gj_apply_const(in, stack, isnull, spp);
	else if constexpr (OP >= GJOP_EQ && OP <= GJOP_GE)
		return gj_apply_compare(in, stack, isnull, spp);
	else if constexpr (OP >= GJOP_ADD && OP <= GJOP_MOD)
		return gj_apply_arith(in, stack, isnull, spp);
	else if constexpr (OP == GJOP_NEG || OP == GJOP_ABS)
		return gj_apply_unary(in, stack, isnull, spp);
	else if constexpr (OP == GJOP_AND || OP == GJOP_OR)
		return gj_apply_and_or(in, stack, isnull, spp);
	else
		return gj_program_apply(in, stack, isnull, spp);
}

/*
 * Is instruction pc of Prog a constant that is not a float NaN (as bits of
 * a double: an integer constant is never read as a float)?
 */
template <typename Prog>
__host__ __device__ constexpr bool
gj_fixed_not_nan_const(int pc)
{
	return pc >= 0 && Prog::instrs[pc].op == GJOP_CONST &&
		(((uint64_t) Prog::instrs[pc].imm & 0x7ff0000000000000ULL) != 0x7ff0000000000000ULL ||
		 ((uint64_t) Prog::instrs[pc].imm & 0x000fffffffffffffULL) == 0);
}

/*
 * Which operand of the float compare at pc is a constant other than NaN:
 * 2 the right one (the instruction before pushed it), 1 the left one (a
 * constant, then one load), 0 neither or not a float compare.
 */
template <typename Prog>
__host__ __device__ constexpr int
gj_fixed_known_operand(int pc)
{
	constexpr int n = Prog::ninstrs;
	GjInstr		in = Prog::instrs[pc < n ? pc : 0];

	if (!(in.op >= GJOP_EQ && in.op <= GJOP_GE) || in.type != GJ_CLASS_FLOAT)
		return 0;
	if (gj_fixed_not_nan_const<Prog>(pc - 1))
		return 2;
	if (pc >= 2 && (Prog::instrs[pc - 1].op == GJOP_LOAD_OUTER ||
					Prog::instrs[pc - 1].op == GJOP_LOAD_INNER) &&
		gj_fixed_not_nan_const<Prog>(pc - 2))
		return 1;
	return 0;
}

/* gj_apply_compare of floats, one operand a constant other than NaN */
template <bool B_NOT_NAN>
__device__ __forceinline__ bool
gj_apply_compare_known(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	int			sp = --(*spp);

	if (isnull[sp - 1] || isnull[sp])
	{
		isnull[sp - 1] = true;
		return true;
	}
	stack[sp - 1].i = gj_float_cmp_holds_known(in->op, stack[sp - 1].f, stack[sp].f,
											   B_NOT_NAN);
	return true;
}

/*
 * The same in 32 bits, for an instruction gj_program_narrow marked (an
 * integer compare, int2/int4 arithmetic).
 */
template <int OP>
__device__ __forceinline__ bool
gj_program_apply_op32(const GjInstr *in, GjSlot *stack, bool *isnull, int *spp)
{
	if constexpr (OP >= GJOP_EQ && OP <= GJOP_GE)
		return gj_apply_compare32(in, stack, isnull, spp);
	else if constexpr (OP >= GJOP_ADD && OP <= GJOP_MOD)
		return gj_apply_arith32(in, stack, isnull, spp);
	else
		return gj_apply_unary32(in, stack, isnull, spp);
}

/* The range of Prog's hoisted ones (GjHoisting) that starts at pc, or -1. */
template <typename Prog>
__host__ __device__ constexpr int
gj_fixed_hoisted_at(int pc)
{
	for (int h = 0; h < Prog::nhoisted; h++)
	{
		if (Prog::hoisted[h].start == pc)
			return h;
	}
	return -1;
}

/*
 * Is the instruction at pc a 32-bit division or remainder whose divisor is
 * a hoisted range that comes with its gj_div32_magic?
 */
template <typename Prog>
__host__ __device__ constexpr bool
gj_fixed_magic_divisor(int pc)
{
	for (int h = 0; h < Prog::nhoisted; h++)
	{
		if (Prog::hoisted[h].end == pc && Prog::hoisted[h].divisor)
			return true;
	}
	return false;
}

/* The hoisted ranges of a caller that has none. */
struct GjNoHoisted
{
	__device__ bool operator() (int h, GjSlot *slot, bool *isnull, GjDivisor *divisor) const
	{
		return true;
	}
	__device__ bool operator() (int h, GjBounds *bounds) const
	{
		return true;
	}
};

/*
 * Instructions PC to END - 1 of Prog::instrs (a constexpr array of
 * Prog::ninstrs), each applied as the interpreter would, its opcode and
 * operands constants: a kernel compiled for one program (cuda_compile.cu).
 * Those Prog::op32 marks (gj_program_narrow) run in 32 bits, with the same
 * answers.
 *
 * HOIST: a range of Prog::hoisted (gj_program_hoist: the inner row's
 * alone) is not evaluated; hoisted(h, &slot, &isnull, &divisor) pushes what
 * the kernel computed for the inner row when it staged it, and whether
 * its steps succeeded.  A division or remainder of such a divisor
 * multiplies by what hoisted() prepared for it (GjDivisor).
 */
template <typename Prog, int PC, int END, bool HOIST, bool CHECKED, typename Load,
		  typename Hoisted>
__device__ __forceinline__ void
gj_program_steps_fixed(GjSlot *stack, bool *isnull, int *sp, bool *ok, GjDivisor *divisor,
					   Load &load, Hoisted &hoisted)
{
	if constexpr (PC < END)
	{
		constexpr GjInstr in = Prog::instrs[PC];
		constexpr int h = HOIST ? gj_fixed_hoisted_at<Prog>(PC) : -1;
		constexpr int next = h >= 0 ? Prog::hoisted[h >= 0 ? h : 0].end : PC + 1;

		if constexpr (h >= 0)
		{
			*ok = hoisted(h, &stack[*sp], &isnull[*sp], divisor) & *ok;
			(*sp)++;
		}
		else if constexpr (in.op == GJOP_LOAD_OUTER || in.op == GJOP_LOAD_INNER)
		{
			load(in.op == GJOP_LOAD_OUTER, in.arg, &stack[*sp], &isnull[*sp]);
			(*sp)++;
		}
		else if constexpr (HOIST && Prog::op32[PC] && gj_fixed_magic_divisor<Prog>(PC))
			*ok = gj_apply_divmod32_by(&in, stack, isnull, sp, *divisor) & *ok;
		else if constexpr (Prog::op32[PC])
			*ok = gj_program_apply_op32<in.op>(&in, stack, isnull, sp) & *ok;
		else if constexpr (gj_fixed_known_operand<Prog>(PC) != 0)
			gj_apply_compare_known<gj_fixed_known_operand<Prog>(PC) == 2>(&in, stack, isnull,
																			sp);
		else if constexpr (!CHECKED && in.op >= GJOP_ADD && in.op <= GJOP_MOD)
			gj_apply_arith_value(&in, stack, isnull, sp);
		else if constexpr (in.op >= GJOP_ADD && in.op <= GJOP_MOD &&
						   in.type != GJT_FLOAT4 && in.type != GJT_FLOAT8)
			*ok = gj_apply_int_arith_fixed(&in, stack, isnull, sp) & *ok;
		else if constexpr (in.op >= GJOP_ADD && in.op <= GJOP_DIV)
			*ok = gj_apply_float_arith_fixed(&in, stack, isnull, sp) & *ok;
		else if constexpr (!CHECKED && (in.op == GJOP_NEG || in.op == GJOP_ABS))
			gj_apply_unary_value(&in, stack, isnull, sp);
		else
			*ok = gj_program_apply_op<in.op>(&in, stack, isnull, sp) & *ok;
		gj_program_steps_fixed<Prog, next, END, HOIST, CHECKED>(stack, isnull, sp, ok, divisor,
																load, hoisted);
	}
}

/*
 * Hoisted range H of Prog for one inner row (the loads read it): its
 * value and NULL flag; false where one of its steps failed.
 */
template <typename Prog, int H, typename Load>
__device__ __forceinline__ bool
gj_program_range_fixed(GjSlot *value, bool *isnull, Load load)
{
	GjSlot		stack[GJ_MAX_STACK];
	bool		nulls[GJ_MAX_STACK];
	int			sp = 0;
	bool		ok = true;
	GjDivisor	divisor = {0, 0};
	GjNoHoisted none;

	gj_program_steps_fixed<Prog, Prog::hoisted[H].start, Prog::hoisted[H].end, false, true>(
		stack, nulls, &sp, &ok, &divisor, load, none);
	*value = stack[0];
	*isnull = nulls[0];
	return ok;
}

/*
 * gj_program_bounds over instructions PC on of a program that is a
 * compile-time constant (Prog); load(outer, col, &bounds) pushes a
 * column's bounds.  HOIST: hoisted(h, &bounds) pushes a hoisted range's
 * bounds over the chunk, false where a step of it failed for a row.
 */
template <typename Prog, int PC, bool HOIST, typename Load, typename Hoisted>
__device__ __forceinline__ void
gj_program_bounds_fixed(GjBounds *st, int *sp, bool *ok, Load &load, Hoisted &hoisted)
{
	if constexpr (PC < Prog::ninstrs)
	{
		constexpr GjInstr in = Prog::instrs[PC];
		constexpr int h = HOIST ? gj_fixed_hoisted_at<Prog>(PC) : -1;
		constexpr int next = h >= 0 ? Prog::hoisted[h >= 0 ? h : 0].end : PC + 1;

		if constexpr (h >= 0)
		{
			*ok = hoisted(h, &st[*sp]) & *ok;
			(*sp)++;
		}
		else if constexpr (in.op == GJOP_LOAD_OUTER || in.op == GJOP_LOAD_INNER)
		{
			load(in.op == GJOP_LOAD_OUTER, in.arg, &st[*sp]);
			(*sp)++;
		}
		else
			*ok = gj_bounds_step(&in, st, sp) & *ok;
		gj_program_bounds_fixed<Prog, next, HOIST>(st, sp, ok, load, hoisted);
	}
}

/*
 * gj_program_run_from from instruction PC0 with DEPTH0 slots of TRUE,
 * then gj_program_eval_from's answer, for a program that is a
 * compile-time constant (Prog, see gj_program_steps_fixed): each step
 * folds to the few operations of its instruction, and the stack, its
 * depth known at every step, lives in registers.  load(outer, col, &slot,
 * &isnull) pushes a column's value (from registers or shared memory, as
 * the kernel keeps them).
 *
 * Every step runs, even after one that asks for a recheck: the answer is
 * then GJ_RESULT_RECHECK whatever the later steps compute, as the
 * interpreter's early return, and straight-line code needs no branch.  No
 * step can trap on what an earlier failed one left (gj_int_arith tests a
 * divisor before it divides).
 *
 * CHECKED false: the caller proved that no step fails for the pair
 * (gj_program_bounds_fixed), so integer arithmetic computes its result
 * alone and the answer is TRUE or FALSE: the tests for errors are dead
 * code.  HOIST: see gj_program_steps_fixed.
 */
template <typename Prog, int PC0, int DEPTH0, bool CHECKED, bool HOIST = false,
		  typename Load, typename Hoisted = GjNoHoisted>
__device__ __forceinline__ int
gj_program_eval_fixed(Load load, Hoisted hoisted = Hoisted())
{
	GjSlot		stack[GJ_MAX_STACK];
	bool		isnull[GJ_MAX_STACK];
	int			sp = DEPTH0;
	bool		ok = true;
	GjDivisor	divisor = {0, 0};

#pragma unroll
	for (int k = 0; k < DEPTH0; k++)
	{
		stack[k].i = 1;
		isnull[k] = false;
	}
	gj_program_steps_fixed<Prog, PC0, Prog::ninstrs, HOIST, CHECKED>(stack, isnull, &sp, &ok,
																	   &divisor, load, hoisted);
	if (CHECKED && !ok)
		return GJ_RESULT_RECHECK;
	return ((!isnull[0]) & (stack[0].i != 0)) ? GJ_RESULT_TRUE : GJ_RESULT_FALSE;
}
#endif

GJ_HD int
gj_program_run(const GjInstr *instrs, int ninstrs,
			   const GjKeyColumns *outer, int64_t outer_row,
			   const GjKeyColumns *inner, int64_t inner_row,
			   GjSlot *value, bool *value_isnull)
{
	return gj_program_run_from(instrs, ninstrs, 0, 0, outer, outer_row, inner, inner_row,
							   value, value_isnull);
}

/* Evaluate a boolean program (the AND of the device quals) for one pair. */
GJ_HD int
gj_program_eval(const GjInstr *instrs, int ninstrs,
				const GjKeyColumns *outer, int64_t outer_row,
				const GjKeyColumns *inner, int64_t inner_row)
{
	GjSlot		value;
	bool		isnull;

	if (gj_program_run(instrs, ninstrs, outer, outer_row, inner, inner_row,
					   &value, &isnull) == GJ_RESULT_RECHECK)
		return GJ_RESULT_RECHECK;
	return (!isnull && value.i) ? GJ_RESULT_TRUE : GJ_RESULT_FALSE;
}

/*
 * The common shape "outer column OP inner column" (or reversed) runs through
 * a specialised loop instead of the interpreter.  gj_program_simple_compare
 * recognises it, normalised so that the outer column is on the left.
 */
typedef struct GjSimpleCompare
{
	int			op;				/* GJOP_EQ .. GJOP_GE, outer OP inner */
	int			cls;			/* GjClass of both columns */
	int			outer_col;
	int			inner_col;
} GjSimpleCompare;

GJ_HD int
gj_commute_cmp(int op)
{
	switch (op)
	{
		case GJOP_LT:
			return GJOP_GT;
		case GJOP_LE:
			return GJOP_GE;
		case GJOP_GT:
			return GJOP_LT;
		case GJOP_GE:
			return GJOP_LE;
		default:
			return op;
	}
}

GJ_HD bool
gj_program_simple_compare(const GjInstr *instrs, int ninstrs, GjSimpleCompare *sc)
{
	if (ninstrs != 3 || instrs[2].op < GJOP_EQ || instrs[2].op > GJOP_GE)
		return false;
	if (instrs[0].op == GJOP_LOAD_OUTER && instrs[1].op == GJOP_LOAD_INNER)
	{
		sc->op = instrs[2].op;
		sc->outer_col = instrs[0].arg;
		sc->inner_col = instrs[1].arg;
	}
	else if (instrs[0].op == GJOP_LOAD_INNER && instrs[1].op == GJOP_LOAD_OUTER)
	{
		sc->op = gj_commute_cmp(instrs[2].op);
		sc->outer_col = instrs[1].arg;
		sc->inner_col = instrs[0].arg;
	}
	else
		return false;
	sc->cls = instrs[2].type;
	return true;
}

/*
 * An AND of simple compares, "outer.a < inner.a AND outer.b > inner.b": per
 * outer row, the number of inner rows it matches can then be counted
 * without the interpreter (the aggregate steps need only that).
 */
#define GJ_MAX_CONJUNCTS	4

typedef struct GjCompareConjunction
{
	int32_t		n;
	GjSimpleCompare cmp[GJ_MAX_CONJUNCTS];
} GjCompareConjunction;

/*
 * Is the program an AND (any nesting of GJOP_AND) of 1..GJ_MAX_CONJUNCTS
 * simple compares "outer col OP inner col" (either operand order,
 * normalised outer-left as gj_program_simple_compare does)?  A pair then
 * matches iff every compare holds on non-NULL values: AND is false as soon
 * as one compare is, and NULL (no match) when one operand is NULL.
 *
 * The compiler emits a qual's compare as LOAD, LOAD, CMP and ANDs each
 * qual after the first (gpujoin_expr_compile.c), so the program is read as
 * postfix: every LOAD starts a three-instruction compare, every AND takes
 * two booleans from the stack, and exactly one must be left.
 */
GJ_HD bool
gj_program_compare_conjunction(const GjInstr *instrs, int ninstrs, GjCompareConjunction *conj)
{
	int			depth = 0;
	int			pc = 0;

	conj->n = 0;
	while (pc < ninstrs)
	{
		if (instrs[pc].op == GJOP_AND)
		{
			if (depth < 2)
				return false;
			depth--;
			pc++;
			continue;
		}
		if (conj->n == GJ_MAX_CONJUNCTS || ninstrs - pc < 3 ||
			!gj_program_simple_compare(&instrs[pc], 3, &conj->cmp[conj->n]) ||
			(conj->cmp[conj->n].cls != GJ_CLASS_INT &&
			 conj->cmp[conj->n].cls != GJ_CLASS_FLOAT))
			return false;
		conj->n++;
		depth++;
		pc += 3;
	}
	return depth == 1;
}

/*
 * A conjunction of exactly two compares, each of < <= > >=: the 2-D
 * dominance shape that gj_cpu_dominance_* count without evaluating pairs.
 */
GJ_HD bool
gj_conjunction_is_dominance(const GjCompareConjunction *conj)
{
	return conj->n == 2 &&
		conj->cmp[0].op >= GJOP_LT && conj->cmp[0].op <= GJOP_GE &&
		conj->cmp[1].op >= GJOP_LT && conj->cmp[1].op <= GJOP_GE;
}

/*
 * The leading simple compares of a program that is more than a compare
 * conjunction ("r.a < s.a AND r.b > s.b AND r.a + s.b > 0"): the compares
 * the program starts with, read as gj_program_compare_conjunction reads
 * them, such that the rest of the program only ANDs more onto them.  A
 * pair the program finds TRUE then meets every one of them, so a counter
 * may test them first, with integer compares of order keys, and run only
 * the rest of the program (gj_program_eval_from at pc, with depth TRUE
 * slots) for the pairs that pass: a prefilter.
 *
 * A pair that fails a leading compare is dropped without the rest of the
 * program, even where the rest would have asked the host to recheck it (an
 * overflow): the host evaluates the quals in the program's order and stops
 * at the first that is not true, as PostgreSQL's ExecQual does, so it would
 * have dropped that pair too.  That is why only the compares the program
 * starts with count, never one after another qual.
 */
typedef struct GjLeadingCompares
{
	GjCompareConjunction conj;	/* n = 0: none, run the whole program */
	int32_t		pc;				/* the first instruction after them */
	int32_t		depth;			/* the stack slots they leave */
} GjLeadingCompares;

/*
 * How many stack slots an instruction pops (it always pushes one); -1 for
 * an opcode the interpreter does not know.
 */
GJ_HD int
gj_instr_pops(int op)
{
	switch (op)
	{
		case GJOP_LOAD_OUTER:
		case GJOP_LOAD_INNER:
		case GJOP_CONST:
		case GJOP_CONST_NULL:
			return 0;
		case GJOP_NEG:
		case GJOP_ABS:
		case GJOP_INT_TO_FLOAT:
		case GJOP_FLOAT_TO_FLOAT4:
		case GJOP_INT_NARROW:
		case GJOP_NOT:
		case GJOP_IS_NULL:
		case GJOP_IS_NOT_NULL:
			return 1;
		case GJOP_EQ:
		case GJOP_NE:
		case GJOP_LT:
		case GJOP_LE:
		case GJOP_GT:
		case GJOP_GE:
		case GJOP_ADD:
		case GJOP_SUB:
		case GJOP_MUL:
		case GJOP_DIV:
		case GJOP_MOD:
		case GJOP_DATE_PLI:
		case GJOP_DATE_MII:
		case GJOP_DATE_MI:
		case GJOP_AND:
		case GJOP_OR:
			return 2;
		default:
			return -1;
	}
}

/*
 * Where a kernel compiled for one program may compute in 32 bits
 * (gj_int_arith32): an int2, int4 or date value is an int within int32,
 * which the host stores sign-extended in its int64 (key_encoding.h's
 * gj_datum_to_value), and so is the result of int2 and int4 arithmetic
 * that succeeded (range-checked) and every boolean.  gj_program_narrow
 * follows that through the stack: an integer compare of two such values,
 * and int2/int4 arithmetic on them, run in 32 bits, with the same
 * answers; a column every load of which reads such a value is kept in
 * 32 bits (staged in shared memory, held in registers).  Everything else
 * (int8, floats, oids, which are unsigned, and the host's encodings) stays
 * in 64 bits, as the interpreter runs it.
 *
 * The value of a NULL slot is never read by any step (each tests the NULL
 * flags first), so only values that are not NULL need be within int32.
 */
typedef struct GjNarrowing
{
	uint8_t		op32[GJ_MAX_INSTRS];	/* 1: the instruction runs in 32 bits */
	uint8_t		v32[GJ_MAX_INSTRS]; /* 1: the slot it leaves is an int in int32 */
	uint32_t	outer_cols;		/* columns every load of which is an int in int32 */
	uint32_t	inner_cols;
	uint32_t	outer_wide;		/* integer columns loaded in 64 bits */
	uint32_t	inner_wide;
	int32_t		nops32;			/* integer compares and arithmetic in 32 bits */
	int32_t		nops64;			/* and in 64 bits */
} GjNarrowing;

/* Is a loaded value of the type an int within int32? */
GJ_HD bool
gj_type_narrow(int type)
{
	return type == GJT_INT2 || type == GJT_INT4 || type == GJT_DATE;
}

GJ_HD void
gj_program_narrow(const GjInstr *instrs, int ninstrs, GjNarrowing *nw)
{
	bool		value[GJ_MAX_STACK];	/* the slot, where not NULL, is in int32 */
	uint32_t	loaded[2] = {0, 0};
	uint32_t	wide[2] = {0, 0};	/* loaded in 64 bits at least once */
	uint32_t	wide_int[2] = {0, 0};	/* of those, as an integer type */
	int			sp = 0;

	nw->nops32 = nw->nops64 = 0;
	for (int pc = 0; pc < GJ_MAX_INSTRS; pc++)
		nw->op32[pc] = nw->v32[pc] = 0;
	for (int pc = 0; pc < ninstrs && pc < GJ_MAX_INSTRS; pc++)
	{
		const GjInstr *in = &instrs[pc];
		int			pops = gj_instr_pops(in->op);
		bool		int_type = in->type == GJT_INT2 || in->type == GJT_INT4;
		bool		a,
					b,
					v = false,
					op32 = false,
					integer_op = false;

		if (pops < 0 || pops > sp || sp - pops >= GJ_MAX_STACK)
		{
			/* not a program the compiler makes: nothing in 32 bits */
			for (int k = 0; k < GJ_MAX_INSTRS; k++)
				nw->op32[k] = nw->v32[k] = 0;
			nw->nops64 += nw->nops32;
			nw->nops32 = 0;
			wide[0] = wide_int[0] = loaded[0];
			wide[1] = wide_int[1] = loaded[1];
			break;
		}
		a = pops >= 1 && value[sp - pops];
		b = pops == 2 && value[sp - 1];
		switch (in->op)
		{
			case GJOP_LOAD_OUTER:
			case GJOP_LOAD_INNER:
				{
					int			side = in->op == GJOP_LOAD_INNER;

					v = gj_type_narrow(in->type);
					if (in->arg >= 0 && in->arg < GJ_MAX_KEY_COLS)
					{
						loaded[side] |= 1u << in->arg;
						if (!v)
							wide[side] |= 1u << in->arg;
						if (!v && gj_type_class(in->type) == GJ_CLASS_INT)
							wide_int[side] |= 1u << in->arg;
					}
					break;
				}
			case GJOP_CONST:
				v = gj_type_narrow(in->type) && in->imm >= INT32_MIN && in->imm <= INT32_MAX;
				break;
			case GJOP_CONST_NULL:
				v = true;
				break;
			case GJOP_EQ:
			case GJOP_NE:
			case GJOP_LT:
			case GJOP_LE:
			case GJOP_GT:
			case GJOP_GE:
				integer_op = in->type == GJ_CLASS_INT;
				op32 = integer_op && a && b;
				v = true;
				break;
			case GJOP_ADD:
			case GJOP_SUB:
			case GJOP_MUL:
			case GJOP_DIV:
			case GJOP_MOD:
				integer_op = gj_type_class(in->type) == GJ_CLASS_INT;
				op32 = int_type && a && b;
				v = int_type;
				break;
			case GJOP_NEG:
			case GJOP_ABS:
				integer_op = gj_type_class(in->type) == GJ_CLASS_INT;
				op32 = int_type && a;
				v = int_type;
				break;
			case GJOP_INT_NARROW:
				v = int_type;
				break;
			case GJOP_DATE_PLI:
			case GJOP_DATE_MII:
				/* an infinite date stays, any other result is in the date range */
				v = a;
				break;
			case GJOP_AND:
			case GJOP_OR:
			case GJOP_NOT:
			case GJOP_IS_NULL:
			case GJOP_IS_NOT_NULL:
				v = true;
				break;
			default:
				break;
		}
		nw->op32[pc] = op32;
		nw->v32[pc] = v;
		nw->nops32 += op32;
		nw->nops64 += integer_op && !op32;
		sp -= pops;
		value[sp++] = v;
	}
	nw->outer_cols = loaded[0] & ~wide[0];
	nw->inner_cols = loaded[1] & ~wide[1];
	nw->outer_wide = wide_int[0];
	nw->inner_wide = wide_int[1];
}

/*
 * The name of a program's compiled kernel, as kernel_test prints it:
 * compiled32 where its integers are all in 32 bits, compiled64 where none
 * is (int8, floats), compiled32/64 for a mix.
 */
GJ_HD const char *
gj_program_variant(const GjNarrowing *nw)
{
	bool		some32 = nw->nops32 > 0 || nw->outer_cols != 0 || nw->inner_cols != 0;
	bool		some64 = nw->nops64 > 0 || nw->outer_wide != 0 || nw->inner_wide != 0;

	return !some32 ? "compiled64" : some64 ? "compiled32/64" : "compiled32";
}

/*
 * Subexpressions of the inner row alone, which a compiled nested-loop
 * kernel evaluates once per inner row when it stages a chunk, instead of
 * once per pair: the divisor of "o.x / (i.y + 1)", the bounds of
 * "o.t BETWEEN i.t - 12 AND i.t + 12".  gj_program_hoist finds the
 * largest ones that hold an operator (a load alone is staged as it is),
 * over inner columns and constants, from instruction pc0 on (after the
 * leading compares); the kernel keeps each one's value, NULL flag and
 * whether its steps succeeded per inner row of the chunk.
 *
 * The answer stays the interpreter's: a program's steps have no
 * branches (AND and OR combine slots that both sides computed), so a
 * subexpression's value, NULL flag and failure depend on its operands
 * alone, and a failure anywhere makes the pair a recheck, wherever it
 * was computed.
 *
 * A range that is the divisor of a 32-bit division or remainder also
 * keeps its gj_div32_magic, and the division multiplies by it
 * (gj_apply_divmod32_by).
 */
#define GJ_MAX_HOISTED		4

typedef struct GjHoistedRange
{
	int32_t		start;			/* its first instruction */
	int32_t		end;			/* the instruction after its last */
	int32_t		narrow;			/* its value (not NULL, no step failed) is an int in int32 */
	int32_t		divisor;		/* the divisor of the op32 DIV or MOD at end */
} GjHoistedRange;

typedef struct GjHoisting
{
	int32_t		n;
	GjHoistedRange range[GJ_MAX_HOISTED];
} GjHoisting;

GJ_HD void
gj_hoist_add(GjHoisting *hs, int start, int end, const GjInstr *instrs, int ninstrs,
			 const GjNarrowing *nw)
{
	GjHoistedRange *r;

	if (hs->n >= GJ_MAX_HOISTED)
		return;
	r = &hs->range[hs->n++];
	r->start = start;
	r->end = end;
	r->narrow = nw->v32[end - 1];
	r->divisor = end < ninstrs && nw->op32[end] &&
		(instrs[end].op == GJOP_DIV || instrs[end].op == GJOP_MOD);
}

GJ_HD void
gj_program_hoist(const GjInstr *instrs, int ninstrs, int pc0, int depth0,
				 const GjNarrowing *nw, GjHoisting *hs)
{
	int			start[GJ_MAX_STACK];	/* where the slot's subexpression starts */
	bool		inner[GJ_MAX_STACK];	/* it reads no outer column */
	bool		op[GJ_MAX_STACK];	/* it ends in an operator */
	int			sp = 0;

	hs->n = 0;
	for (; sp < depth0 && sp < GJ_MAX_STACK; sp++)
	{
		start[sp] = -1;			/* the leading compares' slots */
		inner[sp] = op[sp] = false;
	}
	for (int pc = pc0; pc < ninstrs && pc < GJ_MAX_INSTRS; pc++)
	{
		int			pops = gj_instr_pops(instrs[pc].op);
		bool		all_inner = instrs[pc].op != GJOP_LOAD_OUTER;
		int			base;

		if (pops < 0 || pops > sp || sp - pops >= GJ_MAX_STACK)
		{
			hs->n = 0;			/* not a program the compiler makes */
			return;
		}
		base = sp - pops;
		for (int k = base; k < sp; k++)
			all_inner = all_inner && inner[k];

		/* an operand of the inner row alone under one that is not */
		for (int k = base; k < sp && !all_inner; k++)
		{
			if (inner[k] && op[k])
				gj_hoist_add(hs, start[k], k + 1 < sp ? start[k + 1] : pc, instrs, ninstrs, nw);
		}
		start[base] = pops > 0 ? start[base] : pc;
		inner[base] = all_inner;
		op[base] = pops > 0;
		sp = base + 1;
	}
	if (sp == 1 && inner[0] && op[0] && start[0] >= 0)
		gj_hoist_add(hs, start[0], ninstrs, instrs, ninstrs, nw);
}

/*
 * Can the program's first `limit` simple compares (fewer where another
 * instruction comes first) prefilter it?  The check simulates the stack:
 * the slots the leading compares leave are protected, and an instruction
 * that pops a protected slot must be an AND (whose result is then
 * protected: it is TRUE only if the protected operand is); one protected
 * slot must be all that is left.  Anything else (an OR, a NOT over them)
 * fails.
 */
GJ_HD bool
gj_program_try_leading(const GjInstr *instrs, int ninstrs, int limit, GjLeadingCompares *lead)
{
	GjCompareConjunction *conj = &lead->conj;
	int			depth = 0;
	int			protect;
	int			pc = 0;

	conj->n = 0;
	while (pc < ninstrs)
	{
		if (instrs[pc].op == GJOP_AND && depth >= 2)
		{
			depth--;
			pc++;
			continue;
		}
		if (conj->n == limit || ninstrs - pc < 3 ||
			!gj_program_simple_compare(&instrs[pc], 3, &conj->cmp[conj->n]) ||
			(conj->cmp[conj->n].cls != GJ_CLASS_INT &&
			 conj->cmp[conj->n].cls != GJ_CLASS_FLOAT))
			break;
		conj->n++;
		depth++;
		pc += 3;
	}
	lead->pc = pc;
	lead->depth = depth;
	for (protect = depth; pc < ninstrs; pc++)
	{
		int			pops = gj_instr_pops(instrs[pc].op);

		if (pops < 0 || pops > depth)
			return false;
		if (depth - pops < protect)
		{
			if (instrs[pc].op != GJOP_AND)
				return false;
			protect = depth - 1;
		}
		depth = depth - pops + 1;
	}
	return conj->n > 0 && depth == 1 && protect == 1;
}

/*
 * Find a program's leading compares; returns their number.  A compare that
 * begins a larger qual ("o.a = i.a OR i.b IS NULL") looks like a leading
 * one until the OR: so the longest prefix that passes the check wins.
 */
GJ_HD int
gj_program_leading_compares(const GjInstr *instrs, int ninstrs, GjLeadingCompares *lead)
{
	for (int limit = GJ_MAX_CONJUNCTS; limit > 0; limit--)
	{
		if (gj_program_try_leading(instrs, ninstrs, limit, lead))
			return lead->conj.n;
	}
	lead->conj.n = 0;
	lead->pc = 0;
	lead->depth = 0;
	return 0;
}

/*
 * Evaluate the rest of a boolean program for a pair that passed its
 * leading compares (lead->conj.n may be 0: then the whole program).
 */
GJ_HD int
gj_program_eval_from(const GjInstr *instrs, int ninstrs, const GjLeadingCompares *lead,
					 const GjKeyColumns *outer, int64_t outer_row,
					 const GjKeyColumns *inner, int64_t inner_row)
{
	GjSlot		value;
	bool		isnull;

	if (gj_program_run_from(instrs, ninstrs, lead->pc, lead->depth, outer, outer_row,
							inner, inner_row, &value, &isnull) == GJ_RESULT_RECHECK)
		return GJ_RESULT_RECHECK;
	return (!isnull && value.i) ? GJ_RESULT_TRUE : GJ_RESULT_FALSE;
}

#endif							/* GPUJOIN_DEVICE_PROGRAM_H */
