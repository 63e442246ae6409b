/*-------------------------------------------------------------------------
 *
 * device_compile.c
 *	  Compiles join quals into the device program (kernels/device_program.h).
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
 * device_qual_is_hashed and gpujoin_classify_quals).
 *
 * timetz, interval and numeric columns are loaded as int64 encodings whose
 * order and equality are PostgreSQL's (host_buffers.h), so their six
 * comparisons are integer comparisons, hash keys and sort-merge bounds; no
 * arithmetic on them is a device function, only the exact casts of integers
 * to numeric (x.n < y.i is x.n < y.i::numeric).  The numeric encoding's scale
 * is chosen when the join runs, so a numeric constant carries its own scale
 * in the instruction and the executor rescales it (gpujoin_encode_keys).
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
#include "host_chunking/host_buffers.h"

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

typedef struct DeviceFunc
{
	Oid			funcid;
	DeviceFuncKind kind;
	int			op;
	int			result;			/* GjType of the result */
	int			arg1;			/* GjType of each argument */
	int			arg2;			/* -1 for unary functions */
} DeviceFunc;

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

static const DeviceFunc *
lookup_device_func(Oid funcid)
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
device_type_of(Oid typid)
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

const char *
gpujoin_algorithm_name(int algorithm)
{
	switch (algorithm)
	{
		case GJ_ALGO_NESTLOOP:
			return "nestloop";
		case GJ_ALGO_SORTMERGE:
			return "sortmerge";
		case GJ_ALGO_HASH:
			return "hash";
		default:
			return "auto";
	}
}

void
device_compile_init(DeviceCompileContext *cxt, Relids outer_relids, Relids inner_relids)
{
	memset(cxt, 0, sizeof(DeviceCompileContext));
	cxt->outer_relids = outer_relids;
	cxt->inner_relids = inner_relids;
}

static bool
emit(DeviceCompileContext *cxt, int op, int type, int arg, int64 imm, int stack_delta)
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
		return host_numeric_const(con->constvalue, bits, arg);
	return gj_datum_to_exact_value(con->constvalue, type, bits);
}

