/*-------------------------------------------------------------------------
 *
 * service_validate.c
 *	  The GPU service's checks of a client's request (docs/architecture.md,
 *	  section 8, "Validation"): every pointer against the staging chunks the
 *	  client owns, every program against the columns it loads and the
 *	  interpreter's stack, every group number against the groups of the
 *	  partials; and the service's own copies of what the client could change
 *	  under a running join and whose values index memory (an aggregate
 *	  spec's pair programs and group numbers).
 *
 * The worker threads call these (service_workers.c): nothing here calls a
 * PostgreSQL function but the staging area's ownership check (a spinlock)
 * and malloc'd memory.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>

#include "gpujoin.h"
#include "service/service_shared.h"
#include "service/service_validate.h"

/*
 * The checked copies of group numbers (checked_groups) are kept for the
 * next joins when theirs end, up to gpujoin.host_buffer_cache bytes, as a
 * backend keeps its input columns (column_cache.c): each join copies one
 * or two arrays of 4 bytes a row, and malloc hands arrays that large out of
 * fresh mappings whose every page faults when the copy writes it.  On the
 * 2-core machine, a serial grouped join of 10M x 1M rows through the cpu
 * service: checks 17.4-19.3 ms a join with malloc, 3.1-3.3 ms reusing them.
 * Each array is a GroupArray header and the numbers after it.
 */
typedef struct GroupArray
{
	struct GroupArray *next;	/* in the pool */
	size_t		bytes;			/* room for numbers after the header */
} GroupArray;

static pthread_mutex_t group_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static GroupArray *group_pool = NULL;
static size_t group_pool_bytes = 0;

/* Room for n group numbers: the smallest pooled array that holds them, or a new one. */
static uint32 *
group_array_take(int64 n)
{
	size_t		bytes = sizeof(uint32) * (size_t) Max(n, 1);
	GroupArray **best = NULL;
	GroupArray **link;
	GroupArray *ga = NULL;

	pthread_mutex_lock(&group_pool_lock);
	for (link = &group_pool; *link != NULL; link = &(*link)->next)
	{
		if ((*link)->bytes >= bytes && (best == NULL || (*link)->bytes < (*best)->bytes))
			best = link;
	}
	if (best != NULL)
	{
		ga = *best;
		*best = ga->next;
		group_pool_bytes -= ga->bytes;
	}
	pthread_mutex_unlock(&group_pool_lock);
	if (ga == NULL)
	{
		ga = malloc(sizeof(GroupArray) + bytes);
		if (ga == NULL)
			return NULL;
		ga->bytes = bytes;
	}
	ga->next = NULL;
	return (uint32 *) (ga + 1);
}

/* An array of group_array_take back to the pool, or freed past its size. */
static void
group_array_give(uint32 *numbers)
{
	GroupArray *ga;
	size_t		limit = (size_t) Max(gpujoin_host_buffer_cache_kb, 0) * 1024;
	bool		kept = false;

	if (numbers == NULL)
		return;
	ga = ((GroupArray *) numbers) - 1;
	pthread_mutex_lock(&group_pool_lock);
	if (group_pool_bytes + ga->bytes <= limit)
	{
		ga->next = group_pool;
		group_pool = ga;
		group_pool_bytes += ga->bytes;
		kept = true;
	}
	pthread_mutex_unlock(&group_pool_lock);
	if (!kept)
		free(ga);
}


/*
 * Can the interpreter run the program without reading outside what it is
 * given (gj_program_run trusts the compiler's checks, and the program came
 * from a client)?  Every opcode known, no stack underflow or overflow, and
 * every LOAD of a column the side has.  A program of outer columns only
 * (range bounds, run with no inner side) passes inner_ncols 0.
 */
bool
gj_service_program_valid(const GjInstr *instrs, int ninstrs, int outer_ncols, int inner_ncols)
{
	int			depth = 0;
	int			pc;

	if (ninstrs < 0 || ninstrs > GJ_MAX_INSTRS)
		return false;
	for (pc = 0; pc < ninstrs; pc++)
	{
		const GjInstr *in = &instrs[pc];
		int			pops = gj_instr_pops(in->op),
					pushes = 1;

		if (pops < 0)
			return false;
		if ((in->op == GJOP_LOAD_OUTER || in->op == GJOP_LOAD_INNER) &&
			(in->arg < 0 || in->arg >= (in->op == GJOP_LOAD_OUTER ? outer_ncols : inner_ncols)))
			return false;
		if (depth < pops || depth - pops + pushes > GJ_MAX_STACK)
			return false;
		depth += pushes - pops;
	}
	return true;
}

