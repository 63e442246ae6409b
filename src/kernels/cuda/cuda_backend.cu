/*-------------------------------------------------------------------------
 *
 * cuda_backend.cu
 *	  The cuda backend: the nested-loop, sort-merge/range and hash tile
 *	  algorithms of GpuJoin on an NVIDIA GPU, implementing the contract of
 *	  backend.h.  This file holds the GjBackend table, opening and closing
 *	  a join; the dispatch of a step to its algorithm is cuda_step.cu's.
 *
 * A nested-loop step counts, then writes (cuda_nestloop.cu); a sort-merge or
 * hash join puts both sides in exactly the order the cpu backend uses, on
 * the device, when it begins, and a step binary-searches each outer row's
 * bounds in the tile's sorted inner keys (cuda_sorted.cu).  The aggregate
 * fast path is in cuda_agg.cu, device and memory in cuda_device.cu and
 * cuda_memory.cu; cuda_internal.cuh says how the files fit.
 *
 * The key columns of the current outer and inner tile stay resident on the
 * device and are uploaded again only when the tile's range changes.  Rows
 * in the match buffer are row numbers of the whole side, as on the cpu
 * backend.
 *
 * No PostgreSQL headers here (see backend.h), and nothing may throw across
 * the extern "C" boundary: memory comes from calloc and the CUDA runtime,
 * errors travel back in GjError.
 *
 *-------------------------------------------------------------------------
 */
#include "cuda_internal.cuh"

/* Release everything begin_join took; safe on any state, once. */
static void
cuda_end_join(void *arg)
{
	CudaJoinState *state = (CudaJoinState *) arg;

	if (state == NULL)
		return;
	(void) cudaSetDevice(state->device);
	/* nothing may still be writing into what we free (errors are moot now) */
	if (state->have_stream)
		cudaStreamSynchronize(state->stream);
	/* a borrowed inner side is the prepared side's, freed by release_inner */
	if (state->inner_borrowed)
	{
		memset(&state->inner, 0, sizeof(DeviceSide));
		state->d_inner_keys = NULL;
		state->d_inner_perm = NULL;
	}
	gj_cuda_free_side(state, &state->outer);
	gj_cuda_free_side(state, &state->inner);
	gj_cuda_free_device_matches(state);
	gj_device_free(state, state->d_scratch);
	gj_device_free(state, state->d_cub_temp);
	gj_device_free(state, state->d_prefix);
	gj_pinned_free(state->h_prefix);
	gj_pinned_free(state->h_out_outer);
	gj_pinned_free(state->h_out_inner);
	gj_pinned_free(state->h_spare_outer);
	gj_pinned_free(state->h_spare_inner);
	gj_device_free(state, state->d_inner_keys);
	gj_device_free(state, state->d_inner_perm);
	gj_device_free(state, state->d_outer_perm);
	gj_device_free(state, state->d_outer_lo);
	gj_device_free(state, state->d_outer_hi);
	gj_device_free(state, state->d_outer_status);
	gj_device_free(state, state->d_first);
	gj_device_free(state, state->d_cand);
	gj_device_free(state, state->d_count);
	gj_device_free(state, state->d_cut);
	gj_pinned_free(state->h_cut);
	gj_device_free(state, state->d_pair_args);
	gj_device_free(state, state->d_match_bits);
	gj_device_free(state, state->d_recheck_bits);
	gj_agg_runs_free(state->agg_runs);
	gj_cuda_agg_free(state);
	free(state->h_outer_perm);
	gj_pinned_free(state->h_run_first);
	gj_pinned_free(state->h_run_width);
	free(state->h_prune_lo);
	free(state->h_prune_hi);
	for (int i = 0; i < state->nevents; i++)
		cudaEventDestroy(state->events[i]);
	if (state->have_stream)
		cudaStreamDestroy(state->stream);
	(void) cudaGetLastError();
	free(state);
}

