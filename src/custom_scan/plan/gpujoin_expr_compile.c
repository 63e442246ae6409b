/*-------------------------------------------------------------------------
 *
 * gpujoin_expr_compile.c
 *	  Compiles join quals and scalar expressions into device programs
 *	  (kernels/device_program.h).
 *
 * A qual is device-evaluable when every node of it is one the device
 * computes exactly as PostgreSQL does: Vars of one join side and Consts of
 * the device types, the comparison, arithmetic, abs, negation and cast
 * functions listed in device_functions[], AND/OR/NOT and IS [NOT] NULL.
 * Everything else stays a host qual.  Functions are recognised by their OID
 * (the built-in pg_proc entries behind the operators), never by name, so a
 * user-defined operator that happens to be spelled "<" stays on the host.
 *
 * Equality of text, varchar, bpchar, uuid and bytea columns is compiled as
 * an equality of 64-bit hashes: the host hashes each key value while it
 * drains the input (with the extended hash function of the operator's hash
 * opfamily and the operator's collation), and the device compares the
 * hashes as int8.  Equal values have equal hashes, so the device never
 * rejects a pair the operator accepts; a pair whose hashes collide is
 * rejected by the host, which evaluates the qual exactly as well (see
 * gj_device_qual_is_hashed and gpujoin_classify_quals).
 *
 * timetz, interval and numeric columns are loaded as int64 encodings whose
 * order and equality are PostgreSQL's (host_buffers.h), so their six
 * comparisons are integer comparisons, hash keys and sort-merge bounds; no
 * arithmetic on them is a device function, only the exact casts of integers
 * to numeric (x.n < y.i is x.n < y.i::numeric).  The numeric encoding's scale
 * is chosen when the join runs, so a numeric constant carries its own scale
 * in the instruction and the executor rescales it (gpujoin_encode_keys).
 *
 * How it fits: gpujoin_path.c classifies a join's quals with
 * gj_device_compile_qual (device quals / host quals), gpujoin_plan.c compiles
 * the device quals again against the child plans' columns, and
 * gpujoin_agg_path.c compiles aggregate arguments with
 * gj_device_compile_scalar.  The algorithm chooser (gpujoin_algorithm.c) then
 * finds the keys of a hash or sort-merge join among the compiled quals,
 * with the steps gpujoin_expr_compile.h exports.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/hash.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/catcache.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "gpujoin.h"
#include "custom_scan/plan/gpujoin_expr_compile.h"
#include "host_chunking/host_buffers.h"

#define CMP6(P, T1, T2) \
	{F_##P##EQ, DF_COMPARE, GJOP_EQ, GJT_BOOL, T1, T2}, \
	{F_##P##NE, DF_COMPARE, GJOP_NE, GJT_BOOL, T1, T2}, \
	{F_##P##LT, DF_COMPARE, GJOP_LT, GJT_BOOL, T1, T2}, \
	{F_##P##LE, DF_COMPARE, GJOP_LE, GJT_BOOL, T1, T2}, \
	{F_##P##GT, DF_COMPARE, GJOP_GT, GJT_BOOL, T1, T2}, \
	{F_##P##GE, DF_COMPARE, GJOP_GE, GJT_BOOL, T1, T2}
#define ARITH4(P, R, T1, T2) \
	{F_##P##PL, DF_ARITH, GJOP_ADD, R, T1, T2}, \
	{F_##P##MI, DF_ARITH, GJOP_SUB, R, T1, T2}, \
	{F_##P##MUL, DF_ARITH, GJOP_MUL, R, T1, T2}, \
	{F_##P##DIV, DF_ARITH, GJOP_DIV, R, T1, T2}

static const DeviceFunc device_functions[] = {
	CMP6(BOOL, GJT_BOOL, GJT_BOOL),
	CMP6(INT2, GJT_INT2, GJT_INT2),
	CMP6(INT4, GJT_INT4, GJT_INT4),
	CMP6(INT8, GJT_INT8, GJT_INT8),
	CMP6(INT24, GJT_INT2, GJT_INT4),
	CMP6(INT42, GJT_INT4, GJT_INT2),
	CMP6(INT28, GJT_INT2, GJT_INT8),
	CMP6(INT82, GJT_INT8, GJT_INT2),
	CMP6(INT48, GJT_INT4, GJT_INT8),
	CMP6(INT84, GJT_INT8, GJT_INT4),
	CMP6(FLOAT4, GJT_FLOAT4, GJT_FLOAT4),
	CMP6(FLOAT8, GJT_FLOAT8, GJT_FLOAT8),
	CMP6(FLOAT48, GJT_FLOAT4, GJT_FLOAT8),
	CMP6(FLOAT84, GJT_FLOAT8, GJT_FLOAT4),
	CMP6(DATE_, GJT_DATE, GJT_DATE),
	CMP6(TIMESTAMP_, GJT_TIMESTAMP, GJT_TIMESTAMP),
	CMP6(TIME_, GJT_TIMESTAMP, GJT_TIMESTAMP),
	CMP6(TIMESTAMPTZ_, GJT_TIMESTAMPTZ, GJT_TIMESTAMPTZ),
	CMP6(TIMETZ_, GJT_TIMETZ, GJT_TIMETZ),
	CMP6(INTERVAL_, GJT_INTERVAL, GJT_INTERVAL),
	CMP6(NUMERIC_, GJT_NUMERIC, GJT_NUMERIC),
	CMP6(OID, GJT_OID, GJT_OID),

	ARITH4(INT2, GJT_INT2, GJT_INT2, GJT_INT2),
	ARITH4(INT4, GJT_INT4, GJT_INT4, GJT_INT4),
	ARITH4(INT8, GJT_INT8, GJT_INT8, GJT_INT8),
	ARITH4(INT24, GJT_INT4, GJT_INT2, GJT_INT4),
	ARITH4(INT42, GJT_INT4, GJT_INT4, GJT_INT2),
	ARITH4(INT28, GJT_INT8, GJT_INT2, GJT_INT8),
	ARITH4(INT82, GJT_INT8, GJT_INT8, GJT_INT2),
	ARITH4(INT48, GJT_INT8, GJT_INT4, GJT_INT8),
	ARITH4(INT84, GJT_INT8, GJT_INT8, GJT_INT4),
	ARITH4(FLOAT4, GJT_FLOAT4, GJT_FLOAT4, GJT_FLOAT4),
	ARITH4(FLOAT8, GJT_FLOAT8, GJT_FLOAT8, GJT_FLOAT8),
	ARITH4(FLOAT48, GJT_FLOAT8, GJT_FLOAT4, GJT_FLOAT8),
	ARITH4(FLOAT84, GJT_FLOAT8, GJT_FLOAT8, GJT_FLOAT4),
	{F_INT2MOD, DF_ARITH, GJOP_MOD, GJT_INT2, GJT_INT2, GJT_INT2},
	{F_INT4MOD, DF_ARITH, GJOP_MOD, GJT_INT4, GJT_INT4, GJT_INT4},
	{F_INT8MOD, DF_ARITH, GJOP_MOD, GJT_INT8, GJT_INT8, GJT_INT8},

	{F_INT2UM, DF_UNARY, GJOP_NEG, GJT_INT2, GJT_INT2, -1},
	{F_INT4UM, DF_UNARY, GJOP_NEG, GJT_INT4, GJT_INT4, -1},
	{F_INT8UM, DF_UNARY, GJOP_NEG, GJT_INT8, GJT_INT8, -1},
	{F_FLOAT4UM, DF_UNARY, GJOP_NEG, GJT_FLOAT4, GJT_FLOAT4, -1},
	{F_FLOAT8UM, DF_UNARY, GJOP_NEG, GJT_FLOAT8, GJT_FLOAT8, -1},
	{F_INT2ABS, DF_UNARY, GJOP_ABS, GJT_INT2, GJT_INT2, -1},
	{F_INT4ABS, DF_UNARY, GJOP_ABS, GJT_INT4, GJT_INT4, -1},
	{F_INT8ABS, DF_UNARY, GJOP_ABS, GJT_INT8, GJT_INT8, -1},
	{F_FLOAT4ABS, DF_UNARY, GJOP_ABS, GJT_FLOAT4, GJT_FLOAT4, -1},
	{F_FLOAT8ABS, DF_UNARY, GJOP_ABS, GJT_FLOAT8, GJT_FLOAT8, -1},
	{F_ABS_INT2, DF_UNARY, GJOP_ABS, GJT_INT2, GJT_INT2, -1},
	{F_ABS_INT4, DF_UNARY, GJOP_ABS, GJT_INT4, GJT_INT4, -1},
	{F_ABS_INT8, DF_UNARY, GJOP_ABS, GJT_INT8, GJT_INT8, -1},
	{F_ABS_FLOAT4, DF_UNARY, GJOP_ABS, GJT_FLOAT4, GJT_FLOAT4, -1},
	{F_ABS_FLOAT8, DF_UNARY, GJOP_ABS, GJT_FLOAT8, GJT_FLOAT8, -1},

	{F_DATE_PLI, DF_DATE, GJOP_DATE_PLI, GJT_DATE, GJT_DATE, GJT_INT4},
	{F_DATE_MII, DF_DATE, GJOP_DATE_MII, GJT_DATE, GJT_DATE, GJT_INT4},
	{F_DATE_MI, DF_DATE, GJOP_DATE_MI, GJT_INT4, GJT_DATE, GJT_DATE},

	{F_INT4_INT2, DF_WIDEN, 0, GJT_INT4, GJT_INT2, -1},
	{F_INT8_INT2, DF_WIDEN, 0, GJT_INT8, GJT_INT2, -1},
	{F_INT8_INT4, DF_WIDEN, 0, GJT_INT8, GJT_INT4, -1},
	{F_INT2_INT4, DF_NARROW, GJOP_INT_NARROW, GJT_INT2, GJT_INT4, -1},
	{F_INT2_INT8, DF_NARROW, GJOP_INT_NARROW, GJT_INT2, GJT_INT8, -1},
	{F_INT4_INT8, DF_NARROW, GJOP_INT_NARROW, GJT_INT4, GJT_INT8, -1},
	{F_FLOAT4_INT2, DF_TO_FLOAT, GJOP_INT_TO_FLOAT, GJT_FLOAT4, GJT_INT2, -1},
	{F_FLOAT4_INT4, DF_TO_FLOAT, GJOP_INT_TO_FLOAT, GJT_FLOAT4, GJT_INT4, -1},
	{F_FLOAT4_INT8, DF_TO_FLOAT, GJOP_INT_TO_FLOAT, GJT_FLOAT4, GJT_INT8, -1},
	{F_FLOAT8_INT2, DF_TO_FLOAT, GJOP_INT_TO_FLOAT, GJT_FLOAT8, GJT_INT2, -1},
	{F_FLOAT8_INT4, DF_TO_FLOAT, GJOP_INT_TO_FLOAT, GJT_FLOAT8, GJT_INT4, -1},
	{F_FLOAT8_INT8, DF_TO_FLOAT, GJOP_INT_TO_FLOAT, GJT_FLOAT8, GJT_INT8, -1},
	{F_FLOAT8_FLOAT4, DF_FLOAT_WIDEN, 0, GJT_FLOAT8, GJT_FLOAT4, -1},
	{F_FLOAT4_FLOAT8, DF_FLOAT_NARROW, GJOP_FLOAT_TO_FLOAT4, GJT_FLOAT4, GJT_FLOAT8, -1},
	{F_NUMERIC_INT2, DF_TO_NUMERIC, 0, GJT_NUMERIC, GJT_INT2, -1},
	{F_NUMERIC_INT4, DF_TO_NUMERIC, 0, GJT_NUMERIC, GJT_INT4, -1},
	{F_NUMERIC_INT8, DF_TO_NUMERIC, 0, GJT_NUMERIC, GJT_INT8, -1},
};

const DeviceFunc *
gj_device_lookup_func(Oid funcid)
{
	int			i;

	for (i = 0; i < lengthof(device_functions); i++)
	{
		if (device_functions[i].funcid == funcid)
			return &device_functions[i];
	}
	return NULL;
}

/*
 * GjType of a PostgreSQL type, or -1 if the device cannot hold it.  A
 * domain's values are its base type's (its operators are the base type's,
 * reached through a RelabelType), so a column of a domain is a column of
 * the base type.
 */