/* Do the join's programs and its range and hash keys name columns it has? */
bool
gj_service_join_specs_valid(const GjJoinInput *in)
{
	int			k;

	if (!gj_service_program_valid(in->instrs, in->ninstrs, in->outer.ncols, in->inner.ncols))
		return false;
	if (in->algorithm == GJ_ALGO_SORTMERGE &&
		(in->range.inner_col < 0 || in->range.inner_col >= in->inner.ncols ||
		 !gj_service_program_valid(in->range.lo_instrs, in->range.lo_ninstrs, in->outer.ncols, 0) ||
		 !gj_service_program_valid(in->range.hi_instrs, in->range.hi_ninstrs, in->outer.ncols, 0)))
		return false;
	if (in->algorithm == GJ_ALGO_HASH)
	{
		if (in->equi.nkeys < 0 || in->equi.nkeys > GJ_MAX_KEY_COLS)
			return false;
		for (k = 0; k < in->equi.nkeys; k++)
			if (in->equi.outer_cols[k] < 0 || in->equi.outer_cols[k] >= in->outer.ncols ||
				in->equi.inner_cols[k] < 0 || in->equi.inner_cols[k] >= in->inner.ncols)
				return false;
	}
	return true;
}

/*
 * A checked copy of one side's group numbers (group_array_take's; NULL
 * when a number is out of range or memory runs out): each row's group
 * indexes the partials the backend writes.  The caller has checked where
 * the numbers lie.
 */
static uint32 *
checked_groups(const uint32 *groups, int64 nrows, int64 ngroups)
{
	uint32	   *copy;
	int64		r;

	copy = group_array_take(nrows);
	if (copy == NULL)
		return NULL;
	for (r = 0; r < nrows; r++)
	{
		copy[r] = groups[r];
		if (copy[r] != GJ_AGG_GROUP_DEFERRED && copy[r] >= ngroups)
		{
			group_array_give(copy);
			return NULL;
		}
	}
	return copy;
}

/*
 * One checked copy of the groups that a shared inner side's processes
 * numbered together in its chunk (gpujoin_agg_shared_groups.c), made for
 * the first join of the side that reads them there and kept for the
 * others, with what it was checked for; forgotten when the side goes
 * (gj_service_forget_shared_groups, from service_shared_join.c, after the
 * side's last join ended).  Each process of the Gather numbered its share
 * of the groups before any of them opened a join
 * (gpujoin_agg_groups_number_shared waits for all), so the first copy sees
 * all of them.
 */
#define SHARED_GROUPS_KEPT	32

typedef struct SharedGroups
{
	uint64		handle;			/* of the shared inner side; 0: free */
	const uint32 *from;
	int64		nrows;
	int64		ngroups;
	uint32	   *copy;
} SharedGroups;

static pthread_mutex_t shared_groups_lock = PTHREAD_MUTEX_INITIALIZER;
static SharedGroups shared_groups[SHARED_GROUPS_KEPT];

/*
 * The checked copy of the groups at groups (nrows, each below ngroups) of
 * shared inner side handle: made now by the side's first join that asks
 * (under the lock: the others wait for it instead of making theirs), then
 * returned to every join with the same array, rows and groups; NULL where
 * a number is out of range, memory runs out, no entry is free, or the
 * side keeps a copy of another array (the caller copies them for its join
 * alone then).
 */
static const uint32 *
shared_groups_copy(uint64 handle, const uint32 *groups, int64 nrows, int64 ngroups)
{
	SharedGroups *sg = NULL;
	const uint32 *copy = NULL;
	int			i;

	pthread_mutex_lock(&shared_groups_lock);
	for (i = 0; i < SHARED_GROUPS_KEPT && sg == NULL; i++)
		if (shared_groups[i].handle == handle)
			sg = &shared_groups[i];
	for (i = 0; i < SHARED_GROUPS_KEPT && sg == NULL; i++)
		if (shared_groups[i].handle == 0)
		{
			sg = &shared_groups[i];
			sg->copy = checked_groups(groups, nrows, ngroups);
			if (sg->copy == NULL)
				sg = NULL;		/* this join is refused; a later one may try */
			else
			{
				sg->handle = handle;
				sg->from = groups;
				sg->nrows = nrows;
				sg->ngroups = ngroups;
			}
		}
	if (sg != NULL && sg->from == groups && sg->nrows == nrows && sg->ngroups == ngroups)
		copy = sg->copy;
	pthread_mutex_unlock(&shared_groups_lock);
	return copy;
}

