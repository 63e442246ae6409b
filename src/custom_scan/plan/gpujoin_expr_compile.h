/*-------------------------------------------------------------------------
 *
 * gpujoin_expr_compile.h
 *	  The parts of the expression compiler (gpujoin_expr_compile.c) that the
 *	  algorithm chooser (gpujoin_algorithm.c) builds on: the table of device
 *	  functions and the compiler's single steps.
 *
 * The planner's entry points (gj_device_compile_init, gj_device_compile_qual, ...)
 * are in gpujoin.h; this header is for the two planner files that make
 * device programs, and nothing else includes it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_EXPR_COMPILE_H
#define GPUJOIN_EXPR_COMPILE_H

#include "nodes/primnodes.h"

#include "gpujoin.h"

/* What the device does with a function of device_functions[]. */
typedef enum DeviceFuncKind
{
	DF_COMPARE,					/* op = GJOP_EQ..GE */
	DF_ARITH,					/* op = GJOP_ADD..MOD */
	DF_UNARY,					/* op = GJOP_NEG, GJOP_ABS */
	DF_DATE,					/* op = GJOP_DATE_* */
	DF_WIDEN,					/* integer widening: no instruction */
	DF_NARROW,					/* GJOP_INT_NARROW */
	DF_TO_FLOAT,				/* GJOP_INT_TO_FLOAT */
	DF_FLOAT_WIDEN,				/* float4 -> float8: no instruction */
	DF_FLOAT_NARROW,			/* GJOP_FLOAT_TO_FLOAT4 */
	DF_TO_NUMERIC				/* integer -> numeric: times 10^scale */
} DeviceFuncKind;

/* A built-in function (by pg_proc OID) the device computes exactly. */
typedef struct DeviceFunc
{
	Oid			funcid;
	DeviceFuncKind kind;
	int			op;
	int			result;			/* GjType of the result */
	int			arg1;			/* GjType of each argument */
	int			arg2;			/* -1 for unary functions */
} DeviceFunc;

extern const DeviceFunc *gj_device_lookup_func(Oid funcid);
extern bool gj_device_emit(DeviceCompileContext *cxt, int op, int type, int arg,
						int64 imm, int stack_delta);
extern int	gj_device_compile_expr(DeviceCompileContext *cxt, Node *node);
extern Var *gj_device_plain_var(Node *node);
extern bool gj_device_match_hashed_equality(DeviceCompileContext *cxt, Node *expr,
										 FuncExpr **outer_key, FuncExpr **inner_key);

#endif							/* GPUJOIN_EXPR_COMPILE_H */