int
gj_device_type_of(Oid typid)
{
	switch (getBaseType(typid))
	{
		case BOOLOID:
			return GJT_BOOL;
		case INT2OID:
			return GJT_INT2;
		case INT4OID:
			return GJT_INT4;
		case INT8OID:
			return GJT_INT8;
		case FLOAT4OID:
			return GJT_FLOAT4;
		case FLOAT8OID:
			return GJT_FLOAT8;
		case DATEOID:
			return GJT_DATE;
		case TIMESTAMPOID:
			return GJT_TIMESTAMP;
		case TIMEOID:
			/* microseconds since midnight in an int64, ordered as timestamps */
			return GJT_TIMESTAMP;
		case TIMESTAMPTZOID:
			return GJT_TIMESTAMPTZ;
		case OIDOID:
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGCLASSOID:
		case REGCOLLATIONOID:
		case REGTYPEOID:
		case REGROLEOID:
		case REGNAMESPACEOID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
			/* the reg* types compare with oid's operators, through a RelabelType */
			return GJT_OID;

			/*
			 * Compared as order-preserving int64 encodings made by the host
			 * (host_buffers.h); no arithmetic on them is a device function.
			 */
		case TIMETZOID:
			return GJT_TIMETZ;
		case INTERVALOID:
			return GJT_INTERVAL;
		case NUMERICOID:
			return GJT_NUMERIC;
		default:
			return -1;
	}
}