/* Shared inner side handle is gone with its last join: its copy goes too. */
void
gj_service_forget_shared_groups(uint64 handle)
{
	uint32	   *copy = NULL;
	int			i;

	pthread_mutex_lock(&shared_groups_lock);
	for (i = 0; i < SHARED_GROUPS_KEPT; i++)
		if (shared_groups[i].handle == handle)
		{
			copy = shared_groups[i].copy;
			memset(&shared_groups[i], 0, sizeof(SharedGroups));
		}
	pthread_mutex_unlock(&shared_groups_lock);
	group_array_give(copy);
}

static bool
in_chunk(const void *ptr, Size len, const GjSharedInnerChunk *shared)
{
	const char *p = ptr;

	return shared != NULL && shared->chunk != NULL && p >= shared->chunk &&
		p <= shared->chunk + shared->len &&
		len <= (Size) (shared->chunk + shared->len - p);
}

/*
 * Does the inner side's array [ptr, ptr + len) lie in the client's chunks,
 * or in the chunk of the shared inner side the join reads (shared, NULL
 * for none)?
 */
static bool
inner_owned(const void *ptr, Size len, int pid, const GjSharedInnerChunk *shared)
{
	return gj_staging_owned_by(ptr, len, pid) || in_chunk(ptr, len, shared);
}

/*
 * Does the side's every column lie in the client's chunks, or, for an
 * inner side's columns, in the chunk of the shared inner side the join
 * reads (shared; NULL: none)?
 */
bool
gj_service_side_valid(const GjKeyColumns *cols, int64 nrows, int pid,
					  const GjSharedInnerChunk *shared)
{
	int			c;

	if (cols->ncols < 0 || cols->ncols > GJ_MAX_KEY_COLS || nrows < 0 || nrows > GJ_MAX_SIDE_ROWS)
		return false;
	for (c = 0; c < cols->ncols; c++)
	{
		if (!inner_owned(cols->values[c], sizeof(int64) * nrows, pid, shared))
			return false;
		if (cols->isnull[c] != NULL && !inner_owned(cols->isnull[c], nrows, pid, shared))
			return false;
	}
	return true;
}

void
gj_service_free_agg(ServiceAgg *agg)
{
	if (agg == NULL)
		return;
	group_array_give(agg->outer_group);
	if (!agg->inner_group_shared)
		group_array_give(agg->inner_group);
	free(agg);
}

/* Do the partials still lie in the client's chunks (checked at each use)? */
bool
gj_service_partials_owned(const ServiceAgg *agg, int pid)
{
	return gj_staging_owned_by(agg->client_partial, sizeof(GjAggPartial), pid) &&
		(agg->spec.outer_group == NULL ||
		 (gj_staging_owned_by(agg->partial.group_pairs, agg->group_pairs_bytes, pid) &&
		  gj_staging_owned_by(agg->partial.group_acc, agg->group_acc_bytes, pid)));
}

/*
 * The aggregates of a join whose input has an agg_spec: the spec copied
 * and checked (every pointer in the client's chunks for the rows it
 * covers, or for the inner side's arrays in the chunk of the shared inner
 * side the join reads, shared, NULL for none; every program against the
 * columns it loads, every group number below the groups of the partials),
 * the partials at client_partial.  NULL, with the reason in *why, when
 * anything is invalid.
 */