/* The allocations of begin_join; on failure the caller frees what exists. */
static bool
begin_join_allocate(CudaJoinState *state, GjError *err)
{
	CUDA_TRY(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking),
			 "could not create a CUDA stream");
	state->have_stream = true;
	for (; state->nevents < NUM_EVENTS; state->nevents++)
		CUDA_TRY(cudaEventCreate(&state->events[state->nevents]),
				 "could not create a CUDA event");
	CUDA_TRY(gj_device_alloc(state, (void **) &state->d_prefix, 3 * sizeof(int64_t)),
			 "could not allocate device memory");
	CUDA_TRY(gj_pinned_alloc((void **) &state->h_prefix, 3 * sizeof(int64_t)),
			 "could not allocate pinned host memory");
	return gj_cuda_ensure_host_matches(state, gj_min64(state->capacity, HOST_MATCH_MIN_PAIRS), err);
}

/* Mark one key column used; false if it does not exist. */
static bool
mark_column(CudaJoinState *state, bool outer, int col)
{
	const GjKeyColumns *host = outer ? &state->input.outer : &state->input.inner;

	if (col < 0 || col >= host->ncols || host->values[col] == NULL)
		return false;
	(outer ? &state->outer : &state->inner)->used[col] = true;
	return true;
}

/* Mark the columns the instructions load; false if one does not exist. */
static bool
mark_program_columns(CudaJoinState *state, const GjInstr *instrs, int ninstrs)
{
	for (int pc = 0; pc < ninstrs; pc++)
	{
		if ((instrs[pc].op == GJOP_LOAD_OUTER || instrs[pc].op == GJOP_LOAD_INNER) &&
			!mark_column(state, instrs[pc].op == GJOP_LOAD_OUTER, instrs[pc].arg))
			return false;
	}
	return true;
}

/*
 * Mark the columns the device reads: those the program loads, and for the
 * sorted algorithms the key columns and those the bounds load.
 */
static bool
mark_used_columns(CudaJoinState *state)
{
	const GjJoinInput *input = &state->input;

	if (!mark_program_columns(state, state->program.instrs, state->program.ninstrs))
		return false;
	if (input->algorithm == GJ_ALGO_SORTMERGE)
	{
		const GjRangeSpec *range = &input->range;

		if (range->lo_ninstrs < 0 || range->lo_ninstrs > GJ_MAX_INSTRS ||
			range->hi_ninstrs < 0 || range->hi_ninstrs > GJ_MAX_INSTRS ||
			!mark_column(state, false, range->inner_col) ||
			!mark_program_columns(state, range->lo_instrs, range->lo_ninstrs) ||
			!mark_program_columns(state, range->hi_instrs, range->hi_ninstrs))
			return false;
	}
	else if (input->algorithm == GJ_ALGO_HASH)
	{
		const GjEquiSpec *equi = &input->equi;

		if (equi->nkeys < 1 || equi->nkeys > GJ_MAX_KEY_COLS)
			return false;
		for (int k = 0; k < equi->nkeys; k++)
		{
			if (!mark_column(state, true, equi->outer_cols[k]) ||
				!mark_column(state, false, equi->inner_cols[k]))
				return false;
		}
	}
	return true;
}

/*
 * Device memory a sort-merge or hash join keeps for all its tiles
 * (gj_sorted_resident_bytes, shared with the executor's partitioning).
 */
static int64_t
sorted_resident_bytes(const CudaJoinState *state)
{
	int			outer_cols = 0;
	int			inner_cols = 0;

	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		outer_cols += state->outer.used[c] ? 1 : 0;
		inner_cols += state->inner.used[c] ? 1 : 0;
	}
	return gj_sorted_resident_bytes(state->input.outer_nrows, state->input.inner_nrows,
									outer_cols, inner_cols);
}

/*
 * Use the inner side prepare_inner prepared (input.prepared_inner), if it
 * fits this join: the same inner side, algorithm and key spec
 * (gj_inner_prepared_alike), on this join's device, with every inner column
 * this join's program reads.  A join on another device of the GPU service
 * (which prepares the side once, for whichever device, and hands it to
 * every join that reads the side) or one whose program reads another inner
 * column sorts its inner side itself, as without prepare_inner.
 */