void
gj_device_compile_init(DeviceCompileContext *cxt, Relids outer_relids, Relids inner_relids)
{
	memset(cxt, 0, sizeof(DeviceCompileContext));
	cxt->outer_relids = outer_relids;
	cxt->inner_relids = inner_relids;
}

/*
 * Append one instruction, tracking the stack depth it leaves; false when the
 * program would outgrow GJ_MAX_INSTRS or GJ_MAX_STACK.
 */
bool
gj_device_emit(DeviceCompileContext *cxt, int op, int type, int arg, int64 imm, int stack_delta)
{
	GjInstr    *in;

	if (cxt->program.ninstrs >= GJ_MAX_INSTRS)
		return false;
	cxt->depth += stack_delta;
	if (cxt->depth > GJ_MAX_STACK)
		return false;
	if (cxt->depth > cxt->max_depth)
		cxt->max_depth = cxt->depth;
	in = &cxt->program.instrs[cxt->program.ninstrs++];
	in->op = op;
	in->type = type;
	in->arg = arg;
	in->imm = imm;
	return true;
}

/* Column number of a Var on its side, adding it to the side's key columns. */
static int
key_column(List **vars, Node *var)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, *vars)
	{
		if (equal(lfirst(lc), var))
			return i;
		i++;
	}
	if (i >= GJ_MAX_KEY_COLS)
		return -1;
	*vars = lappend(*vars, var);
	return i;
}

