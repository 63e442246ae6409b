#!/bin/bash
# test/bench/bench_devices.sh: issue 22's benchmark, as a table: joins in
# the GPU service on one device against the same joins on several
# (gpujoin.devices, a postmaster setting: the cluster restarts between).
#
#   nestloop count   a x b (NL_N x NL_N, default 1M), a.x < b.x AND a.y >
#                    b.y: count(*), the aggregate node on a nested loop
#                    (dominance counting where the backend can)
#   nestloop pairs   the same with a third qual, a.x + b.y > 0, which no
#                    dominance count covers: the two compares tested first,
#                    the third evaluated for the pairs they pass (skip
#                    with NL_PAIRS=0)
#   ..., N workers   the nested loops again as a parallel GpuJoin of
#                    WORKERS workers (default 0: none)
#   hash count       h1 x h2 (HASH_N x HASH_N, default 20M), h1.k = h2.k:
#                    count(*); a hash join runs on one device, so this row
#                    shows what a second device costs it (nothing, ideally)
#
# Starts a throwaway cluster (test/lib/cluster.sh; the extension must be
# installed) with gpujoin.service = on and gpujoin.service_backend =
# SERVICE_BACKEND (default cuda).  ONE (default "0") and ALL (default "":
# every visible device) are the gpujoin.devices values compared.  With
# SERVICE_BACKEND=cpu the service simulates SIMULATED devices (default 2,
# gpujoin.service_simulated_devices) on the host processor: a check that
# the script works, not a measurement (they share the cores).  Each query
# is timed with psql's \timing, median of RUNS (default 3) warm runs
# (QUERY_TIMEOUT, a statement_timeout, bounds each; default none); the
# answers on one device and on all must be equal, else the row says so.
# EXPLAIN_DIR, where set, receives each query's EXPLAIN ANALYZE.
#
#   test/bench/bench_devices.sh                       # the two-GPU machine
#   SERVICE_BACKEND=cpu NL_N=3000 HASH_N=20000 test/bench/bench_devices.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
NL_N=${NL_N:-1000000}
HASH_N=${HASH_N:-20000000}
NL_PAIRS=${NL_PAIRS:-1}
ONE=${ONE:-0}
ALL=${ALL:-}
SERVICE_BACKEND=${SERVICE_BACKEND:-cuda}
SIMULATED=${SIMULATED:-2}
QUERY_TIMEOUT=${QUERY_TIMEOUT:-0}
EXPLAIN_DIR=${EXPLAIN_DIR:-}
WORKERS=${WORKERS:-0}
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
. test/bench/time_query.sh

wait_for_service() {
	local i
	for i in $(seq 150); do
		psql -At -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'" 2>/dev/null | grep -q '^ready' && return 0
		sleep 0.2
	done
	echo "the service did not start: $(psql -At -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'")"
	return 1
}

# restart the cluster with gpujoin.devices = $1
use_devices() {
	psql -c "ALTER SYSTEM SET gpujoin.devices = '$1'"
	as_owner "'$PG_BINDIR/pg_ctl' -D '$CLUSTER_DIR/data' -l '$CLUSTER_DIR/server.log' -w -t 300 restart" >/dev/null
	wait_for_service
}

GPUJOIN_CLUSTER_CONF="gpujoin.service = on
gpujoin.service_backend = $SERVICE_BACKEND
gpujoin.service_simulated_devices = $SIMULATED
gpujoin.service_staging_memory = 4GB
shared_buffers = 4GB
work_mem = 256MB
max_parallel_workers_per_gather = 0
jit = off
${GPUJOIN_CLUSTER_CONF:-}" cluster_start
psql <<SQL
CREATE EXTENSION IF NOT EXISTS gpujoin;
SELECT setseed(0.22);
CREATE TABLE a AS SELECT g AS id, (random() * 1e9)::int AS x, (random() * 1e9)::int AS y
    FROM generate_series(1, $NL_N) g;
CREATE TABLE b AS SELECT g AS id, (random() * 1e9)::int AS x, (random() * 1e9)::int AS y
    FROM generate_series(1, $NL_N) g;
CREATE TABLE h1 AS SELECT g AS id, (random() * $HASH_N)::int AS k FROM generate_series(1, $HASH_N) g;
CREATE TABLE h2 AS SELECT g AS id, (random() * $HASH_N)::int AS k FROM generate_series(1, $HASH_N) g;
VACUUM ANALYZE;
SQL
wait_for_service
echo "machine: $(nproc) cores; service on $SERVICE_BACKEND"

