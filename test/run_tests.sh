#!/bin/bash
# test/run_tests.sh: the whole test suite of gpujoin.
#
# Builds and installs the extension (into the PostgreSQL that PG_CONFIG names),
# starts a throwaway cluster with gpujoin preloaded, runs the pg_regress suite
# (sql/, expected/), the isolation specs (specs/, expected/: with GpuJoin
# forced, then again with PostgreSQL's own plans against the same expected
# output) and the pgTAP suite (test/pgtap/) with pg_prove, and ends
# with one line: "N passed, N failed".  Exit status 0 only if nothing failed.
#
# Then the symbol check (test/check_symbols.sh), the layer check
# (test/check_layers.sh), kernel_test's cpu mode
# (test/kernels: the cpu backend against a brute-force reference, no
# server), the scale-out test (test/scaleout/run_scaleout.sh: a coordinator
# and three shard clusters of its own, postgres_fdw partitions, about 10 s),
# and the reliability tests on the same
# cluster: the randomized differential test (test/fuzz, one test per query),
# the same with every join's inputs spilled (FUZZ_MAX_HOST_MEMORY=64kB,
# FUZZ_SPILL_CASES cases, default 600), the load test (test/load) and
# SQLsmith (test/sqlsmith), and on a cluster
# of its own the GPU service killed mid-join (test/load/service_crash.sh,
# on SERVICE_BACKEND, default cpu), the service on three simulated
# devices (test/load/service_devices.sh), the processes of a parallel
# join with a shared inner side terminated mid-join
# (test/load/service_parallel_kill.sh), and no temporary file left by
# spilled joins ended by errors, cancels, cursors, terminated and killed
# backends (test/load/spill_cleanup.sh); their FUZZ_*,
# LOAD_* and SMITH_* variables pass through (README, "Reliability testing").
#
# Last, with or without SKIP_RELIABILITY, the Debian package
# (test/package/test_deb.sh): built with dpkg-buildpackage in a copy of the
# tree, installed (as root into Debian's PostgreSQL with dpkg -i, purged at
# the end and the files `make install` put there restored; into a private
# copy of Debian's layout with dpkg -x), and the demo's joins run on it on a
# cluster of its own.
#
# Environment: PG_CONFIG (default pg_config); GPUJOIN_CLUSTER_CONF for extra
# server settings, e.g. GPUJOIN_CLUSTER_CONF="gpujoin.device = cuda" to run
# the same suite on the cuda backend; SKIP_BUILD=1 to test what is installed;
# SKIP_DEPS=1 not to look for missing Debian packages; SKIP_RELIABILITY=1 to
# leave out the fuzz, load and SQLsmith tests (kernel_test still runs);
# SUITES="load spill_cleanup ..." to run only the parts named (pg_regress,
# isolation_native, pg_prove, symbols, layers, kernel_test, fuzz, fuzz_spill,
# scaleout, load, sqlsmith, service_crash, service_budget, spill_cleanup,
# service_devices, service_parallel_kill, package): a GPU call that ran out of time goes on there;
# REGRESS_TESTS="setup spill" runs only those pg_regress tests.
set -u
# wanted NAME: whether SUITES is empty or names NAME
wanted() {
	[ -z "${SUITES:-}" ] || [[ " $SUITES " == *" $1 "* ]]
}
cd "$(dirname "$0")/.."
[ -n "${SKIP_DEPS:-}" ] || scripts/install_deps.sh || {
	echo "could not install the dependencies"
	echo "0 passed, 1 failed"
	exit 1
}
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh

if [ -z "${SKIP_BUILD:-}" ]; then
	make -s PG_CONFIG="$PG_CONFIG" >build.log 2>&1 && make -s PG_CONFIG="$PG_CONFIG" install >>build.log 2>&1 || {
		cat build.log
		echo "0 passed, 1 failed"
		exit 1
	}
fi