/*
 * The device value of a constant, or false if it has none (an interval
 * whose span does not fit an int64).  *arg is the instruction's argument:
 * for a numeric, whose fixed-point scale is only known when the join runs,
 * the constant's own scale (-1 for NaN and the infinities), which the
 * executor raises to the join's (gpujoin_encode_keys).
 */
static bool
const_bits(Const *con, int type, int64 *bits, int *arg)
{
	*arg = 0;
	if (type == GJT_NUMERIC)
		return gj_host_numeric_const(con->constvalue, bits, arg);
	return gj_datum_to_exact_value(con->constvalue, type, bits);
}

/*
 * The equality operators whose operands the host hashes for the device, and
 * the extended (64-bit) hash function of each one's hash opfamily.  Each
 * equality is plain byte or code comparison under a deterministic
 * collation, so equal values always hash alike: bpchar's compares and hashes
 * without trailing spaces, text's (and varchar's, which is text's) compare
 * and hash the bytes.
 */
typedef struct HashedEquality
{
	Oid			eqfunc;			/* the operator's function */
	Oid			hashfunc;		/* extended hash function of its opfamily */
} HashedEquality;

static const HashedEquality hashed_equalities[] = {
	{F_TEXTEQ, F_HASHTEXTEXTENDED},
	{F_BPCHAREQ, F_HASHBPCHAREXTENDED},
	{F_UUID_EQ, F_UUID_HASH_EXTENDED},
	{F_BYTEAEQ, F_HASHVARLENAEXTENDED},
};

