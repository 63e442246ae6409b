#!/bin/bash
# test/bench/bench_service.sh: what running a join in the GPU service costs
# against running it in the backend, on the same backend, as a table.
#
# Starts a throwaway cluster (test/lib/cluster.sh; the extension must be
# installed) with the service on the cpu backend (gpujoin.service = on,
# gpujoin.service_backend = cpu; GPUJOIN_CLUSTER_CONF adds lines), loads the
# data, and times each query with gpujoin.device = cpu (the join in the
# backend) and gpujoin.device = service (the same cpu backend in the service
# process: the columns copied into the staging area once, a request and its
# matches copied back per step), median of RUNS (default 5) runs with psql's
# \timing, GpuJoin forced, aggregates left to PostgreSQL
# (gpujoin.enable_aggregate = off) so that every matched row crosses the
# protocol.  The steps column is EXPLAIN ANALYZE's Steps of the service run:
# the difference divided by it is the cost of one round trip.
#
#   equi    fact x dim, f.k = d.k, FACT_N x DIM_N (default 1000000 x 100000)
#   band    r x s, s.t BETWEEN r.t - 50 AND r.t + 50, BAND_N x BAND_N (200000)
#   theta   ta x tb, ta.a - tb.a > 990000, THETA_N x THETA_N (20000), nested loop
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5}
FACT_N=${FACT_N:-1000000}
DIM_N=${DIM_N:-100000}
BAND_N=${BAND_N:-200000}
THETA_N=${THETA_N:-20000}
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="gpujoin.service = on
gpujoin.service_backend = cpu
max_parallel_workers_per_gather = 0
${GPUJOIN_CLUSTER_CONF:-}" cluster_start

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

psql <<SQL
CREATE EXTENSION IF NOT EXISTS gpujoin;
SELECT setseed(0.42);
CREATE TABLE fact AS SELECT g AS id, (random() * ($DIM_N - 1))::int AS k FROM generate_series(1, $FACT_N) g;
CREATE TABLE dim AS SELECT g AS k FROM generate_series(0, $DIM_N - 1) g;
CREATE TABLE r AS SELECT g AS id, (random() * 20 * $BAND_N)::int AS t FROM generate_series(1, $BAND_N) g;
CREATE TABLE s AS SELECT g AS id, (random() * 20 * $BAND_N)::int AS t FROM generate_series(1, $BAND_N) g;
CREATE TABLE ta AS SELECT g AS id, (random() * 1000000)::int AS a FROM generate_series(1, $THETA_N) g;
CREATE TABLE tb AS SELECT g AS id, (random() * 1000000)::int AS a FROM generate_series(1, $THETA_N) g;
VACUUM ANALYZE;
SQL
# the service answers once it is ready
for i in $(seq 50); do
	psql -At -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'" | grep -q '^ready' && break
	sleep 0.2
done

FORCE="SET gpujoin.enable_aggregate = off; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off"

. test/bench/time_query.sh

echo "service: $(psql -At -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'")"
echo
echo "| query | size | rows | steps | in the backend ms | in the service ms | difference | per step |"
echo "| --- | --- | --: | --: | --: | --: | --: | --: |"
run() {
	local name=$1 size=$2 query=$3 rows steps cpu svc
	rows=$(psql -At -c "$FORCE" -c "SET gpujoin.device = cpu" -c "$query")
	[ "$rows" = "$(psql -At -c "$FORCE" -c "SET gpujoin.device = service" -c "$query")" ] ||
		{ echo "| $name | $size | different results in the service |"; return; }
	steps=$(psql -At -c "$FORCE" -c "SET gpujoin.device = service" \
		-c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $query" | sed -n 's/^ *Steps: \([0-9]*\).*/\1/p' | head -1)
	cpu=$(time_query "$FORCE; SET gpujoin.device = cpu" "$query")
	svc=$(time_query "$FORCE; SET gpujoin.device = service" "$query")
	awk -v n="$name" -v z="$size" -v r="$rows" -v st="${steps:-0}" -v c="$cpu" -v s="$svc" 'BEGIN {
		d = s - c
		printf "| %s | %s | %d | %d | %.1f | %.1f | %+.1f ms (%+.0f%%) | %s |\n", n, z, r, st, c, s, d, 100 * d / c,
			(st > 0 ? sprintf("%.3f ms", d / st) : "-") }'
}
run equi "$FACT_N x $DIM_N" "SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k"
run band "$BAND_N x $BAND_N" "SELECT count(*) FROM r JOIN s ON s.t BETWEEN r.t - 50 AND r.t + 50"
run theta "$THETA_N x $THETA_N" "SELECT count(*) FROM ta JOIN tb ON ta.a - tb.a > 990000"
