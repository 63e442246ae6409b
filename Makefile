# gpujoin: GPU join nodes for PostgreSQL (PGXS build)
#
# nvcc compiles src/kernels/cuda/*.cu when the CUDA Toolkit is found (CUDA_HOME,
# default /usr/local/cuda); the CUDA runtime is linked statically, so the
# library loads on a machine without a GPU or NVIDIA driver.  Without nvcc
# the cuda backend is a stub that reports it is absent.

MODULE_big = gpujoin
EXTENSION = gpujoin
DATA = sql/gpujoin--1.0.sql
PGFILEDESC = "gpujoin - GPU join nodes for PostgreSQL"

OBJS = \
	src/planner_hook.o \
	src/devices.o \
	src/custom_scan/agg/gpujoin_agg_path.o \
	src/custom_scan/agg/gpujoin_agg_exec.o \
	src/custom_scan/agg/gpujoin_agg_groups.o \
	src/custom_scan/agg/gpujoin_agg_shared_groups.o \
	src/custom_scan/agg/gpujoin_agg_partial.o \
	src/custom_scan/exec/gpujoin_emit.o \
	src/custom_scan/exec/gpujoin_explain.o \
	src/custom_scan/exec/gpujoin_parallel.o \
	src/custom_scan/exec/gpujoin_steps.o \
	src/custom_scan/exec/gpujoin_open.o \
	src/custom_scan/exec/gpujoin_overlap.o \
	src/custom_scan/plan/gpujoin_path.o \
	src/custom_scan/plan/gpujoin_plan.o \
	src/custom_scan/plan/gpujoin_plan_private.o \
	src/custom_scan/plan/gpujoin_costs.o \
	src/custom_scan/plan/gpujoin_algorithm.o \
	src/custom_scan/plan/gpujoin_expr_compile.o \
	src/custom_scan/plan/gpujoin_band_guard.o \
	src/custom_scan/plan/gpujoin_row_identity.o \
	src/host_chunking/shared_inner.o \
	src/host_chunking/side_drain.o \
	src/host_chunking/spill.o \
	src/host_chunking/spill_range.o \
	src/host_chunking/device_partitions.o \
	src/host_chunking/heap_reader.o \
	src/host_chunking/host_buffers.o \
	src/host_chunking/column_cache.o \
	src/host_chunking/key_encoding.o \
	src/host_chunking/tile_planner.o \
	src/host_chunking/spill_files.o \
	src/service/gpujoin_service.o \
	src/service/service_staging.o \
	src/service/service_shared_join.o \
	src/service/service_workers.o \
	src/service/service_validate.o \
	src/service/service_budget.o \
	src/service/service_devices.o \
	src/service/service_client.o \
	src/service/service_request.o \
	src/kernels/backend_dispatch.o \
	src/kernels/cpu/cpu_backend.o \
	src/kernels/cpu/cpu_step.o \
	src/kernels/cpu/cpu_nestloop.o \
	src/kernels/cpu/cpu_sorted.o \
	src/kernels/cpu/cpu_agg.o \
	src/kernels/cpu/cpu_rowcount.o \
	src/kernels/cpu/cpu_program_count.o \
	src/kernels/cpu/cpu_affine.o \
	src/kernels/cpu/cpu_dominance.o \
	src/kernels/cpu/cpu_page_decode.o \
	src/kernels/shared/agg_runs.o \
	src/kernels/shared/agg_fold.o \
	src/kernels/shared/kernel_store.o \
	src/kernels/shared/flat_program.o

# the cuda backend, one object per concern (src/kernels/cuda/cuda_internal.cuh)
CUDA_OBJS = \
	src/kernels/cuda/cuda_device.o \
	src/kernels/cuda/cuda_memory.o \
	src/kernels/cuda/cuda_backend.o \
	src/kernels/cuda/cuda_step.o \
	src/kernels/cuda/cuda_nestloop.o \
	src/kernels/cuda/cuda_sorted.o \
	src/kernels/cuda/cuda_agg.o \
	src/kernels/cuda/cuda_rowcount.o \
	src/kernels/cuda/cuda_program_count.o \
	src/kernels/cuda/cuda_compile.o \
	src/kernels/cuda/cuda_page_decode.o
