#!/bin/bash
# test/sqlsmith/run_sqlsmith.sh: SQLsmith against a database with gpujoin
# loaded and forced on (setup.sql), for SMITH_SECONDS (default 60) or
# SMITH_QUERIES queries (default 100000), whichever ends first, with seed
# SMITH_SEED (default 1).  Checks: SQLsmith ran queries, the server log has
# no backend terminated by a signal, no assertion failure (TRAP) and no
# PANIC, and the server still answers.  Reports the queries run, the
# GpuJoins among them (auto_explain) and the crashes.
#
# Runs on a throwaway cluster, or with SMITH_USE_SERVER=1 on the server that
# PGHOST/PGPORT name (the server log is checked when CLUSTER_DIR names the
# directory of test/lib/cluster.sh's cluster, as test/run_tests.sh does).
# The last line is
# "sqlsmith: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
SECONDS_LIMIT=${SMITH_SECONDS:-60}
MAX_QUERIES=${SMITH_QUERIES:-100000}
SEED=${SMITH_SEED:-1}
DB=gpujoin_smith
PSQL="$PG_BINDIR/psql -X -q -A -t"
OUT=$(mktemp -d /tmp/gpujoin_smith.XXXXXX)
. test/lib/check.sh

finish() {
	[ -z "${SMITH_USE_SERVER:-}" ] && cluster_stop
	[ -n "${SMITH_KEEP:-}" ] || rm -rf "$OUT"
}

if ! command -v sqlsmith >/dev/null; then
	echo "sqlsmith is not installed (Debian package sqlsmith: scripts/install_deps.sh)"
	echo "sqlsmith: 0 passed, 1 failed"
	exit 1
fi
trap finish EXIT
if [ -z "${SMITH_USE_SERVER:-}" ]; then
	cluster_start || {
		echo "could not start a test cluster"
		echo "sqlsmith: 0 passed, 1 failed"
		exit 1
	}
fi
LOG_LINES_BEFORE=0
[ -n "${CLUSTER_DIR:-}" ] && LOG_LINES_BEFORE=$(wc -l <"$CLUSTER_DIR/server.log")

$PSQL -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" &&
	$PSQL -d $DB -v ON_ERROR_STOP=1 -f test/sqlsmith/setup.sql >/dev/null || {
	echo "could not set up the sqlsmith database"
	echo "sqlsmith: 0 passed, 1 failed"
	exit 1
}

target="host=${PGHOST:-/tmp} port=${PGPORT:-5432} user=${PGUSER:-postgres} dbname=$DB"
timeout --signal=INT --kill-after=10 "$SECONDS_LIMIT" \
	sqlsmith --target="$target" --seed="$SEED" --max-queries="$MAX_QUERIES" --exclude-catalog --verbose \
	>"$OUT/sqlsmith.out" 2>"$OUT/sqlsmith.err"
smith_status=$?
# --verbose prints a line of counters now and then ("queries: N, ..."), the last one on exit
queries=$(grep -oE "queries: [0-9]+" "$OUT/sqlsmith.err" | tail -1 | grep -oE "[0-9]+")
echo "# sqlsmith (seed $SEED, exit status $smith_status): ${queries:-0} queries"
grep -E "^(queries|AST|error)" "$OUT/sqlsmith.err" | tail -3 | sed 's/^/#   /'
check "sqlsmith ran queries against the forced GpuJoin database" $([ "${queries:-0}" -gt 0 ] && echo 0 || echo 1) \
	"$(tail -3 "$OUT/sqlsmith.err")"

$PSQL -d $DB -c "SELECT 1" >/dev/null 2>&1
check "the server answers after SQLsmith" $?

if [ -n "${CLUSTER_DIR:-}" ]; then
	tail -n +$((LOG_LINES_BEFORE + 1)) "$CLUSTER_DIR/server.log" >"$OUT/server.log"
	gpujoins=$(grep -c "Custom Scan (GpuJoin)" "$OUT/server.log")
	echo "# GpuJoin nodes in the plans SQLsmith's queries ran: $gpujoins"
	grep -E "terminated by signal|TRAP:|PANIC" "$OUT/server.log" >"$OUT/crashes"
	echo "# crashes: $(wc -l <"$OUT/crashes")"
	if [ -s "$OUT/crashes" ]; then
		# the statements the crashed backends ran, for a reproducer
		grep -B2 -A2 -E "terminated by signal|TRAP:" "$OUT/server.log" | head -40 | sed 's/^/#   /'
	fi
	check "server log: no backend terminated by a signal, no assertion failure, no PANIC" \
		$([ -s "$OUT/crashes" ] && echo 1 || echo 0) "$(head -3 "$OUT/crashes")"
	check "SQLsmith's queries ran GpuJoins" $([ "$gpujoins" -gt 0 ] && echo 0 || echo 1)
fi

echo "sqlsmith: $passed passed, $failed failed"
[ "$failed" = 0 ]