/*
 * The extended hash function of the hash opfamily that holds the equality
 * operator opno, or InvalidOid.  get_op_hash_functions() first: it declines
 * operators without hash support, and cross-type members, whose two sides
 * would hash differently.
 */
static Oid
extended_hash_function(Oid opno)
{
	RegProcedure lhs;
	RegProcedure rhs;
	CatCList   *catlist;
	Oid			result = InvalidOid;
	int			i;

	if (!get_op_hash_functions(opno, &lhs, &rhs) || lhs != rhs)
		return InvalidOid;
	catlist = SearchSysCacheList1(AMOPOPID, ObjectIdGetDatum(opno));
	for (i = 0; i < catlist->n_members; i++)
	{
		Form_pg_amop aform = (Form_pg_amop) GETSTRUCT(&catlist->members[i]->tuple);

		if (aform->amopmethod == HASH_AM_OID &&
			aform->amopstrategy == HTEqualStrategyNumber &&
			aform->amoplefttype == aform->amoprighttype)
		{
			result = get_opfamily_proc(aform->amopfamily, aform->amoplefttype,
									   aform->amoplefttype, HASHEXTENDED_PROC);
			break;
		}
	}
	ReleaseSysCacheList(catlist);
	return result;
}

/*
 * If expr is "outer Var = inner Var" (either order, through binary
 * relabelling) with one of the hashed_equalities[] under a deterministic
 * collation, set the key expressions of the two sides: the hash of each Var,
 * hashfunc(var, 0) with the operator's collation.  These are what the key
 * column lists hold for hashed columns, so that one Var hashed under two
 * collations or functions makes two columns.
 */