# whichever of the two a build used, clean removes both; and the headers'
# text that cuda_compile.cu hands NVRTC (below)
EXTRA_CLEAN = $(CUDA_OBJS) src/kernels/cuda/cuda_stub.o src/kernels/cuda/cuda_program_text.h

CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
ifeq ($(wildcard $(NVCC)),)
WITH_CUDA = no
endif
ifeq ($(wildcard src/kernels/cuda/cuda_backend.cu),)
WITH_CUDA = no
endif
WITH_CUDA ?= yes

ifeq ($(WITH_CUDA),yes)
OBJS += $(CUDA_OBJS)
# Hopper (H100) and Ampere code, plus PTX for newer devices.
NVCC_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
# --fmad=false: a*b+c must round twice, as PostgreSQL's float8 arithmetic does.
NVCC_FLAGS = -O3 -std=c++17 --fmad=false -Xcompiler -fPIC,-Wall,-Werror,-fvisibility=hidden $(NVCC_ARCH) \
	-I$(srcdir)/src
SHLIB_LINK += -L$(CUDA_HOME)/lib64 -lcudart_static -lrt -ldl -lpthread -lstdc++
else
OBJS += src/kernels/cuda/cuda_stub.o
endif

REGRESS = setup types nulls_floats tiles rescan explain errors algorithms jointypes parallel aggregates emit types_text hash_probe types_exact overlap modify types_oid agg_device columnar_input page_decoder spill partitions agg_partial_float full_theta band_forms
REGRESS_OPTS = --load-extension=gpujoin
ISOLATION = columnar_mvcc columnar_serializable
ISOLATION_OPTS = --load-extension=gpujoin

# gpujoin_overlap.c runs a join's next step on a helper thread
SHLIB_LINK += -lpthread

PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -Wall -Werror -ffp-contract=off

# The library exports only what PostgreSQL looks up (_PG_init, the magic
# block, the SQL functions), so that no name of ours, nor of the static CUDA
# runtime, can bind to another library's in the same backend: everything is
# hidden unless marked PGDLLEXPORT, which PostgreSQL 15 defines empty (16
# makes it this).  test/check_symbols.sh checks it.
PG_CFLAGS += -fvisibility=hidden
PG_CPPFLAGS += -DPGDLLEXPORT='__attribute__((visibility("default")))'
SHLIB_LINK += -Wl,--exclude-libs,ALL

# Debian's PGXS would emit LLVM bitcode with clang for JIT inlining; the
# extension gains nothing from it and it needs a matching clang.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

src/kernels/cuda/%.o: src/kernels/cuda/%.cu src/kernels/cuda/cuda_internal.cuh \
		src/kernels/cuda/compiled_count.cuh src/kernels/cuda/compiled_flat.cuh \
		$(wildcard src/kernels/*.h src/kernels/shared/*.h)
	$(NVCC) $(NVCC_FLAGS) -c -o $@ $<

# The text of the headers NVRTC compiles a program's kernel from
# (cuda_compile.cu), as C string constants: src/kernels/cuda/embed_text.sh.
src/kernels/cuda/cuda_program_text.h: src/kernels/device_program.h src/kernels/compiled_args.h \
		src/kernels/cuda/compiled_count.cuh src/kernels/cuda/compiled_flat.cuh src/kernels/cuda/embed_text.sh
	sh src/kernels/cuda/embed_text.sh src/kernels/device_program.h src/kernels/compiled_args.h \
		src/kernels/cuda/compiled_count.cuh src/kernels/cuda/compiled_flat.cuh > $@.tmp && mv $@.tmp $@
src/kernels/cuda/cuda_compile.o: src/kernels/cuda/cuda_program_text.h

# PGXS does not track header dependencies; every object depends on them all.
$(OBJS): $(wildcard src/*.h src/*/*.h src/*/*/*.h)

# the objects of the library, for test/check_symbols.sh
print-objs:
	@echo $(OBJS)
.PHONY: print-objs