static void
borrow_prepared_inner(CudaJoinState *state)
{
	const CudaPreparedInner *prepared =
		(const CudaPreparedInner *) state->input.prepared_inner;

	if (prepared == NULL || state->input.algorithm == GJ_ALGO_NESTLOOP ||
		prepared->device != state->device ||
		!gj_inner_prepared_alike(&prepared->input, &state->input))
		return;
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		if (state->inner.used[c] && state->input.inner_nrows > 0 &&
			prepared->inner.values[c] == NULL)
			return;
	}
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		state->inner.values[c] = prepared->inner.values[c];
		state->inner.isnull[c] = prepared->inner.isnull[c];
	}
	state->inner.capacity = prepared->inner.capacity;
	state->inner.begin = prepared->inner.begin;
	state->inner.end = prepared->inner.end;
	state->d_inner_keys = prepared->d_inner_keys;
	state->d_inner_perm = prepared->d_inner_perm;
	state->inner_valid = prepared->inner_valid;
	state->inner_borrowed = true;
}

static void *
cuda_begin_join(const GjJoinInput *input, GjError *err)
{
	CudaJoinState *state;
	GjDeviceInfo info;
	double		opened = gj_clock_ms();

	/* selects the join's device in this thread (0 outside the GPU service) */
	if (!gj_cuda_probe_device(input->device, &info, err))
		return NULL;
	state = (CudaJoinState *) calloc(1, sizeof(CudaJoinState));
	if (state == NULL)
	{
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message), "out of host memory");
		return NULL;
	}
	state->device = input->device;
	state->outer.begin = state->outer.end = -1;
	state->inner.begin = state->inner.end = -1;
	state->input = *input;
	if (input->ninstrs < 1 || input->ninstrs > GJ_MAX_INSTRS ||
		input->outer.ncols > GJ_MAX_KEY_COLS || input->inner.ncols > GJ_MAX_KEY_COLS)
		goto bad_program;
	state->program.ninstrs = input->ninstrs;
	memcpy(state->program.instrs, input->instrs, sizeof(GjInstr) * input->ninstrs);
	state->input.instrs = state->program.instrs;
	if (!mark_used_columns(state))
		goto bad_program;
	state->simple = gj_program_simple_compare(state->program.instrs, input->ninstrs,
											  &state->compare);
	state->capacity = input->match_capacity > 0 ? input->match_capacity : 1;
	state->sm_count = info.sm_count > 0 ? info.sm_count : 1;
	state->arch = info.cc_major * 10 + info.cc_minor;

	/*
	 * The sorted sides stay on the device for every tile, so they must fit
	 * the budget's share for inputs (tile_planner.c keeps a quarter for the
	 * matches): gpujoin.device_memory is a bound on what one join takes
	 * from a shared GPU.  The executor cuts a join over this share into
	 * device partitions that fit (device_partitions.c, same formula), so
	 * this is reached only when a retry after running out of memory halved
	 * the budget: the executor then runs the join on the cpu backend.
	 */
	if (input->algorithm != GJ_ALGO_NESTLOOP && input->budget_bytes > 0 &&
		sorted_resident_bytes(state) > GJ_RESIDENT_SHARE(input->budget_bytes))
	{
		err->code = GJ_ERR_OVER_BUDGET;
		snprintf(err->message, sizeof(err->message),
				 "the sorted keys of %lld x %lld rows take %lld kB of device memory, more than three quarters of the join's budget of %lld kB (gpujoin.device_memory)",
				 (long long) input->outer_nrows, (long long) input->inner_nrows,
				 (long long) (sorted_resident_bytes(state) / 1024),
				 (long long) (input->budget_bytes / 1024));
		free(state);
		return NULL;
	}

	borrow_prepared_inner(state);
	if (!begin_join_allocate(state, err))
	{
		cuda_end_join(state);
		return NULL;
	}
	if (input->algorithm != GJ_ALGO_NESTLOOP)
	{
		/* synchronises its stream: the host clock sees the whole sort */
		double		start = gj_clock_ms();

		if (!gj_cuda_prepare_sorted(state, err))
		{
			cuda_end_join(state);
			return NULL;
		}
		state->pending_times.sort_ms += gj_clock_ms() - start;
	}

	/*
	 * The match buffers, now that it is known whether steps are filtered:
	 * at least one outer row's matches of any tile, so that running out of
	 * device memory shows here, where the executor retries with smaller
	 * tiles, and not in the middle of the join.
	 */
	state->packed_needed = input->algorithm != GJ_ALGO_NESTLOOP &&
		(input->filter_needed || state->outer_all > 0);
	if (!gj_cuda_ensure_device_matches(state, input->inner_nrows, DEVICE_MATCH_MIN_PAIRS, err))
	{
		cuda_end_join(state);
		return NULL;
	}
	/* the first step reports it, with the sort's time (pending_times) */
	opened = gj_clock_ms() - opened - state->pending_times.sort_ms;
	state->pending_times.open_ms += opened > 0 ? opened : 0;
	return state;