ServiceAgg *
gj_service_agg_from_request(const GjJoinInput *in, GjAggPartial *client_partial, int pid,
							const GjSharedInnerChunk *shared, const char **why)
{
	ServiceAgg *agg;
	GjAggSpec  *spec;
	int64		max_groups = (int64) gj_service->staging_granules * GJ_STAGING_GRANULE / sizeof(int64);
	int64		nrows[2] = {in->outer_nrows, in->inner_nrows};
	int			a;

	*why = "its aggregate spec is invalid";
	if (!gj_staging_owned_by(in->agg_spec, sizeof(GjAggSpec), pid) ||
		!gj_staging_owned_by(client_partial, sizeof(GjAggPartial), pid))
		return NULL;
	if ((agg = calloc(1, sizeof(ServiceAgg))) == NULL)
	{
		*why = "the GPU service is out of memory";
		return NULL;
	}
	spec = &agg->spec;
	*spec = *in->agg_spec;
	agg->client_partial = client_partial;
	if (spec->nargs < 0 || spec->nargs > GJ_AGG_MAX_ARGS ||
		!gj_service_side_valid(&spec->pair_cols[0], in->outer_nrows, pid, NULL) ||
		!gj_service_side_valid(&spec->pair_cols[1], in->inner_nrows, pid, shared))
		goto invalid;
	for (a = 0; a < spec->nargs; a++)
	{
		GjAggArg   *arg = &spec->args[a];

		if (arg->cls != GJ_CLASS_INT && arg->cls != GJ_CLASS_FLOAT)
			goto invalid;
		if (arg->side == GJ_AGG_SIDE_PAIR)
		{
			if (arg->ninstrs < 1 || arg->ninstrs > GJ_MAX_INSTRS ||
				!gj_staging_owned_by(arg->instrs, sizeof(GjInstr) * arg->ninstrs, pid))
				goto invalid;
			memcpy(agg->pair_instrs[a], arg->instrs, sizeof(GjInstr) * arg->ninstrs);
			arg->instrs = agg->pair_instrs[a];
			if (!gj_service_program_valid(arg->instrs, arg->ninstrs, spec->pair_cols[0].ncols,
							   spec->pair_cols[1].ncols))
				goto invalid;
			continue;
		}
		if (arg->side != GJ_AGG_SIDE_OUTER && arg->side != GJ_AGG_SIDE_INNER)
			goto invalid;
		if (arg->side == GJ_AGG_SIDE_OUTER ?
			(!gj_staging_owned_by(arg->values, sizeof(int64) * nrows[0], pid) ||
			 (arg->flags != NULL && !gj_staging_owned_by(arg->flags, nrows[0], pid))) :
			(!inner_owned(arg->values, sizeof(int64) * nrows[1], pid, shared) ||
			 (arg->flags != NULL && !inner_owned(arg->flags, nrows[1], pid, shared))))
			goto invalid;
	}
	if ((spec->host_later[0] != NULL &&
		 !gj_staging_owned_by(spec->host_later[0], nrows[0], pid)) ||
		(spec->host_later[1] != NULL &&
		 !inner_owned(spec->host_later[1], nrows[1], pid, shared)))
		goto invalid;

	if (spec->outer_group == NULL)
	{
		/* no GROUP BY: the partials are the accumulators of the struct */
		if (spec->inner_group != NULL)
			goto invalid;
		return agg;
	}
	if (spec->ngroups < 1 || spec->ngroups > max_groups ||
		(spec->inner_group != NULL &&
		 (spec->ninner_groups < 1 || spec->ninner_groups > max_groups / spec->ngroups)))
		goto invalid;
	if (spec->inner_group == NULL)
		spec->ninner_groups = 1;
	if (!gj_staging_owned_by(spec->outer_group, sizeof(uint32) * in->outer_nrows, pid) ||
		(agg->outer_group = checked_groups(spec->outer_group, in->outer_nrows,
													  spec->ngroups)) == NULL)
		goto invalid;
	spec->outer_group = agg->outer_group;
	if (spec->inner_group != NULL)
	{
		/*
		 * Groups numbered together in the shared inner side's chunk: one
		 * checked copy serves all the side's joins (shared_groups_copy).
		 */
		if (in_chunk(spec->inner_group, sizeof(uint32) * in->inner_nrows, shared) &&
			(agg->inner_group = (uint32 *)
			 shared_groups_copy(shared->handle, spec->inner_group, in->inner_nrows,
								spec->ninner_groups)) != NULL)
			agg->inner_group_shared = true;
		else if (inner_owned(spec->inner_group, sizeof(uint32) * in->inner_nrows, pid, shared))
			agg->inner_group = checked_groups(spec->inner_group, in->inner_nrows,
														 spec->ninner_groups);
		if (agg->inner_group == NULL)
			goto invalid;
		spec->inner_group = agg->inner_group;
	}
	agg->partial.group_pairs = client_partial->group_pairs;
	agg->partial.group_acc = client_partial->group_acc;
	agg->group_pairs_bytes = sizeof(int64) * gj_agg_spec_groups(spec);
	agg->group_acc_bytes = sizeof(GjAggAcc) * gj_agg_spec_groups(spec) * spec->nargs;
	if (!gj_service_partials_owned(agg, pid))
		goto invalid;
	return agg;

invalid:
	gj_service_free_agg(agg);
	return NULL;
}