static Var *plain_var(Node *node);

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
static bool
match_hashed_equality(DeviceCompileContext *cxt, Node *expr,
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
	a = plain_var(linitial(op->args));
	b = plain_var(lsecond(op->args));
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
device_qual_is_hashed(DeviceCompileContext *cxt, Expr *qual)
{
	FuncExpr   *outer_key;
	FuncExpr   *inner_key;

	return match_hashed_equality(cxt, (Node *) qual, &outer_key, &inner_key);
}

/*
 * The Var and the host hashing of a key column: hash function and collation
 * for a hashed column, InvalidOid for a column the device reads as is.
 */
Var *
key_column_var(Node *key, Oid *hashfunc, Oid *collation)
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
 * Compile one expression, leaving its value on the stack.  Returns its
 * GjType, or -1 when the expression is not device-evaluable (the caller then
 * discards the whole qual).
 */
static int
compile_expr(DeviceCompileContext *cxt, Node *node)
{
	if (node == NULL)
		return -1;

	switch (nodeTag(node))
	{
		case T_Var:
			{
				Var		   *var = (Var *) node;
				int			type = device_type_of(var->vartype);
				int			col;

				if (type < 0 || var->varlevelsup != 0 || var->varattno <= 0)
					return -1;
				if (bms_is_member(var->varno, cxt->outer_relids))
				{
					col = key_column(&cxt->outer_vars, (Node *) var);
					if (col < 0 || !emit(cxt, GJOP_LOAD_OUTER, type, col, 0, 1))
						return -1;
				}
				else if (bms_is_member(var->varno, cxt->inner_relids))
				{
					col = key_column(&cxt->inner_vars, (Node *) var);
					if (col < 0 || !emit(cxt, GJOP_LOAD_INNER, type, col, 0, 1))
						return -1;
				}
				else
					return -1;
				return type;
			}
		case T_Const:
			{
				Const	   *con = (Const *) node;
				int			type = device_type_of(con->consttype);
				int64		bits;
				int			arg;

				if (type < 0)
					return -1;
				if (con->constisnull)
					return emit(cxt, GJOP_CONST_NULL, type, 0, 0, 1) ? type : -1;
				if (!const_bits(con, type, &bits, &arg))
					return -1;
				return emit(cxt, GJOP_CONST, type, arg, bits, 1) ? type : -1;
			}
		case T_OpExpr:
		case T_FuncExpr:
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
				df = lookup_device_func(funcid);
				if (df == NULL || list_length(args) != (df->arg2 < 0 ? 1 : 2))
					return -1;
				t1 = compile_expr(cxt, linitial(args));
				if (t1 != df->arg1)
					return -1;
				if (df->arg2 >= 0)
				{
					t2 = compile_expr(cxt, lsecond(args));
					if (t2 != df->arg2)
						return -1;
				}
				switch (df->kind)
				{
					case DF_COMPARE:
						if (!emit(cxt, df->op, gj_type_class(t1), 0, 0, -1))
							return -1;
						break;
					case DF_ARITH:
					case DF_DATE:
						if (!emit(cxt, df->op, df->result, 0, 0, -1))
							return -1;
						break;
					case DF_UNARY:
					case DF_NARROW:
					case DF_TO_FLOAT:
					case DF_FLOAT_NARROW:
						if (!emit(cxt, df->op, df->result, 0, 0, 0))
							return -1;
						break;
					case DF_WIDEN:
					case DF_FLOAT_WIDEN:
						break;
					case DF_TO_NUMERIC:

						/*
						 * An integer in the join's fixed point: times the
						 * numeric constant 1, which the executor rescales to
						 * 10^scale, in int8 arithmetic, whose overflow sends
						 * the pair to the host.  For int8, 1 is planned at
						 * scale 1, so the join's scale is at least 1 and a
						 * product is a multiple of 10: never one of the
						 * int64s reserved for -Infinity, +Infinity and NaN
						 * (int2 and int4 products never reach them).
						 */
						if (!emit(cxt, GJOP_CONST, GJT_NUMERIC, t1 == GJT_INT8 ? 1 : 0,
								  t1 == GJT_INT8 ? 10 : 1, 1) ||
							!emit(cxt, GJOP_MUL, GJT_INT8, 0, 0, -1))
							return -1;
						break;
				}
				return df->result;
			}
		case T_BoolExpr:
			{
				BoolExpr   *b = (BoolExpr *) node;
				ListCell   *lc;
				bool		first = true;

				foreach(lc, b->args)
				{
					if (compile_expr(cxt, lfirst(lc)) != GJT_BOOL)
						return -1;
					if (b->boolop == NOT_EXPR)
					{
						if (!emit(cxt, GJOP_NOT, GJT_BOOL, 0, 0, 0))
							return -1;
					}
					else if (!first &&
							 !emit(cxt, b->boolop == AND_EXPR ? GJOP_AND : GJOP_OR,
								   GJT_BOOL, 0, 0, -1))
						return -1;
					first = false;
				}
				return GJT_BOOL;
			}
		case T_NullTest:
			{
				NullTest   *nt = (NullTest *) node;

				if (nt->argisrow || compile_expr(cxt, (Node *) nt->arg) < 0)
					return -1;
				if (!emit(cxt, nt->nulltesttype == IS_NULL ? GJOP_IS_NULL : GJOP_IS_NOT_NULL,
						  GJT_BOOL, 0, 0, 0))
					return -1;
				return GJT_BOOL;
			}
		case T_RelabelType:
			{
				RelabelType *r = (RelabelType *) node;
				int			type = compile_expr(cxt, (Node *) r->arg);

				/* only relabels that keep the device type, e.g. to a domain */
				if (type < 0 || device_type_of(getBaseType(r->resulttype)) != type)
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
device_compile_qual(DeviceCompileContext *cxt, Expr *qual)
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
	if (match_hashed_equality(cxt, (Node *) qual, &outer_key, &inner_key))
	{
		int			oc = key_column(&cxt->outer_vars, (Node *) outer_key);
		int			ic = key_column(&cxt->inner_vars, (Node *) inner_key);

		if (oc >= 0 && ic >= 0 &&
			emit(cxt, GJOP_LOAD_OUTER, GJT_INT8, oc, 0, 1) &&
			emit(cxt, GJOP_LOAD_INNER, GJT_INT8, ic, 0, 1) &&
			emit(cxt, GJOP_EQ, GJ_CLASS_INT, 0, 0, -1) &&
			(first || emit(cxt, GJOP_AND, GJT_BOOL, 0, 0, -1)))
			return true;
	}
	else if (compile_expr(cxt, (Node *) qual) == GJT_BOOL &&
			 (first || emit(cxt, GJOP_AND, GJT_BOOL, 0, 0, -1)))
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
device_compile_scalar(DeviceCompileContext *cxt, Expr *expr, GjProgram *program)
{
	DeviceCompileContext saved = *cxt;
	int			n_outer = list_length(cxt->outer_vars);
	int			n_inner = list_length(cxt->inner_vars);
	int			type;

	cxt->program.ninstrs = 0;
	cxt->depth = 0;
	cxt->max_depth = 0;
	type = compile_expr(cxt, (Node *) expr);
	*program = cxt->program;
	/* keep the columns it loads; on failure, drop them again */
	saved.outer_vars = type < 0 ? list_truncate(cxt->outer_vars, n_outer) : cxt->outer_vars;
	saved.inner_vars = type < 0 ? list_truncate(cxt->inner_vars, n_inner) : cxt->inner_vars;
	*cxt = saved;
	return type;
}

/* A Var of one side, seen through binary-compatible relabelling. */
static Var *
plain_var(Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return (node && IsA(node, Var)) ? (Var *) node : NULL;
}

/* Does the expression read only outer Vars (and constants)? */
static bool
outer_only_walker(Node *node, DeviceCompileContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return !bms_is_member(((Var *) node)->varno, cxt->outer_relids) ||
			((Var *) node)->varlevelsup != 0;
	return expression_tree_walker(node, outer_only_walker, (void *) cxt);
}

/* Column number of a Var already among a side's key columns, or -1. */
static int
existing_column(List *vars, Node *var)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, vars)
	{
		if (equal(lfirst(lc), var))
			return i;
		i++;
	}
	return -1;
}

/*
 * Compile an outer-only expression into a bound program, reusing the outer
 * key columns of the main program.  Returns false if it does not compile or
 * would need a column the main program does not load.
 */
static bool
compile_bound(DeviceCompileContext *cxt, Node *expr, int cls,
			  GjInstr *instrs, int32_t *ninstrs)
{
	DeviceCompileContext sub;
	int			type;

	device_compile_init(&sub, cxt->outer_relids, cxt->inner_relids);
	sub.outer_vars = list_copy(cxt->outer_vars);
	sub.inner_vars = list_copy(cxt->inner_vars);
	type = compile_expr(&sub, expr);
	if (type < 0 || gj_type_class(type) != cls ||
		list_length(sub.outer_vars) != list_length(cxt->outer_vars) ||
		list_length(sub.inner_vars) != list_length(cxt->inner_vars))
		return false;
	memcpy(instrs, sub.program.instrs, sizeof(GjInstr) * sub.program.ninstrs);
	*ninstrs = sub.program.ninstrs;
	return true;
}

/*
 * Integer subtraction "a - b" where one operand is the inner Var and the
 * other a plain outer Var: the center of an abs() band.  Sets *outer_first
 * when the outer Var is a.
 */
static bool
match_band_difference(DeviceCompileContext *cxt, Node *node, Var *inner_var,
					  Var **outer_var, bool *outer_first, int *diff_type)
{
	const DeviceFunc *df;
	Var		   *a,
			   *b;

	if (!IsA(node, OpExpr) || list_length(((OpExpr *) node)->args) != 2)
		return false;
	set_opfuncid((OpExpr *) node);
	df = lookup_device_func(((OpExpr *) node)->opfuncid);
	if (df == NULL || df->kind != DF_ARITH || df->op != GJOP_SUB ||
		gj_type_class(df->result) != GJ_CLASS_INT)
		return false;
	a = plain_var(linitial(((OpExpr *) node)->args));
	b = plain_var(lsecond(((OpExpr *) node)->args));
	if (a == NULL || b == NULL)
		return false;
	if (equal(b, inner_var) && bms_is_member(a->varno, cxt->outer_relids))
	{
		*outer_var = a;
		*outer_first = true;
	}
	else if (equal(a, inner_var) && bms_is_member(b->varno, cxt->outer_relids))
	{
		*outer_var = b;
		*outer_first = false;
	}
	else
		return false;
	*diff_type = df->result;
	return (*outer_var)->varlevelsup == 0;
}

/*
 * "abs(o.x - i.y) <= c" (or "< c", either operand order, or commuted as
 * "c >= abs(...)") over integers, c an outer-only expression: the band
 * i.y BETWEEN o.x - c AND o.x + c.  The bounds are computed in int64 (an
 * overflow makes the row compare with every inner row, as for any bound).
 * The band equals the qual only where o.x - i.y cannot overflow for any
 * pair; the guard lets the executor check that from the columns' ranges
 * before the join runs, and run a nested loop otherwise.
 */
static bool
compile_abs_band(DeviceCompileContext *cxt, OpExpr *op, Var *inner_var,
				 GjRangeSpec *range, GpuJoinBandGuard *guard)
{
	const DeviceFunc *df = lookup_device_func(op->opfuncid);
	Node	   *absexpr;
	Node	   *radius;
	Node	   *diff;
	const DeviceFunc *absf;
	Oid			absfunc;
	Var		   *outer_var;
	bool		outer_first;
	int			diff_type;
	int			cmp;
	int			oc;
	int			bound;

	if (df == NULL || df->kind != DF_COMPARE)
		return false;
	cmp = df->op;
	absexpr = linitial(op->args);
	radius = lsecond(op->args);
	if (!outer_only_walker(absexpr, cxt))
	{
		/* c >= abs(...): the abs() is on the right */
		absexpr = lsecond(op->args);
		radius = linitial(op->args);
		cmp = gj_commute_cmp(cmp);
	}
	if (cmp != GJOP_LE && cmp != GJOP_LT)
		return false;

	if (IsA(absexpr, FuncExpr) && list_length(((FuncExpr *) absexpr)->args) == 1)
	{
		absfunc = ((FuncExpr *) absexpr)->funcid;
		diff = linitial(((FuncExpr *) absexpr)->args);
	}
	else if (IsA(absexpr, OpExpr) && list_length(((OpExpr *) absexpr)->args) == 1)
	{
		set_opfuncid((OpExpr *) absexpr);
		absfunc = ((OpExpr *) absexpr)->opfuncid;
		diff = linitial(((OpExpr *) absexpr)->args);
	}
	else
		return false;
	absf = lookup_device_func(absfunc);
	if (absf == NULL || absf->kind != DF_UNARY || absf->op != GJOP_ABS ||
		!match_band_difference(cxt, diff, inner_var, &outer_var, &outer_first, &diff_type) ||
		absf->arg1 != diff_type || outer_only_walker(radius, cxt) ||
		range->cls != GJ_CLASS_INT)
		return false;
	oc = existing_column(cxt->outer_vars, (Node *) outer_var);
	if (oc < 0)
		return false;

	/* lo = x - c, hi = x + c, both in int64 */
	for (bound = 0; bound < 2; bound++)
	{
		DeviceCompileContext sub;
		int			t;

		device_compile_init(&sub, cxt->outer_relids, cxt->inner_relids);
		sub.outer_vars = list_copy(cxt->outer_vars);
		sub.inner_vars = list_copy(cxt->inner_vars);
		if (compile_expr(&sub, (Node *) outer_var) < 0)
			return false;
		t = compile_expr(&sub, radius);
		if (t < 0 || gj_type_class(t) != GJ_CLASS_INT ||
			!emit(&sub, bound == 0 ? GJOP_SUB : GJOP_ADD, GJT_INT8, 0, 0, -1) ||
			list_length(sub.outer_vars) != list_length(cxt->outer_vars) ||
			list_length(sub.inner_vars) != list_length(cxt->inner_vars))
			return false;
		if (bound == 0)
		{
			memcpy(range->lo_instrs, sub.program.instrs, sizeof(GjInstr) * sub.program.ninstrs);
			range->lo_ninstrs = sub.program.ninstrs;
			range->lo_inclusive = (cmp == GJOP_LE);
		}
		else
		{
			memcpy(range->hi_instrs, sub.program.instrs, sizeof(GjInstr) * sub.program.ninstrs);
			range->hi_ninstrs = sub.program.ninstrs;
			range->hi_inclusive = (cmp == GJOP_LE);
		}
	}
	guard->active = true;
	guard->outer_col = oc;
	guard->inner_col = range->inner_col;
	guard->outer_minus_inner = outer_first;
	guard->diff_type = diff_type;
	return true;
}

/*
 * Choose the algorithm for a join whose device quals are device_clauses
 * (already compiled into cxt), and fill in what it needs.
 *
 * hash: every "outer Var = inner Var" of one storage class is a hash key.
 * sortmerge: comparisons "inner Var OP outer expression" (or commuted) on
 * one inner column become the lower and upper bounds of the range of inner
 * rows each outer row searches.  Either way the full device program still
 * filters the candidates, unless the bounds are the whole condition.
 * gpujoin.algorithm forces a choice when the condition allows it; otherwise
 * the next applicable algorithm is used (hash -> sortmerge -> nestloop),
 * never one that cannot evaluate the condition.
 */
void
device_choose_algorithm(DeviceCompileContext *cxt, List *device_clauses,
						int requested, GpuJoinPlanInfo *info)
{
	GjEquiSpec	equi;
	GjRangeSpec best_range;
	GpuJoinBandGuard best_guard;
	List	   *hash_clauses = NIL;
	List	   *best_bound_clauses = NIL;
	int			best_score = 0;
	int			best_clauses = 0;
	ListCell   *lc;

	cxt->key_clauses = NIL;
	memset(&equi, 0, sizeof(equi));
	memset(&best_range, 0, sizeof(best_range));
	memset(&best_guard, 0, sizeof(best_guard));
	memset(&info->band_guard, 0, sizeof(info->band_guard));
	info->algorithm = GJ_ALGO_NESTLOOP;
	info->filter_needed = true;
	if (requested == GJ_ALGO_NESTLOOP)
		return;

	/* hash keys */
	foreach(lc, device_clauses)
	{
		OpExpr	   *op = (OpExpr *) lfirst(lc);
		const DeviceFunc *df;
		Var		   *a,
				   *b;
		FuncExpr   *outer_key;
		FuncExpr   *inner_key;
		int			oc,
					ic;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2)
			continue;
		if (equi.nkeys < GJ_MAX_KEY_COLS &&
			match_hashed_equality(cxt, (Node *) op, &outer_key, &inner_key))
		{
			/* a hashed equality: the key columns hold the hashes */
			oc = existing_column(cxt->outer_vars, (Node *) outer_key);
			ic = existing_column(cxt->inner_vars, (Node *) inner_key);
			if (oc < 0 || ic < 0)
				continue;
			equi.outer_cols[equi.nkeys] = oc;
			equi.inner_cols[equi.nkeys] = ic;
			equi.cls[equi.nkeys] = GJ_CLASS_INT;
			equi.nkeys++;
			hash_clauses = lappend(hash_clauses, op);
			continue;
		}
		df = lookup_device_func(op->opfuncid);
		if (df == NULL || df->kind != DF_COMPARE || df->op != GJOP_EQ ||
			gj_type_class(df->arg1) != gj_type_class(df->arg2))
			continue;
		a = plain_var(linitial(op->args));
		b = plain_var(lsecond(op->args));
		if (a == NULL || b == NULL || equi.nkeys >= GJ_MAX_KEY_COLS)
			continue;
		if (bms_is_member(b->varno, cxt->outer_relids))
		{
			Var		   *t = a;

			a = b;
			b = t;
		}
		oc = existing_column(cxt->outer_vars, (Node *) a);
		ic = existing_column(cxt->inner_vars, (Node *) b);
		if (oc < 0 || ic < 0 || !bms_is_member(a->varno, cxt->outer_relids) ||
			!bms_is_member(b->varno, cxt->inner_relids))
			continue;
		equi.outer_cols[equi.nkeys] = oc;
		equi.inner_cols[equi.nkeys] = ic;
		equi.cls[equi.nkeys] = gj_type_class(df->arg1);
		equi.nkeys++;
		hash_clauses = lappend(hash_clauses, op);
	}
	if (equi.nkeys > 0 && (requested == GJ_ALGO_HASH || requested == GJ_ALGO_AUTO))
	{
		info->algorithm = GJ_ALGO_HASH;
		info->equi = equi;
		cxt->key_clauses = hash_clauses;
		return;
	}

	/* range bounds: try each inner column, keep the one with most bounds */
	foreach(lc, cxt->inner_vars)
	{
		Var		   *inner_var = lfirst(lc);
		int			ic = foreach_current_index(lc);
		GjRangeSpec range;
		GpuJoinBandGuard guard;
		int			nclauses = 0;
		List	   *bound_clauses = NIL;
		ListCell   *lq;

		memset(&range, 0, sizeof(range));
		memset(&guard, 0, sizeof(guard));
		range.inner_col = ic;
		if (IsA(inner_var, FuncExpr))
		{
			/*
			 * A hashed column: the range of inner rows whose hash equals the
			 * outer row's, the bounds a load of the outer hash column.
			 */
			range.cls = GJ_CLASS_INT;
			foreach(lq, device_clauses)
			{
				FuncExpr   *outer_key;
				FuncExpr   *inner_key;
				int			oc;

				if (!match_hashed_equality(cxt, lfirst(lq), &outer_key, &inner_key) ||
					!equal(inner_key, inner_var) ||
					(oc = existing_column(cxt->outer_vars, (Node *) outer_key)) < 0)
					continue;
				range.lo_instrs[0].op = range.hi_instrs[0].op = GJOP_LOAD_OUTER;
				range.lo_instrs[0].type = range.hi_instrs[0].type = GJT_INT8;
				range.lo_instrs[0].arg = range.hi_instrs[0].arg = oc;
				range.lo_instrs[0].imm = range.hi_instrs[0].imm = 0;
				range.lo_ninstrs = range.hi_ninstrs = 1;
				range.lo_inclusive = range.hi_inclusive = true;
				nclauses = 1;
				bound_clauses = list_make1(lfirst(lq));
				break;
			}
			if ((range.lo_ninstrs > 0) + (range.hi_ninstrs > 0) > best_score)
			{
				best_score = 2;
				best_range = range;
				best_guard = guard;
				best_clauses = nclauses;
				best_bound_clauses = bound_clauses;
			}
			continue;
		}
		/* comparisons are within one storage class: the inner column's */
		range.cls = gj_type_class(device_type_of(inner_var->vartype));
		foreach(lq, device_clauses)
		{
			OpExpr	   *op = (OpExpr *) lfirst(lq);
			const DeviceFunc *df;
			Node	   *expr;
			int			cmp;
			bool		used_lo = false;
			bool		used_hi = false;

			if (!IsA(op, OpExpr) || list_length(op->args) != 2)
				continue;
			df = lookup_device_func(op->opfuncid);
			if (df == NULL || df->kind != DF_COMPARE || df->op == GJOP_NE)
				continue;
			if (range.lo_ninstrs == 0 && range.hi_ninstrs == 0 && !guard.active &&
				compile_abs_band(cxt, op, inner_var, &range, &guard))
			{
				nclauses++;
				bound_clauses = lappend(bound_clauses, op);
				continue;
			}
			if (equal(plain_var(linitial(op->args)), inner_var))
			{
				expr = lsecond(op->args);
				cmp = df->op;
			}
			else if (equal(plain_var(lsecond(op->args)), inner_var))
			{
				expr = linitial(op->args);
				cmp = gj_commute_cmp(df->op);
			}
			else
				continue;
			if (outer_only_walker(expr, cxt))
				continue;
			/* inner OP expr */
			if ((cmp == GJOP_GT || cmp == GJOP_GE || cmp == GJOP_EQ) && range.lo_ninstrs == 0 &&
				compile_bound(cxt, expr, range.cls, range.lo_instrs, &range.lo_ninstrs))
			{
				range.lo_inclusive = (cmp != GJOP_GT);
				used_lo = true;
			}
			if ((cmp == GJOP_LT || cmp == GJOP_LE || cmp == GJOP_EQ) && range.hi_ninstrs == 0 &&
				compile_bound(cxt, expr, range.cls, range.hi_instrs, &range.hi_ninstrs))
			{
				range.hi_inclusive = (cmp != GJOP_LT);
				used_hi = true;
			}

			/*
			 * The bounds enforce a clause only if they hold all of it: an
			 * equality whose lower bound was already taken by another clause
			 * gives only its upper bound, and must still filter the
			 * candidates.  Either way the range rejects only pairs for which
			 * the clause is false, so it is a key clause of the algorithm.
			 */
			if (cmp == GJOP_EQ ? (used_lo && used_hi) : (used_lo || used_hi))
				nclauses++;
			if (used_lo || used_hi)
				bound_clauses = lappend(bound_clauses, op);
		}
		if ((range.lo_ninstrs > 0) + (range.hi_ninstrs > 0) > best_score)
		{
			best_score = (range.lo_ninstrs > 0) + (range.hi_ninstrs > 0);
			best_range = range;
			best_guard = guard;
			best_clauses = nclauses;
			best_bound_clauses = bound_clauses;
		}
	}
	if (best_score > 0 && requested != GJ_ALGO_NESTLOOP)
	{
		info->algorithm = GJ_ALGO_SORTMERGE;
		info->range = best_range;
		info->band_guard = best_guard;
		cxt->key_clauses = best_bound_clauses;
		/* the bounds are the whole condition: no filtering needed */
		info->filter_needed = (best_clauses != list_length(device_clauses));
	}
}