bad_program:
	free(state);
	err->code = GJ_ERR_DEVICE;
	snprintf(err->message, sizeof(err->message),
			 "device program of %d instructions does not fit its key columns",
			 (int) input->ninstrs);
	return NULL;
}

/*
 * The bounds of outer positions from p (at most to end) in h_prune_lo and
 * h_prune_hi, unless they are there; false if they cannot be copied.  A
 * walk that goes on past the block just read fetches twice as many rows the
 * next time (up to PRUNE_BLOCK_MAX), so a tile whose walk steps over
 * millions of rows waits for a few dozen copies, not thousands.
 */
#define PRUNE_BLOCK 4096
#define PRUNE_BLOCK_MAX (256 * 1024)

static bool
prune_block_at(CudaJoinState *state, int64_t p, int64_t end)
{
	int64_t		want = PRUNE_BLOCK;
	int64_t		n;
	GjError		err;

	if (p >= state->prune_begin && p < state->prune_end)
		return true;
	/* the join's device in this thread, as every entry point selects it */
	if (!gj_cuda_use_device(state, &err))
		return false;
	if (p == state->prune_end && state->prune_cap > 0)
		want = gj_min64(2 * state->prune_cap, PRUNE_BLOCK_MAX);
	if (want > state->prune_cap)
	{
		free(state->h_prune_lo);
		free(state->h_prune_hi);
		state->h_prune_lo = (int64_t *) malloc(sizeof(int64_t) * want);
		state->h_prune_hi = (int64_t *) malloc(sizeof(int64_t) * want);
		state->prune_cap = want;
		if (state->h_prune_lo == NULL || state->h_prune_hi == NULL)
		{
			free(state->h_prune_lo);
			free(state->h_prune_hi);
			state->h_prune_lo = state->h_prune_hi = NULL;
			state->prune_cap = 0;
			state->prune_begin = state->prune_end = 0;
			return false;
		}
	}
	n = gj_min64(state->prune_cap, end - p);
	state->prune_begin = state->prune_end = 0;
	if (cudaMemcpyAsync(state->h_prune_lo, state->d_outer_lo + p, sizeof(int64_t) * n,
						cudaMemcpyDeviceToHost, state->stream) != cudaSuccess ||
		cudaMemcpyAsync(state->h_prune_hi, state->d_outer_hi + p, sizeof(int64_t) * n,
						cudaMemcpyDeviceToHost, state->stream) != cudaSuccess ||
		cudaStreamSynchronize(state->stream) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;
	}
	state->prune_begin = p;
	state->prune_end = p + n;
	return true;
}

/*
 * The sorted inner key at position p (in [0, inner_valid)) into *key, from
 * those tile pruning read before or copied from the device; false if it
 * cannot be copied.  A join reads the keys at its tiles' ends only, so
 * copying them one by one replaced a host copy of the whole side's keys
 * (8 MB for 1M rows) that every sort of an inner side made.
 */
