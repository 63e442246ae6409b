#!/bin/bash
# test/bench/bench_joins.sh: GpuJoin against PostgreSQL's own plans, as a table.
#
# Starts a throwaway cluster (test/lib/cluster.sh; the extension must be
# installed), loads the data, and times each query with psql's \timing (no
# per-node instrumentation, which would inflate the native nested loop),
# reporting the median of RUNS runs.  GPUJOIN_CLUSTER_CONF picks the backend,
# e.g. "gpujoin.device = cuda".  SCALE multiplies the sizes (default 1).
# ONLY, an extended regular expression, keeps the rows whose name matches
# (e.g. ONLY=equi: the equi-join alone, without the native nested loops).
# BAND_N, THETA_N, FACT_N and DIM_N set one size each; NATIVE_RUNS the runs
# of the native plans (default RUNS).
#
#   band join    r x s, s.t BETWEEN r.t - 50 AND r.t + 50, ~1M matches, count(*)
#   theta join   r.a > s.a, count(*)
#   equi-join    fact x dim, sum(f.v * d.w)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
SCALE=${SCALE:-1}
ONLY=${ONLY:-}
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="${GPUJOIN_CLUSTER_CONF:-}
max_parallel_workers_per_gather = ${PARALLEL:-2}
jit = off" cluster_start

BAND_N=${BAND_N:-$((200000 * SCALE))}
BAND_SMALL=${BAND_SMALL:-20000}
THETA_N=${THETA_N:-30000}
FACT_N=${FACT_N:-$((1000000 * SCALE))}
DIM_N=${DIM_N:-$((100000 * SCALE))}
# runs of each native plan (the theta join's nested loop takes a minute at 30k)
NATIVE_RUNS=${NATIVE_RUNS:-$RUNS}

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

psql <<SQL
CREATE EXTENSION IF NOT EXISTS gpujoin;
SELECT setseed(0.42);
CREATE TABLE r AS SELECT g AS id, (random() * 4 * $BAND_N * 5)::int AS t FROM generate_series(1, $BAND_N) g;
CREATE TABLE s AS SELECT g AS id, (random() * 4 * $BAND_N * 5)::int AS t FROM generate_series(1, $BAND_N) g;
CREATE TABLE s_idx AS TABLE s;
CREATE INDEX ON s_idx (t);
CREATE TABLE r_small AS SELECT * FROM r WHERE id <= $BAND_SMALL;
CREATE TABLE s_small AS SELECT * FROM s WHERE id <= $BAND_SMALL;
CREATE TABLE ta AS SELECT g AS id, (random() * 1000000)::int AS a FROM generate_series(1, $THETA_N) g;
CREATE TABLE tb AS SELECT g AS id, (random() * 1000000)::int AS a FROM generate_series(1, $THETA_N) g;
CREATE TABLE fact AS SELECT g AS id, (random() * ($DIM_N - 1))::int AS k, (g % 100)::float8 AS v
  FROM generate_series(1, $FACT_N) g;
CREATE TABLE dim AS SELECT g AS k, (g % 10)::float8 AS w FROM generate_series(0, $DIM_N - 1) g;
VACUUM ANALYZE;
SQL

. test/bench/time_query.sh
plan_of() {
	psql -At -c "$1" -c "EXPLAIN (COSTS OFF) $2" | grep -oE 'GpuJoin|Algorithm: [a-z]+|Hash Join|Merge Join|Nested Loop|Index Only Scan|Index Scan' | paste -sd' ' -
}

GPU="SET gpujoin.enabled = on; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off"
NATIVE="SET gpujoin.enabled = off"
BAND="SELECT count(*) FROM r JOIN s ON s.t BETWEEN r.t - 50 AND r.t + 50"
BAND_IDX="SELECT count(*) FROM r JOIN s_idx s ON s.t BETWEEN r.t - 50 AND r.t + 50"
BAND_S="SELECT count(*) FROM r_small r JOIN s_small s ON s.t BETWEEN r.t - 50 AND r.t + 50"
THETA="SELECT count(*) FROM ta JOIN tb ON ta.a > tb.a"
EQUI="SELECT sum(f.v * d.w) FROM fact f JOIN dim d ON f.k = d.k"

echo "backend: $(psql -At -c "SELECT backend || ' ' || coalesce(name, '') FROM gpujoin_devices() WHERE selected")"
echo "matches: band $(psql -At -c "$BAND_IDX") rows; band small $(psql -At -c "$BAND_S"); theta $(psql -At -c "$THETA")"
echo
echo "| query | size | GpuJoin plan | GpuJoin ms | native plan | native ms | speedup |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
row() {
	local name=$1 size=$2 gq=$3 nq=$4 g n
	[ -z "$ONLY" ] || echo "$name" | grep -Eq -- "$ONLY" || return 0
	g=$(time_query "$GPU" "$gq")
	n=$(RUNS=$NATIVE_RUNS time_query "$NATIVE" "$nq")
	echo "| $name | $size | $(plan_of "$GPU" "$gq") | $g | $(plan_of "$NATIVE" "$nq") | $n | $(awk -v g="$g" -v n="$n" 'BEGIN {printf "%.1fx", n / g}') |"
}
row "band join vs native with btree index" "${BAND_N} x ${BAND_N}" "$BAND" "$BAND_IDX"
row "band join vs native without index" "${BAND_SMALL} x ${BAND_SMALL}" "$BAND_S" "$BAND_S"
row "band join (GpuJoin at full size) vs native without index" "${BAND_N} vs ${BAND_SMALL}" "$BAND" "$BAND_S"
row "theta join r.a > s.a, count(*)" "${THETA_N} x ${THETA_N}" "$THETA" "$THETA"
row "equi-join sum(f.v * d.w)" "${FACT_N} x ${DIM_N}" "$EQUI" "$EQUI"
NOAGG="$GPU; SET gpujoin.enable_aggregate = off"
GPU="$NOAGG" row "band join, rows to Agg (no aggregate pushdown)" "${BAND_N} x ${BAND_N}" "$BAND" "$BAND_IDX"

# where the GpuJoin time goes: the node's own clock (drain = reading both
# inputs into host buffers; backend = sorting/searching/kernels incl.
# transfers; the rest of the execution time is emitting rows and above)
echo
echo "Time breakdown of the GpuJoin plans (EXPLAIN ANALYZE, TIMING OFF):"
for name in "band join" "theta join" "equi-join"; do
	[ -z "$ONLY" ] || echo "$name" | grep -Eq -- "$ONLY" || continue
	case $name in
		band*) q=$BAND ;;
		theta*) q=$THETA ;;
		*) q=$EQUI ;;
	esac
	echo
	echo "$q"
	for settings in "$GPU" "$NOAGG"; do
		[ "$q" = "$THETA" ] && [ "$settings" = "$NOAGG" ] && continue
		psql -c "$settings" -c "EXPLAIN (ANALYZE, TIMING OFF) $q" |
			grep -E 'Custom Scan|GPU Aggregates|Algorithm|Backend:|Drain Time|Backend Time|Transfer Time|Kernel Time|CUDA Init|Execution Time' |
			sed -E 's/ +\(cost=[^)]*\)//; s/^ +/    /'
	done
done