bool
gj_device_match_hashed_equality(DeviceCompileContext *cxt, Node *expr,
							 FuncExpr **outer_key, FuncExpr **inner_key)
{
	OpExpr	   *op = (OpExpr *) expr;
	Var		   *a,
			   *b;
	Oid			hashfunc = InvalidOid;
	int			i;

	if (expr == NULL || !IsA(expr, OpExpr) || list_length(op->args) != 2)
		return false;
	set_opfuncid(op);
	for (i = 0; i < lengthof(hashed_equalities); i++)
	{
		if (hashed_equalities[i].eqfunc == op->opfuncid)
			hashfunc = hashed_equalities[i].hashfunc;
	}
	if (!OidIsValid(hashfunc))
		return false;
	a = gj_device_plain_var(linitial(op->args));
	b = gj_device_plain_var(lsecond(op->args));
	if (a == NULL || b == NULL || a->varlevelsup != 0 || b->varlevelsup != 0 ||
		a->varattno <= 0 || b->varattno <= 0)
		return false;
	if (bms_is_member(b->varno, cxt->outer_relids) && bms_is_member(a->varno, cxt->inner_relids))
	{
		Var		   *t = a;

		a = b;
		b = t;
	}
	if (!bms_is_member(a->varno, cxt->outer_relids) || !bms_is_member(b->varno, cxt->inner_relids))
		return false;

	/* a nondeterministic collation's equality is not byte equality */
	if (type_is_collatable(exprType(linitial(op->args))) &&
		(!OidIsValid(op->inputcollid) || !get_collation_isdeterministic(op->inputcollid)))
		return false;
	if (extended_hash_function(op->opno) != hashfunc)
		return false;

	*outer_key = makeFuncExpr(hashfunc, INT8OID,
							  list_make2(copyObject(a), makeConst(INT8OID, -1, InvalidOid, 8,
																  Int64GetDatum(0), false,
																  FLOAT8PASSBYVAL)),
							  InvalidOid, op->inputcollid, COERCE_EXPLICIT_CALL);
	*inner_key = copyObject(*outer_key);
	linitial((*inner_key)->args) = copyObject(b);
	return true;
}

/*
 * Is the qual one the device evaluates as a hash equality?  Such a qual is
 * also a host qual: the host evaluates it exactly on every pair the device
 * returns.
 */
bool
gj_device_qual_is_hashed(DeviceCompileContext *cxt, Expr *qual)
{
	FuncExpr   *outer_key;
	FuncExpr   *inner_key;

	return gj_device_match_hashed_equality(cxt, (Node *) qual, &outer_key, &inner_key);
}

/*
 * The Var and the host hashing of a key column: hash function and collation
 * for a hashed column, InvalidOid for a column the device reads as is.
 */
Var *
gj_key_column_var(Node *key, Oid *hashfunc, Oid *collation)
{
	if (IsA(key, FuncExpr))
	{
		*hashfunc = ((FuncExpr *) key)->funcid;
		*collation = ((FuncExpr *) key)->inputcollid;
		return linitial_node(Var, ((FuncExpr *) key)->args);
	}
	*hashfunc = InvalidOid;
	*collation = InvalidOid;
	return castNode(Var, key);
}

/*
 * Compile a call of one of device_functions[] (an operator is a call of
 * its function): its arguments, then its instruction.  Returns its GjType,
 * or -1.
 */
static int
compile_device_func(DeviceCompileContext *cxt, Node *node)
{
	Oid			funcid;
	List	   *args;
	const DeviceFunc *df;
	int			t1,
				t2;

	if (IsA(node, OpExpr))
	{
		set_opfuncid((OpExpr *) node);
		funcid = ((OpExpr *) node)->opfuncid;
		args = ((OpExpr *) node)->args;
	}
	else
	{
		if (((FuncExpr *) node)->funcretset)
			return -1;
		funcid = ((FuncExpr *) node)->funcid;
		args = ((FuncExpr *) node)->args;
	}
	df = gj_device_lookup_func(funcid);
	if (df == NULL || list_length(args) != (df->arg2 < 0 ? 1 : 2))
		return -1;
	t1 = gj_device_compile_expr(cxt, linitial(args));
	if (t1 != df->arg1)
		return -1;
	if (df->arg2 >= 0)
	{
		t2 = gj_device_compile_expr(cxt, lsecond(args));
		if (t2 != df->arg2)
			return -1;
	}
	switch (df->kind)
	{
		case DF_COMPARE:
			if (!gj_device_emit(cxt, df->op, gj_type_class(t1), 0, 0, -1))
				return -1;
			break;
		case DF_ARITH:
		case DF_DATE:
			if (!gj_device_emit(cxt, df->op, df->result, 0, 0, -1))
				return -1;
			break;
		case DF_UNARY:
		case DF_NARROW:
		case DF_TO_FLOAT:
		case DF_FLOAT_NARROW:
			if (!gj_device_emit(cxt, df->op, df->result, 0, 0, 0))
				return -1;
			break;
		case DF_WIDEN:
		case DF_FLOAT_WIDEN:
			break;
		case DF_TO_NUMERIC:

			/*
			 * An integer in the join's fixed point: times the numeric
			 * constant 1, which the executor rescales to 10^scale, in int8
			 * arithmetic, whose overflow sends the pair to the host.  For
			 * int8, 1 is planned at scale 1, so the join's scale is at least
			 * 1 and a product is a multiple of 10: never one of the int64s
			 * reserved for -Infinity, +Infinity and NaN (int2 and int4
			 * products never reach them).
			 */
			if (!gj_device_emit(cxt, GJOP_CONST, GJT_NUMERIC, t1 == GJT_INT8 ? 1 : 0,
							 t1 == GJT_INT8 ? 10 : 1, 1) ||
				!gj_device_emit(cxt, GJOP_MUL, GJT_INT8, 0, 0, -1))
				return -1;
			break;
	}
	return df->result;
}

