#!/bin/bash
# test/bench/bench_emit.sh: the cost of returning joined rows (the EMIT
# phase) and of draining the inputs, as a table.  Not a timed test.
#
# Starts a throwaway cluster (test/lib/cluster.sh; the extension must be
# installed), loads an equi-join fact x dim, and runs queries whose GpuJoin
# returns every joined row to a native aggregate above it
# (gpujoin.enable_aggregate = off, so the join itself does not aggregate).
# Each query runs RUNS times in one session after a warm-up run; the table
# shows the median wall time (psql's \timing), the least CPU time of the
# backend (from /proc/PID/schedstat: steadier than wall time on a shared
# machine), the Drain Time that EXPLAIN (ANALYZE, TIMING OFF) reports, and the
# native plan's median wall time (gpujoin.enabled = off, parallel workers as
# configured) for reference.
#
#   FACT_N rows (default 1M) x DIM_N rows (default 100k), every fact row
#   matches one dim row
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5}
FACT_N=${FACT_N:-1000000}
DIM_N=${DIM_N:-100000}
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="${GPUJOIN_CLUSTER_CONF:-}
max_parallel_workers_per_gather = ${PARALLEL:-2}
jit = off" cluster_start

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

psql <<SQL
CREATE EXTENSION IF NOT EXISTS gpujoin;
SELECT setseed(0.42) \\g /dev/null
CREATE TABLE f AS SELECT g AS id, (random() * ($DIM_N - 1))::int AS k, (g % 100)::float8 AS v,
  CASE WHEN g % 10 = 0 THEN NULL ELSE g % 7 END AS n
  FROM generate_series(1, $FACT_N) g;
CREATE TABLE d AS SELECT g AS k, (g % 10)::float8 AS w, 'name ' || g AS name
  FROM generate_series(0, $DIM_N - 1) g;
VACUUM ANALYZE;
SQL

# time_query SETTINGS QUERY -> "median wall ms, least backend CPU ms" of RUNS
# runs in one session, after a warm-up run
time_query() {
	local settings=$1 query=$2 pid line i c0 c1 t0 t1 walls=() cpus=()
	coproc PQ { psql -At 2>&1; }
	echo "SELECT pg_backend_pid(); $settings; $query; SELECT 'done';" >&"${PQ[1]}"
	read -r pid <&"${PQ[0]}"
	while read -r line <&"${PQ[0]}" && [ "$line" != done ]; do :; done
	for i in $(seq "$RUNS"); do
		c0=$(cut -d' ' -f1 "/proc/$pid/schedstat")
		t0=$(date +%s%N)
		echo "$query; SELECT 'done';" >&"${PQ[1]}"
		while read -r line <&"${PQ[0]}" && [ "$line" != done ]; do :; done
		t1=$(date +%s%N)
		c1=$(cut -d' ' -f1 "/proc/$pid/schedstat")
		walls+=("$(((t1 - t0) / 1000))")
		cpus+=("$(((c1 - c0) / 1000))")
	done
	exec {PQ[1]}>&-
	wait "$PQ_PID" 2>/dev/null || true
	printf '%s, %s' \
		"$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)] / 1000}')" \
		"$(printf '%s\n' "${cpus[@]}" | sort -n | awk 'NR == 1 {printf "%.1f", $1 / 1000}')"
}
# drain_ms SETTINGS QUERY -> GpuJoin's Drain Time
drain_ms() {
	psql -At -c "$1" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $2" |
		sed -n 's/.*Drain Time: \([0-9.]*\).*/\1/p' | head -1
}

GPU="SET gpujoin.enabled = on; SET gpujoin.enable_aggregate = off; SET max_parallel_workers_per_gather = 0; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off"
NATIVE="SET gpujoin.enabled = off"
# the wall time of a parallel plan includes its workers; its cpu time does not

echo "fact $FACT_N rows x dim $DIM_N rows; $FACT_N joined rows per query; RUNS = $RUNS"
echo
echo "| query | GpuJoin wall ms, cpu ms | drain ms | native wall ms, cpu ms |"
echo "| --- | --- | --- | --- |"
row() {
	local name=$1 q=$2
	echo "| $name | $(time_query "$GPU" "$q") | $(drain_ms "$GPU" "$q") | $(time_query "$NATIVE" "$q") |"
}
row "sum(f.v * d.w)" "SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k"
row "count(*)" "SELECT count(*) FROM f JOIN d ON f.k = d.k"
row "sum(length(d.name)) (by-ref)" "SELECT sum(length(d.name)) FROM f JOIN d ON f.k = d.k"
row "host qual d.name <> f.n::text" "SELECT count(*) FROM f JOIN d ON f.k = d.k AND d.name::text <> f.n::text"
row "left join, count(d.w)" "SELECT count(d.w) FROM f LEFT JOIN d ON f.k = d.k AND d.w > 4"
row "semi join" "SELECT count(*) FROM d WHERE EXISTS (SELECT 1 FROM f WHERE f.k = d.k)"
