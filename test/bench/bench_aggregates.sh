#!/bin/bash
# test/bench/bench_aggregates.sh: aggregates computed inside GpuJoin against
# Agg over GpuJoin and against the native plan, as a markdown table.
#
#   SELECT count(*), sum(s.x) FROM r JOIN s ON r.a > s.a
#
# at N x N rows (N in SIZES, default "100000 1000000"; half the pairs match).
# The native plan (a nested loop over every pair) and Agg over GpuJoin (every
# matching pair returned as a row) are timed at NATIVE_N x NATIVE_N (default
# 20000) and extrapolated quadratically: said so in the table.  Median of
# RUNS runs of psql's \timing.  Needs the extension installed.  EXPLAIN=1
# prints the EXPLAIN ANALYZE of each size's aggregate query after the table.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
SIZES=${SIZES:-"100000 1000000"}
NATIVE_N=${NATIVE_N:-20000}
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="${GPUJOIN_CLUSTER_CONF:-}
max_parallel_workers_per_gather = ${PARALLEL:-2}
jit = off" cluster_start

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

. test/bench/time_query.sh

make_tables() {
	psql >/dev/null <<SQL
DROP TABLE IF EXISTS r, s;
SELECT setseed(0.42);
CREATE TABLE r AS SELECT g AS id, (random() * 1000000000)::int AS a FROM generate_series(1, $1) g;
CREATE TABLE s AS SELECT g AS id, (random() * 1000000000)::int AS a, (g % 1000)::int AS x
  FROM generate_series(1, $1) g;
VACUUM ANALYZE r, s;
SQL

}

Q='SELECT count(*), sum(s.x) FROM r JOIN s ON r.a > s.a'
AGG_ON='SET gpujoin.enable_aggregate = on'
AGG_OFF='SET gpujoin.enable_aggregate = off'
NATIVE='SET gpujoin.enabled = off'

plans=""
make_tables "$NATIVE_N"
native_small=$(time_query "$NATIVE" "$Q")
joinagg_small=$(time_query "$AGG_OFF" "$Q")
inside_small=$(time_query "$AGG_ON" "$Q")

echo "| size | GpuJoin aggregates ms | Agg over GpuJoin ms | native ms | speedup vs native |"
echo "| --- | --- | --- | --- | --- |"
echo "| ${NATIVE_N} x ${NATIVE_N} | $inside_small | $joinagg_small | $native_small | $(awk -v a="$inside_small" -v b="$native_small" 'BEGIN {printf "%.0fx", b / a}') |"
for n in $SIZES; do
	make_tables "$n"
	inside=$(time_query "$AGG_ON" "$Q")
	f=$(awk -v n="$n" -v m="$NATIVE_N" 'BEGIN {print (n / m) * (n / m)}')
	native=$(awk -v t="$native_small" -v f="$f" 'BEGIN {printf "%.0f", t * f}')
	joinagg=$(awk -v t="$joinagg_small" -v f="$f" 'BEGIN {printf "%.0f", t * f}')
	echo "| ${n} x ${n} | $inside | ~$joinagg (extrapolated) | ~$native (extrapolated) | $(awk -v a="$inside" -v b="$native" 'BEGIN {printf "%.0fx", b / a}') |"
	[ -n "${EXPLAIN:-}" ] && plans="$plans
$(psql -c "$AGG_ON" -c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) $Q")"
done
[ -z "${EXPLAIN:-}" ] || printf '%s\n' "$plans"
