#!/bin/bash
# test/gpu_checks.sh: the checks a change to the kernels or the cuda backend
# needs on a GPU machine, in one call of at most about ten minutes:
#
#   1. build the extension and the kernel test from scratch (make -B: a warm
#      machine keeps stale objects);
#   2. kernel_test: the cuda backend against the cpu backend, no server;
#   3. the whole suite (test/run_tests.sh) with gpujoin.device = cuda, in
#      the GPU service on cuda (GPU_SERVICE_BACKEND=cpu: the service on the
#      cpu backend, so the cuda joins run in the backends themselves);
#   4. compute-sanitizer memcheck on `kernel_test quick`, then racecheck on
#      every kernel at small sizes (`kernel_test race`), with whatever time is left.
#
# On the lent GPU machine (../shared/device/README.md), with .device carried:
#
#   source .device/env.sh && test/gpu_checks.sh
#
# pg_prove comes from Debian's libtap-parser-sourcehandler-pgtap-perl: stage it
# next to the other packages, (cd .device/debs && apt-get download
# libtap-parser-sourcehandler-pgtap-perl); this script puts $PGROOT/usr/bin and
# its perl modules on the paths.  Logs go to $OUT (the device tool's folder)
# or to gpu_checks_out/.  GPU_CHECKS_SECONDS bounds the whole (default 570),
# FUZZ_CASES the fuzzer (default 600).  The last line is "N passed, N failed"
# over kernel_test and the suite; the suite counts SQLsmith as 1 failure where
# sqlsmith is not installed (the GPU machine: its Debian package is not staged).
set -u
cd "$(dirname "$0")/.."
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }
budget=${GPU_CHECKS_SECONDS:-570}
out=${OUT:-gpu_checks_out}
mkdir -p "$out"
if [ -n "${PGROOT:-}" ]; then
	export PATH=$PATH:$PGROOT/usr/bin PERL5LIB=$PGROOT/usr/share/perl5${PERL5LIB:+:$PERL5LIB}
fi
# the cluster's unprivileged owner reads the checkout
chmod -R a+rX . 2>/dev/null

(make -B -s -j"$(nproc)" >"$out/build.log" 2>&1 && make -s install >>"$out/build.log" 2>&1) &
build_ext=$!
make -B -s -C test/kernels >"$out/build_kernel_test.log" 2>&1 &
build_kt=$!
wait $build_ext || { tail -40 "$out/build.log"; echo "0 passed, 1 failed"; exit 1; }
wait $build_kt || { tail -40 "$out/build_kernel_test.log"; echo "0 passed, 1 failed"; exit 1; }
echo "built in $(elapsed) s"

# GPU_CHECKS_KERNEL_TEST=0 leaves kernel_test out (a second call runs it
# where the suite needs the whole call); GPU_CHECKS_SUITE=0 the suite.
if [ "${GPU_CHECKS_KERNEL_TEST:-1}" = 1 ]; then
	timeout ${KERNEL_TEST_SECONDS:-200} test/kernels/kernel_test >"$out/kernel_test.log" 2>&1
else
	: >"$out/kernel_test.log"
fi
k_ok=$(grep -c '^ok' "$out/kernel_test.log")
k_bad=$(grep -c '^not ok' "$out/kernel_test.log")
echo "kernel_test: $k_ok passed, $k_bad failed ($(head -1 "$out/kernel_test.log")) at $(elapsed) s"
grep -A3 '^not ok' "$out/kernel_test.log" | head -20

if [ "${GPU_CHECKS_SUITE:-1}" = 1 ]; then
	GPUJOIN_CLUSTER_CONF="gpujoin.device = cuda
	gpujoin.service_backend = ${GPU_SERVICE_BACKEND:-cuda}" SERVICE_BACKEND=${GPU_SERVICE_BACKEND:-cuda} SKIP_DEPS=1 SKIP_BUILD=1 \
		FUZZ_CASES=${FUZZ_CASES:-600} LOAD_DURATION=10 SMITH_SECONDS=5 \
		timeout $((budget - $(elapsed) - 60)) test/run_tests.sh >"$out/suite.log" 2>&1
	echo "suite at $(elapsed) s: $(tail -2 "$out/suite.log" | head -1)"
	grep -E 'FAILED|^not ok' "$out/suite.log" | head -20
	[ -f regression.diffs ] && cp regression.diffs "$out/"
	s_counts=$(tail -1 "$out/suite.log")
	s_ok=$(echo "$s_counts" | sed -nE 's/^([0-9]+) passed.*/\1/p')
	s_bad=$(echo "$s_counts" | sed -nE 's/.* ([0-9]+) failed$/\1/p')
else
	s_ok=0 s_bad=0
fi

# GPU_CHECKS_SANITIZERS=0 leaves them out (a call with more to run after)
[ "${GPU_CHECKS_SANITIZERS:-1}" = 1 ] || budget=0
left=$((budget - $(elapsed)))
if [ $left -gt 30 ]; then
	timeout $((left / 2)) compute-sanitizer --tool memcheck test/kernels/kernel_test quick \
		>"$out/memcheck.log" 2>&1
	echo "memcheck (rc $?, 124: time limit): $(grep -c '^ok' "$out/memcheck.log") tests, $(grep 'ERROR SUMMARY' "$out/memcheck.log")"
fi
left=$((budget - $(elapsed)))
if [ $left -gt 30 ]; then
	timeout $left compute-sanitizer --tool racecheck test/kernels/kernel_test race \
		>"$out/racecheck.log" 2>&1
	echo "racecheck (rc $?, 124: time limit): $(grep -c '^ok' "$out/racecheck.log") tests, $(grep 'RACECHECK SUMMARY' "$out/racecheck.log")"
fi
failed=$((k_bad + ${s_bad:-1}))
echo "$((k_ok + ${s_ok:-0})) passed, $failed failed"
[ "$failed" = 0 ]