# The GPU service runs in the test cluster on the cpu backend, so that its
# process, restart and gpujoin_devices() row are tested without a GPU
# (test/pgtap/service.sql); settings given in GPUJOIN_CLUSTER_CONF come later
# and win.
GPUJOIN_CLUSTER_CONF="gpujoin.service = on
gpujoin.service_backend = cpu
${GPUJOIN_CLUSTER_CONF:-}"
trap cluster_stop EXIT
cluster_start || {
	echo "could not start a test cluster"
	echo "0 passed, 1 failed"
	exit 1
}

# The plans the suites show must be the same whichever backend runs them:
# the cuda backend plans with the cpu backend's cost constants here (the
# fuzz, load and SQLsmith tests set their own).
cluster_pin_cuda_costs || echo "could not pin the cuda cost constants"

passed=0
failed=0

# pg_regress: one test per file in sql/ named in the Makefile's REGRESS
n_ok=0 n_bad=0 t_ok=0 t_bad=0
if wanted pg_regress; then
echo "== pg_regress =="
make -s PG_CONFIG="$PG_CONFIG" installcheck ${REGRESS_TESTS:+REGRESS="$REGRESS_TESTS"} >regress.log 2>&1
regress_status=$?
cat regress.log
n_ok=$(grep -cE '^(ok|test) .* \.\.\. ok|^ok [0-9]+ ' regress.log)
n_bad=$(grep -cE '\.\.\. FAILED|^not ok [0-9]+ ' regress.log)
if [ "$regress_status" != 0 ] && [ "$n_bad" = 0 ]; then
	n_bad=1
fi
[ -f regression.diffs ] && [ "$n_bad" != 0 ] && head -200 regression.diffs
[ -f output_iso/regression.diffs ] && [ "$n_bad" != 0 ] && head -200 output_iso/regression.diffs
passed=$((passed + n_ok))
failed=$((failed + n_bad))
fi

# the isolation specs (ISOLATION, after REGRESS above) once more with
# PostgreSQL's own plans: the same expected output, so both plans agree
if wanted isolation_native; then
echo "== isolation, native plans =="
PGOPTIONS="-c gpujoin.enabled=off" make -s PG_CONFIG="$PG_CONFIG" installcheck REGRESS= >isolation_native.log 2>&1
iso_status=$?
cat isolation_native.log
i_ok=$(grep -cE '^(ok|test) .* \.\.\. ok|^ok [0-9]+ ' isolation_native.log)
i_bad=$(grep -cE '\.\.\. FAILED|^not ok [0-9]+ ' isolation_native.log)
if [ "$iso_status" != 0 ] && [ "$i_bad" = 0 ]; then
	i_bad=1
fi
[ -f output_iso/regression.diffs ] && [ "$i_bad" != 0 ] && head -100 output_iso/regression.diffs
n_ok=$((n_ok + i_ok))
n_bad=$((n_bad + i_bad))
passed=$((passed + i_ok))
failed=$((failed + i_bad))
fi

# pgTAP: each file in test/pgtap is a transaction that rolls back
t_skip=0
if wanted pg_prove; then
echo "== pg_prove =="
"$PG_BINDIR/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS gpujoin_tap" -c "CREATE DATABASE gpujoin_tap" &&
	"$PG_BINDIR/psql" -X -q -d gpujoin_tap -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION gpujoin" || {
	echo "could not prepare the pgTAP database"
	failed=$((failed + 1))
}
pg_prove --verbose -d gpujoin_tap test/pgtap/*.sql >prove.log 2>&1
prove_status=$?
cat prove.log
t_ok=$(grep -cE '^ok [0-9]+' prove.log)
t_bad=$(grep -cE '^not ok [0-9]+' prove.log)
if [ "$prove_status" != 0 ] && [ "$t_bad" = 0 ]; then
	t_bad=1
fi
passed=$((passed + t_ok))
failed=$((failed + t_bad))

# skipped tests count as passed: say how many, so that a run where a file
# skipped its tests (no GPU service ready, say) is not read as a full one
t_skip=$(grep -cE '^ok [0-9]+ # SKIP' prove.log)
fi
summary="pg_regress: $n_ok passed, $n_bad failed; pgTAP: $t_ok passed ($t_skip of them skipped), $t_bad failed"

# A suite of its own: runs "$@" with output to NAME.log, which ends with
# "NAME: N passed, N failed"; no such line, or a failing exit with none
# counted, is one failure.
run_suite() {
	local name=$1 status counts s_ok s_bad
	shift
	wanted "$name" || return 0
	echo "== $name =="
	"$@" >"$name.log" 2>&1
	status=$?
	cat "$name.log"
	counts=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed$" "$name.log" | tail -1)
	s_ok=$(echo "$counts" | sed -nE 's/.*: ([0-9]+) passed.*/\1/p')
	s_bad=$(echo "$counts" | sed -nE 's/.* ([0-9]+) failed$/\1/p')
	s_ok=${s_ok:-0}
	s_bad=${s_bad:-1}
	if [ "$status" != 0 ] && [ "$s_bad" = 0 ]; then
		s_bad=1
	fi
	passed=$((passed + s_ok))
	failed=$((failed + s_bad))
	summary="$summary; $name: $s_ok passed, $s_bad failed"
}