static bool
inner_key_at(CudaJoinState *state, int64_t p, int64_t *key)
{
	int			slot;
	GjError		err;

	for (slot = 0; slot < INNER_KEYS_KEPT; slot++)
	{
		if (state->inner_key_pos[slot] == p + 1)
		{
			*key = state->inner_key_val[slot];
			return true;
		}
	}
	if (!gj_cuda_use_device(state, &err) ||
		cudaMemcpyAsync(key, state->d_inner_keys + p, sizeof(int64_t), cudaMemcpyDeviceToHost,
						state->stream) != cudaSuccess ||
		cudaStreamSynchronize(state->stream) != cudaSuccess)
	{
		(void) cudaGetLastError();
		return false;
	}
	/* positions are kept plus one, so that a zeroed slot holds none */
	slot = state->inner_keys_next;
	state->inner_keys_next = (slot + 1) % INNER_KEYS_KEPT;
	state->inner_key_pos[slot] = p + 1;
	state->inner_key_val[slot] = *key;
	return true;
}

/*
 * Tile pruning: a sorted join's tiles whose key ranges cannot meet.  The
 * decision of gj_sorted_tile_can_match (gj_keys.h, the cpu backend's), on
 * the outer positions' kinds from their counts and the bounds of the
 * bounded rows it walks fetched from the device a block at a time: the walk
 * ends at the first row that can match, or once the lower bounds pass the
 * tile's inner keys, so a tile reads a block or two where a host copy of
 * every bound cost the whole side's transfer.  Where the bounds cannot be
 * copied, the tile runs (a tile that cannot match runs to no matches).
 */
static bool
cuda_tile_can_match(void *arg, const GjTile *tile)
{
	CudaJoinState *state = (CudaJoinState *) arg;
	int64_t		bounded_end = state->outer_all + state->outer_bounded;
	int64_t		valid_end = gj_min64(tile->inner_end, state->inner_valid);
	int64_t		kmin,
				kmax,
				p;

	if (state->input.algorithm == GJ_ALGO_NESTLOOP)
		return true;
	if (tile->inner_end <= tile->inner_begin)
		return false;
	/* the first row that is not empty: an all row can match anything */
	p = tile->outer_begin;
	if (p < tile->outer_end && gj_cuda_outer_status(state, p) == GJ_OUTER_ALL)
		return true;
	if (valid_end <= tile->inner_begin)
		return false;
	if (!inner_key_at(state, tile->inner_begin, &kmin) ||
		!inner_key_at(state, valid_end - 1, &kmax))
		return true;
	/* bounded outer rows are sorted by lo: stop once lo passes kmax */
	for (; p < tile->outer_end && p < bounded_end; p++)
	{
		if (!prune_block_at(state, p, gj_min64(tile->outer_end, bounded_end)))
			return true;
		if (state->h_prune_lo[p - state->prune_begin] > kmax)
			break;
		if (state->h_prune_hi[p - state->prune_begin] >= kmin)
			return true;
	}
	return false;
}

/*
 * Step overlap (backend.h).  The second pinned buffer starts empty and is
 * allocated by the first step that writes into it, so this cannot fail.
 */
static bool
cuda_double_buffer(void *arg)
{
	CudaJoinState *state = (CudaJoinState *) arg;

	state->double_buffered = true;
	return true;
}

/*
 * The inner side prepared once for several joins (backend.h): what
 * gj_cuda_sort_inner leaves for the inner side (its key columns, sorted
 * keys and permutation on the device), built by
 * a state of its own on input's device with cudaMalloc, not the pool, and
 * synchronised before this returns, so that joins on any stream of that
 * device read it (borrow_prepared_inner).  The columns uploaded are those
 * input's program and key spec read.
 */