/*
 * Compile one expression, leaving its value on the stack.  Returns its
 * GjType, or -1 when the expression is not device-evaluable (the caller then
 * discards the whole qual).
 */
int
gj_device_compile_expr(DeviceCompileContext *cxt, Node *node)
{
	if (node == NULL)
		return -1;

	switch (nodeTag(node))
	{
		case T_Var:
			{
				Var		   *var = (Var *) node;
				int			type = gj_device_type_of(var->vartype);
				int			col;

				if (type < 0 || var->varlevelsup != 0 || var->varattno <= 0)
					return -1;
				if (bms_is_member(var->varno, cxt->outer_relids))
				{
					col = key_column(&cxt->outer_vars, (Node *) var);
					if (col < 0 || !gj_device_emit(cxt, GJOP_LOAD_OUTER, type, col, 0, 1))
						return -1;
				}
				else if (bms_is_member(var->varno, cxt->inner_relids))
				{
					col = key_column(&cxt->inner_vars, (Node *) var);
					if (col < 0 || !gj_device_emit(cxt, GJOP_LOAD_INNER, type, col, 0, 1))
						return -1;
				}
				else
					return -1;
				return type;
			}
		case T_Const:
			{
				Const	   *con = (Const *) node;
				int			type = gj_device_type_of(con->consttype);
				int64		bits;
				int			arg;

				if (type < 0)
					return -1;
				if (con->constisnull)
					return gj_device_emit(cxt, GJOP_CONST_NULL, type, 0, 0, 1) ? type : -1;
				if (!const_bits(con, type, &bits, &arg))
					return -1;
				return gj_device_emit(cxt, GJOP_CONST, type, arg, bits, 1) ? type : -1;
			}
		case T_OpExpr:
		case T_FuncExpr:
			return compile_device_func(cxt, node);
		case T_BoolExpr:
			{
				BoolExpr   *b = (BoolExpr *) node;
				ListCell   *lc;
				bool		first = true;

				foreach(lc, b->args)
				{
					if (gj_device_compile_expr(cxt, lfirst(lc)) != GJT_BOOL)
						return -1;
					if (b->boolop == NOT_EXPR)
					{
						if (!gj_device_emit(cxt, GJOP_NOT, GJT_BOOL, 0, 0, 0))
							return -1;
					}
					else if (!first &&
							 !gj_device_emit(cxt, b->boolop == AND_EXPR ? GJOP_AND : GJOP_OR,
										  GJT_BOOL, 0, 0, -1))
						return -1;
					first = false;
				}
				return GJT_BOOL;
			}
		case T_NullTest:
			{
				NullTest   *nt = (NullTest *) node;

				if (nt->argisrow || gj_device_compile_expr(cxt, (Node *) nt->arg) < 0)
					return -1;
				if (!gj_device_emit(cxt, nt->nulltesttype == IS_NULL ? GJOP_IS_NULL : GJOP_IS_NOT_NULL,
								 GJT_BOOL, 0, 0, 0))
					return -1;
				return GJT_BOOL;
			}
		case T_RelabelType:
			{
				RelabelType *r = (RelabelType *) node;
				int			type = gj_device_compile_expr(cxt, (Node *) r->arg);

				/* only relabels that keep the device type, e.g. to a domain */
				if (type < 0 || gj_device_type_of(getBaseType(r->resulttype)) != type)
					return -1;
				return type;
			}
		default:
			return -1;
	}
}