# symbols: the library exports only what PostgreSQL looks up, and every
# global of ours carries the gj_/gpujoin_ prefix (test/check_symbols.sh).
run_suite symbols test/check_symbols.sh

# layers: calls only go down between the rooms of src/ and no cycle between
# the files of a room (test/check_layers.sh, on the built objects).
run_suite layers test/check_layers.sh

# kernel_test: the cpu backend against a brute-force reference, without the
# server or a GPU (test/kernels; with nvcc the build links the cuda backend,
# which finds no device here or is not asked).  Fast, so it runs even with
# SKIP_RELIABILITY.
run_suite kernel_test bash -c 'make -s -C test/kernels && test/kernels/kernel_test cpu'

# scaleout: a coordinator and three shards of its own (test/scaleout), joins
# pushed down to the shards' GpuJoins and GpuJoin on the coordinator over the
# shards' rows, a shard stopped mid-query.  Fast (small tables), so it runs
# even with SKIP_RELIABILITY.
run_suite scaleout test/scaleout/run_scaleout.sh

# fuzz, load, sqlsmith, service_crash, service_budget, spill_cleanup,
# service_devices, service_parallel_kill: each script ends with "<name>: N
# passed, N failed"
if [ -z "${SKIP_RELIABILITY:-}" ]; then
	export CLUSTER_DIR FUZZ_USE_SERVER=1 LOAD_USE_SERVER=1 SMITH_USE_SERVER=1
	run_suite fuzz test/fuzz/run_fuzz.sh
	# the fuzzer again with every input past gpujoin.max_host_memory (the
	# joins spill to temporary files; issue 21) beside its tiny device
	# memory budgets (1kB-64kB: many tiles, device partitions)
	run_suite fuzz_spill bash -c 'set -o pipefail; FUZZ_MAX_HOST_MEMORY=64kB FUZZ_SEED=${FUZZ_SPILL_SEED:-777} \
		FUZZ_CASES=${FUZZ_SPILL_CASES:-600} test/fuzz/run_fuzz.sh | sed "s/^fuzz: /fuzz_spill: /"'
	run_suite load test/load/run_load.sh
	run_suite sqlsmith test/sqlsmith/run_sqlsmith.sh
	# on clusters of their own: the service killed with SIGKILL mid-join,
	# and the service's device memory budget (a postmaster setting)
	run_suite service_crash test/load/service_crash.sh
	run_suite service_budget test/load/service_budget.sh
	# on a cluster of its own (it kills a backend with SIGKILL): spilled
	# joins ended every way leave no temporary file
	run_suite spill_cleanup test/load/spill_cleanup.sh
	# on a cluster of its own: the service on 3 simulated devices
	run_suite service_devices test/load/service_devices.sh
	# on a cluster of its own: processes of a parallel join with a shared
	# inner side terminated mid-join
	run_suite service_parallel_kill test/load/service_parallel_kill.sh
fi

# package: the Debian package built, installed and run (test/package/test_deb.sh,
# on a cluster of its own).  Last, and outside SKIP_RELIABILITY so that CI
# runs it: while it runs, the package's files replace those `make install`
# put into the server's directories; it puts those back at its end.
run_suite package test/package/test_deb.sh

echo
echo "$summary"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