static const void *
cuda_prepare_inner(const GjJoinInput *input, GjError *err)
{
	CudaPreparedInner *prepared;
	CudaJoinState *state;
	GjDeviceInfo info;

	if (input->algorithm != GJ_ALGO_SORTMERGE && input->algorithm != GJ_ALGO_HASH)
	{
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "only a sort-merge or hash join's inner side is prepared");
		return NULL;
	}
	if (input->ninstrs < 1 || input->ninstrs > GJ_MAX_INSTRS ||
		input->outer.ncols > GJ_MAX_KEY_COLS || input->inner.ncols > GJ_MAX_KEY_COLS)
	{
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "device program of %d instructions does not fit its key columns",
				 (int) input->ninstrs);
		return NULL;
	}
	/* selects input's device in this thread */
	if (!gj_cuda_probe_device(input->device, &info, err))
		return NULL;
	prepared = (CudaPreparedInner *) calloc(1, sizeof(CudaPreparedInner));
	state = (CudaJoinState *) calloc(1, sizeof(CudaJoinState));
	if (prepared == NULL || state == NULL)
	{
		free(prepared);
		free(state);
		err->code = GJ_ERR_OUT_OF_MEMORY;
		snprintf(err->message, sizeof(err->message), "out of host memory");
		return NULL;
	}
	state->device = input->device;
	state->plain_alloc = true;
	state->outer.begin = state->outer.end = -1;
	state->inner.begin = state->inner.end = -1;
	state->input = *input;
	state->program.ninstrs = input->ninstrs;
	memcpy(state->program.instrs, input->instrs, sizeof(GjInstr) * input->ninstrs);
	state->input.instrs = state->program.instrs;
	state->input.prepared_inner = NULL;
	state->capacity = 1;
	state->sm_count = info.sm_count > 0 ? info.sm_count : 1;
	state->arch = info.cc_major * 10 + info.cc_minor;
	if (!mark_used_columns(state))
	{
		cuda_end_join(state);
		free(prepared);
		err->code = GJ_ERR_DEVICE;
		snprintf(err->message, sizeof(err->message),
				 "device program of %d instructions does not fit its key columns",
				 (int) input->ninstrs);
		return NULL;
	}
	if (!begin_join_allocate(state, err) || !gj_cuda_sort_inner(state, err))
	{
		cuda_end_join(state);
		free(prepared);
		return NULL;
	}

	/* the inner side is the prepared side's now; the rest of state goes */
	prepared->device = input->device;
	prepared->inner = state->inner;
	prepared->d_inner_keys = state->d_inner_keys;
	prepared->d_inner_perm = state->d_inner_perm;
	prepared->inner_valid = state->inner_valid;
	state->inner_borrowed = true;
	cuda_end_join(state);

	/* what it fits, not what it points to: only the inner side is kept */
	prepared->input = *input;
	prepared->input.instrs = NULL;
	prepared->input.agg_spec = NULL;
	prepared->input.prepared_inner = NULL;
	return prepared;
}

/*
 * Free a prepared inner side, after every join that read it has ended (the
 * caller's promise, backend.h): cudaFree, as it was allocated.
 */
static void
cuda_release_inner(const void *arg)
{
	CudaPreparedInner *prepared = (CudaPreparedInner *) arg;

	if (prepared == NULL)
		return;
	(void) cudaSetDevice(prepared->device);
	for (int c = 0; c < GJ_MAX_KEY_COLS; c++)
	{
		if (prepared->inner.values[c] != NULL)
			(void) cudaFree(prepared->inner.values[c]);
		if (prepared->inner.isnull[c] != NULL)
			(void) cudaFree(prepared->inner.isnull[c]);
	}
	if (prepared->d_inner_keys != NULL)
		(void) cudaFree(prepared->d_inner_keys);
	if (prepared->d_inner_perm != NULL)
		(void) cudaFree(prepared->d_inner_perm);
	(void) cudaGetLastError();
	free(prepared);
}

/*
 * For test/kernels/kt_compare.c only, not part of the backend contract: did
 * the begin_join that returned state borrow a prepared inner side?
 */
extern "C" bool
gj_cuda_test_inner_borrowed(const void *state)
{
	return ((const CudaJoinState *) state)->inner_borrowed;
}

extern "C" const GjBackend gj_cuda_backend = {
	"cuda",
	cuda_begin_join,
	gj_cuda_run_step,
	cuda_end_join,
	(1u << GJ_ALGO_NESTLOOP) | (1u << GJ_ALGO_SORTMERGE) | (1u << GJ_ALGO_HASH),
	cuda_tile_can_match,
	gj_cuda_agg_step,
	gj_cuda_agg_finish,
	cuda_double_buffer,
	cuda_prepare_inner,
	cuda_release_inner
};
