#!/bin/bash
# test/bench/bench_emit.sh: the cost of returning joined rows (the EMIT
# phase) and of draining the inputs, as a table.  Not a timed test.
#
# Starts a throwaway cluster (test/lib/cluster.sh; the extension must be
# installed), loads an equi-join fact x dim, and runs queries whose GpuJoin
# returns every joined row to a native aggregate above it
# (gpujoin.enable_aggregate = off, so the join itself does not aggregate).
# Each query runs RUNS times timed by psql's \timing; the table shows the
# median, and the Drain Time that EXPLAIN (ANALYZE, TIMING OFF) reports for
# one more run, plus the native plan (gpujoin.enabled = off) for reference.
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
SELECT setseed(0.42);
CREATE TABLE f AS SELECT g AS id, (random() * ($DIM_N - 1))::int AS k, (g % 100)::float8 AS v,
  CASE WHEN g % 10 = 0 THEN NULL ELSE g % 7 END AS n
  FROM generate_series(1, $FACT_N) g;
CREATE TABLE d AS SELECT g AS k, (g % 10)::float8 AS w, 'name ' || g AS name
  FROM generate_series(0, $DIM_N - 1) g;
VACUUM ANALYZE;
SQL

# time_query SETTINGS QUERY -> median milliseconds of RUNS runs
time_query() {
	local settings=$1 query=$2 i t times=()
	for i in $(seq "$RUNS"); do
		t=$(psql -c "$settings" -c '\timing on' -c "$query" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
		times+=("$t")
	done
	printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
# drain_ms SETTINGS QUERY -> GpuJoin's Drain Time
drain_ms() {
	psql -At -c "$1" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $2" |
		sed -n 's/.*Drain Time: \([0-9.]*\).*/\1/p' | head -1
}

GPU="SET gpujoin.enabled = on; SET gpujoin.enable_aggregate = off; SET max_parallel_workers_per_gather = 0; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off"
NATIVE="SET gpujoin.enabled = off"

echo "fact $FACT_N rows x dim $DIM_N rows; $FACT_N joined rows per query; median of $RUNS runs"
echo
echo "| query | GpuJoin ms | drain ms | native ms |"
echo "| --- | --- | --- | --- |"
row() {
	local name=$1 q=$2
	echo "| $name | $(time_query "$GPU" "$q") | $(drain_ms "$GPU" "$q") | $(time_query "$NATIVE" "$q") |"
}
row "sum(f.v * d.w)" "SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k"
row "count(*)" "SELECT count(*) FROM f JOIN d ON f.k = d.k"
row "sum(length(d.name)) (by-ref)" "SELECT sum(length(d.name)) FROM f JOIN d ON f.k = d.k"
row "host qual d.name <> 'x'" "SELECT count(*) FROM f JOIN d ON f.k = d.k AND d.name::text <> f.n::text"
row "left join, count(d.w)" "SELECT count(d.w) FROM f LEFT JOIN d ON f.k = d.k AND d.w > 4"
row "semi join" "SELECT count(*) FROM d WHERE EXISTS (SELECT 1 FROM f WHERE f.k = d.k)"