/* min and max of the non-NULL values of a key column; false if none */
static bool
key_column_range(const GjKeyColumns *cols, int col, int64 nrows, int64 *min, int64 *max)
{
	const int64_t *values = cols->values[col];
	const uint8_t *isnull = cols->isnull[col];
	bool		found = false;
	int64		i;

	for (i = 0; i < nrows; i++)
	{
		if (isnull != NULL && isnull[i])
			continue;
		if (!found || values[i] < *min)
			*min = values[i];
		if (!found || values[i] > *max)
			*max = values[i];
		found = true;
	}
	return found;
}

/*
 * Can the subtraction of an abs() band raise no ERROR on any pair?  Its
 * result must lie strictly above the type's minimum (abs() of the minimum
 * overflows too) and at most its maximum for every pair of non-NULL keys.
 */
bool
gpujoin_band_guard_holds(const GpuJoinBandGuard *guard,
						 const GjKeyColumns *outer, int64 outer_nrows,
						 const GjKeyColumns *inner, int64 inner_nrows)
{
	int64		omin = 0,
				omax = 0,
				imin = 0,
				imax = 0;
	int128		lowest,
				highest,
				type_min,
				type_max;

	if (!guard->active)
		return true;
	if (!key_column_range(outer, guard->outer_col, outer_nrows, &omin, &omax) ||
		!key_column_range(inner, guard->inner_col, inner_nrows, &imin, &imax))
		return true;			/* no pair has two non-NULL keys */
	if (guard->outer_minus_inner)
	{
		lowest = (int128) omin - imax;
		highest = (int128) omax - imin;
	}
	else
	{
		lowest = (int128) imin - omax;
		highest = (int128) imax - omin;
	}
	switch (guard->diff_type)
	{
		case GJT_INT2:
			type_min = PG_INT16_MIN;
			type_max = PG_INT16_MAX;
			break;
		case GJT_INT4:
			type_min = PG_INT32_MIN;
			type_max = PG_INT32_MAX;
			break;
		default:
			type_min = PG_INT64_MIN;
			type_max = PG_INT64_MAX;
			break;
	}
	return lowest > type_min && highest <= type_max;
}