/*
 * Try to compile a qual and AND it into the program.  On failure the program
 * and the key column lists are left exactly as they were.
 */
bool
gj_device_compile_qual(DeviceCompileContext *cxt, Expr *qual)
{
	DeviceCompileContext saved = *cxt;
	bool		first = (cxt->program.ninstrs == 0);
	FuncExpr   *outer_key;
	FuncExpr   *inner_key;

	/*
	 * A hashed equality only as a whole qual: the hash comparison accepts
	 * every pair the operator accepts, and more, so it may stand in for the
	 * qual only where a false result rejects the pair (not under NOT).
	 */
	if (gj_device_match_hashed_equality(cxt, (Node *) qual, &outer_key, &inner_key))
	{
		int			oc = key_column(&cxt->outer_vars, (Node *) outer_key);
		int			ic = key_column(&cxt->inner_vars, (Node *) inner_key);

		if (oc >= 0 && ic >= 0 &&
			gj_device_emit(cxt, GJOP_LOAD_OUTER, GJT_INT8, oc, 0, 1) &&
			gj_device_emit(cxt, GJOP_LOAD_INNER, GJT_INT8, ic, 0, 1) &&
			gj_device_emit(cxt, GJOP_EQ, GJ_CLASS_INT, 0, 0, -1) &&
			(first || gj_device_emit(cxt, GJOP_AND, GJT_BOOL, 0, 0, -1)))
			return true;
	}
	else if (gj_device_compile_expr(cxt, (Node *) qual) == GJT_BOOL &&
			 (first || gj_device_emit(cxt, GJOP_AND, GJT_BOOL, 0, 0, -1)))
		return true;

	/* roll back: the lists only ever grew at their tails */
	saved.outer_vars = list_truncate(cxt->outer_vars, list_length(saved.outer_vars));
	saved.inner_vars = list_truncate(cxt->inner_vars, list_length(saved.inner_vars));
	*cxt = saved;
	return false;
}

/*
 * Compile a scalar expression (an aggregate's argument) into a program of
 * its own, leaving the context's program alone; the Vars it loads are added
 * to the context's column lists.  Returns its GjType, or -1.
 */
int
gj_device_compile_scalar(DeviceCompileContext *cxt, Expr *expr, GjProgram *program)
{
	DeviceCompileContext saved = *cxt;
	int			n_outer = list_length(cxt->outer_vars);
	int			n_inner = list_length(cxt->inner_vars);
	int			type;

	cxt->program.ninstrs = 0;
	cxt->depth = 0;
	cxt->max_depth = 0;
	type = gj_device_compile_expr(cxt, (Node *) expr);
	*program = cxt->program;
	/* keep the columns it loads; on failure, drop them again */
	saved.outer_vars = type < 0 ? list_truncate(cxt->outer_vars, n_outer) : cxt->outer_vars;
	saved.inner_vars = type < 0 ? list_truncate(cxt->inner_vars, n_inner) : cxt->inner_vars;
	*cxt = saved;
	return type;
}

/* A Var of one side, seen through binary-compatible relabelling. */
Var *
gj_device_plain_var(Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return (node && IsA(node, Var)) ? (Var *) node : NULL;
}