NL="SELECT count(*) FROM a JOIN b ON a.x < b.x AND a.y > b.y"
NL_P="SELECT count(*) FROM a JOIN b ON a.x < b.x AND a.y > b.y AND a.x + b.y > 0"
HASH="SELECT count(*) FROM h1 JOIN h2 ON h1.k = h2.k"
FORCE="SET gpujoin.device = service; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off; SET statement_timeout = '$QUERY_TIMEOUT'"
FORCE_NL="$FORCE; SET gpujoin.algorithm = nestloop"
FORCE_HASH="$FORCE; SET gpujoin.algorithm = hash"

# name|settings|query of each row
QUERIES=("nestloop count|$FORCE_NL|$NL")
[ "$NL_PAIRS" = 0 ] || QUERIES+=("nestloop pairs|$FORCE_NL|$NL_P")
# a parallel GpuJoin: the workers drain the outer side, the service spreads their steps
PAR="SET max_parallel_workers_per_gather = $WORKERS; SET parallel_setup_cost = 0; SET min_parallel_table_scan_size = 0"
[ "$WORKERS" = 0 ] || QUERIES+=("nestloop count, $WORKERS workers|$FORCE_NL; $PAR|$NL")
[ "$WORKERS" = 0 ] || [ "$NL_PAIRS" = 0 ] || QUERIES+=("nestloop pairs, $WORKERS workers|$FORCE_NL; $PAR|$NL_P")
QUERIES+=("hash count|$FORCE_HASH|$HASH")

# what EXPLAIN ANALYZE says of the join: backend, algorithm, devices (the
# whole plan into $EXPLAIN_DIR/<name>_devices_<setting>.txt where set)
plan_of() {
	local plan
	plan=$(psql -At -c "$1" -c "EXPLAIN (ANALYZE, COSTS OFF) $2")
	[ -z "$EXPLAIN_DIR" ] ||
		printf '%s\n' "$plan" >"$EXPLAIN_DIR/$(echo "$3 devices $4" | tr -cs 'a-z0-9' '_').txt"
	printf '%s\n' "$plan" |
		grep -oE 'Backend: [a-z ()]+|Algorithm: [a-z ()]+|Devices: [0-9]+ \(steps [0-9, ]+\)' |
		sed 's/^[A-Za-z]*: //' | paste -sd';' - | sed 's/;/; /g'
}

declare -A ms answer plan
for devices in "$ONE" "$ALL"; do
	use_devices "$devices"
	echo "gpujoin.devices = '$devices': $(psql -At -c "SELECT count(*) FROM gpujoin_devices() WHERE backend = 'service device'") devices: $(psql -At -c "SELECT string_agg(name, ', ') FROM gpujoin_devices() WHERE backend = 'service device'")"
	for q in "${QUERIES[@]}"; do
		IFS='|' read -r name settings query <<<"$q"
		answer[$name,$devices]=$(psql -At -c "$settings" -c "$query" 2>&1 | tail -1 || true)
		plan[$name,$devices]=$(plan_of "$settings" "$query" "$name" "$devices" || true)
		ms[$name,$devices]=$(time_query "$settings" "$query" || true)
		# progress, so that a run cut off by a time limit still says what it measured
		echo "  $name, gpujoin.devices = '$devices': ${ms[$name,$devices]} ms, ${plan[$name,$devices]}, answer ${answer[$name,$devices]}"
	done
done

echo
echo "| query | size | gpujoin.devices | ms | backend; algorithm; devices (steps each) | x one device |"
echo "| --- | --- | --- | --: | --- | --: |"
for q in "${QUERIES[@]}"; do
	IFS='|' read -r name settings query <<<"$q"
	case $name in
		hash*) size="$HASH_N x $HASH_N" ;;
		*) size="$NL_N x $NL_N" ;;
	esac
	if [[ "${answer[$name,$ONE]}${answer[$name,$ALL]}" == *ERROR* ]]; then
		echo "| $name | $size | | no figure: ${answer[$name,$ONE]} / ${answer[$name,$ALL]} | | |"
		continue
	fi
	if [ "${answer[$name,$ONE]}" != "${answer[$name,$ALL]}" ]; then
		echo "| $name | $size | | different results: ${answer[$name,$ONE]} and ${answer[$name,$ALL]} | | |"
		continue
	fi
	for devices in "$ONE" "$ALL"; do
		echo "| $name | $size | '$devices' | ${ms[$name,$devices]} | ${plan[$name,$devices]} | $(awk -v one="${ms[$name,$ONE]}" -v t="${ms[$name,$devices]}" 'BEGIN {printf "%.2fx", one / t}') |"
	done
done
