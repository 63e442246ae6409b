#!/bin/bash
# test/bench/bench_service_gpu.sh: issue 20's benchmark, as tables: joins
# in the GPU service, parallel (every process of the Gather a client of
# the service), against the same join in the service in one process and
# PostgreSQL's own plans with the same max_parallel_workers_per_gather; the
# first GpuJoin of a new connection against a warm one, with the service
# and without it (each backend opening CUDA itself); and pgbench clients
# running a mix of joins, GpuJoin against native.
#
# Starts throwaway clusters (test/lib/cluster.sh; the extension must be
# installed) with gpujoin.service = on and gpujoin.service_backend =
# SERVICE_BACKEND (default cuda; cpu runs it without a GPU), times each
# query with psql's \timing, median of RUNS (default 3) warm runs.
#
#   equi   fact x dim (FACT_N x DIM_N, default 10M x 1M), f.k = d.k:
#          sum(f.v * d.w) and count(*)
#   band   r x s (BAND_N x BAND_N, default 1M), s.t BETWEEN r.t - 50 AND
#          r.t + 50, ~1M matches: count(*), and every row returned
#          (native: an index nested loop on s.t)
#
# PARALLEL (default 8) is max_parallel_workers_per_gather of both plans.
# PGBENCH_CLIENTS (16) clients run for PGBENCH_SECONDS (30) each way, a
# transaction a band count (100k x 100k), an equi-join sum (1M x 100k) and
# a theta count (5000 x 5000), GpuJoin forced, or PostgreSQL's plans.
# ONLY_EQUI=1: the equi-join rows and their time breakdown only.
# ONLY_PGBENCH=1: the pgbench table only (the large tables made small).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
PARALLEL=${PARALLEL:-8}
FACT_N=${FACT_N:-10000000}
DIM_N=${DIM_N:-1000000}
BAND_N=${BAND_N:-1000000}
SERVICE_BACKEND=${SERVICE_BACKEND:-cuda}
PGBENCH_CLIENTS=${PGBENCH_CLIENTS:-16}
PGBENCH_SECONDS=${PGBENCH_SECONDS:-30}
ONLY_EQUI=${ONLY_EQUI:-0}
ONLY_PGBENCH=${ONLY_PGBENCH:-0}
if [ "$ONLY_PGBENCH" = 1 ]; then
	FACT_N=1000 DIM_N=100 BAND_N=20000
fi
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
BASE_CONF="max_parallel_workers_per_gather = $PARALLEL
max_worker_processes = 32
max_parallel_workers = 24
max_connections = 64
shared_buffers = 2GB
work_mem = 256MB
jit = off
gpujoin.service_staging_memory = 2GB
${GPUJOIN_CLUSTER_CONF:-}"

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
. test/bench/time_query.sh

wait_for_service() {
	local i
	for i in $(seq 100); do
		psql -At -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'" | grep -q '^ready' && return 0
		sleep 0.2
	done
	echo "the service did not start: $(psql -At -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'")"
	return 1
}

GPUJOIN_CLUSTER_CONF="gpujoin.service = on
gpujoin.service_backend = $SERVICE_BACKEND
$BASE_CONF" cluster_start
psql <<SQL
CREATE EXTENSION IF NOT EXISTS gpujoin;
SELECT setseed(0.42);
CREATE TABLE fact AS SELECT g AS id, (random() * ($DIM_N - 1))::int AS k, (g % 100)::float8 AS v
    FROM generate_series(1, $FACT_N) g;
CREATE TABLE dim AS SELECT g AS k, (g % 10)::float8 AS w FROM generate_series(0, $DIM_N - 1) g;
CREATE TABLE r AS SELECT g AS id, (random() * 20 * $BAND_N)::int AS t FROM generate_series(1, $BAND_N) g;
CREATE TABLE s AS SELECT g AS id, (random() * 20 * $BAND_N)::int AS t FROM generate_series(1, $BAND_N) g;
CREATE INDEX ON s (t);
CREATE TABLE small_r AS SELECT * FROM r WHERE id <= 20000;
CREATE TABLE small_s AS SELECT * FROM s WHERE id <= 20000;
CREATE TABLE mix_r AS SELECT g AS id, (random() * 2000000)::int AS t FROM generate_series(1, 100000) g;
CREATE TABLE mix_s AS SELECT g AS id, (random() * 2000000)::int AS t FROM generate_series(1, 100000) g;
CREATE INDEX ON mix_s (t);
CREATE TABLE mix_fact AS SELECT g AS id, (random() * 99999)::int AS k, (g % 100)::float8 AS v
    FROM generate_series(1, 1000000) g;
CREATE TABLE mix_dim AS SELECT g AS k, (g % 10)::float8 AS w FROM generate_series(0, 99999) g;
VACUUM ANALYZE;
SQL
wait_for_service
echo "service: $(psql -At -c "SELECT coalesce(name, '') || ': ' || status FROM gpujoin_devices() WHERE backend = 'service'")"
echo "machine: $(nproc) cores; PARALLEL=$PARALLEL"

EQUI_SUM="SELECT sum(f.v * d.w) FROM fact f JOIN dim d ON f.k = d.k"
EQUI_COUNT="SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k"
BAND="SELECT count(*) FROM r JOIN s ON s.t BETWEEN r.t - 50 AND r.t + 50"
BAND_ROWS="SELECT count(*) FROM (SELECT r.id, s.id FROM r JOIN s ON s.t BETWEEN r.t - 50 AND r.t + 50 OFFSET 0) t"
FORCE="SET gpujoin.device = service; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off"
NATIVE="SET gpujoin.enabled = off"
SERIAL="SET max_parallel_workers_per_gather = 0"
ROWS_TO_PG="SET gpujoin.enable_aggregate = off"

plan_of() {
	psql -At -c "$1" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $2" |
		grep -oE 'Aggregate Mode: partial|Parallel Custom Scan \(GpuJoin\)|Custom Scan \(GpuJoin\)|GPU Aggregates|Backend: [a-z ()]+|Workers Launched: [0-9]+|Parallel Hash Join|Hash Join|Merge Join|Nested Loop|Index Only Scan|Index Scan' |
		sed 's/Custom Scan (GpuJoin)/GpuJoin/' | sort -u | paste -sd',' - | sed 's/,/, /g'
}

if [ "$ONLY_PGBENCH" = 0 ]; then
echo
echo "| query | size | plan | ms | native ms (parallel $PARALLEL) | x native |"
echo "| --- | --- | --- | --: | --: | --: |"
row() {
	local name=$1 size=$2 settings=$3 gq=$4 nq=$5 g n
	[ "$(psql -At -c "$settings" -c "$gq")" = "$(psql -At -c "$NATIVE" -c "$nq")" ] ||
		{ echo "| $name | $size | different results | | | |"; return; }
	g=$(time_query "$settings" "$gq")
	n=$(time_query "$NATIVE" "$nq")
	echo "| $name | $size | $(plan_of "$settings" "$gq") | $g | $n | $(awk -v g="$g" -v n="$n" 'BEGIN {printf "%.1fx", n / g}') |"
}
row "equi sum, service, one process" "$FACT_N x $DIM_N" "$FORCE; $SERIAL" "$EQUI_SUM" "$EQUI_SUM"
row "equi sum, service, parallel, rows to PostgreSQL's partial Agg" "$FACT_N x $DIM_N" "$FORCE; $ROWS_TO_PG" "$EQUI_SUM" "$EQUI_SUM"
row "equi sum, service, parallel, GPU partial aggregates" "$FACT_N x $DIM_N" "$FORCE" "$EQUI_SUM" "$EQUI_SUM"
row "equi count, service, one process" "$FACT_N x $DIM_N" "$FORCE; $SERIAL" "$EQUI_COUNT" "$EQUI_COUNT"
row "equi count, service, parallel, rows to partial Agg" "$FACT_N x $DIM_N" "$FORCE; $ROWS_TO_PG" "$EQUI_COUNT" "$EQUI_COUNT"
row "equi count, service, parallel, GPU partial aggregates" "$FACT_N x $DIM_N" "$FORCE" "$EQUI_COUNT" "$EQUI_COUNT"
[ "$ONLY_EQUI" = 1 ] || {
row "band count, service, one process" "$BAND_N x $BAND_N" "$FORCE; $SERIAL" "$BAND" "$BAND"
row "band count, service, parallel, rows to partial Agg" "$BAND_N x $BAND_N" "$FORCE; $ROWS_TO_PG" "$BAND" "$BAND"
row "band rows returned, service, one process" "$BAND_N x $BAND_N" "$FORCE; $SERIAL" "$BAND_ROWS" "$BAND_ROWS"
row "band rows returned, service, parallel" "$BAND_N x $BAND_N" "$FORCE" "$BAND_ROWS" "$BAND_ROWS"
}

# where the time of the equi-join goes (the node's own clocks, summed over the processes)
echo
echo "Time breakdown, $EQUI_SUM (EXPLAIN ANALYZE, TIMING OFF):"
for settings in "$FORCE; $SERIAL" "$FORCE; $ROWS_TO_PG" "$FORCE"; do
	echo
	echo "$settings"
	psql -c "$settings" -c "EXPLAIN (ANALYZE, TIMING OFF) $EQUI_SUM" |
		grep -E 'Custom Scan|GPU Aggregates|Aggregate Mode|Inner Side|Workers Launched|Backend:|Input:|Rows Drained|Steps:|Drain Time|Backend Time|Queue Time|Execution Time' |
		sed -E 's/ +\(cost=[^)]*\)//; s/^ +/    /'
done

[ "$ONLY_EQUI" = 1 ] && exit 0

# the first GpuJoin of a new connection, against the same in a warm one
SMALL="SELECT count(*) FROM small_r r JOIN small_s s ON s.t BETWEEN r.t - 50 AND r.t + 50"
first_join() {
	local settings=$1 i times=()
	for i in $(seq 5); do
		times+=("$(psql -c "$settings" -c '\timing on' -c "$SMALL" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)")
	done
	printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
warm_join() {
	psql -c "$1" -c '\timing on' -c "$SMALL" -c "$SMALL" -c "$SMALL" -c "$SMALL" |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -3 | sort -g | sed -n 2p
}
echo
echo "First GpuJoin of a new connection (20000 x 20000 band count, median of 5 connections) against a warm one:"
echo
echo "| where the join runs | first in a new connection ms | warm ms | difference |"
echo "| --- | --: | --: | --: |"
f=$(first_join "$FORCE; $SERIAL")
w=$(warm_join "$FORCE; $SERIAL")
echo "| the service ($SERVICE_BACKEND) | $f | $w | $(awk -v f="$f" -v w="$w" 'BEGIN {printf "%+.1f ms", f - w}') |"

fi

# pgbench: a mix of GpuJoins from many clients at once
cat >"$CLUSTER_DIR/mix.sql" <<'SQL'
SELECT count(*) FROM mix_r r JOIN mix_s s ON s.t BETWEEN r.t - 50 AND r.t + 50;
SELECT sum(f.v * d.w) FROM mix_fact f JOIN mix_dim d ON f.k = d.k;
SELECT count(*) FROM small_r r JOIN small_s s ON r.t > s.t + 19000000 WHERE r.id <= 5000 AND s.id <= 5000;
SQL
chmod a+r "$CLUSTER_DIR/mix.sql"
pgbench_tps() {
	local options=$1 out
	out=$(PGOPTIONS="$options" "$PG_BINDIR/pgbench" -n -c "$PGBENCH_CLIENTS" -j "$PGBENCH_CLIENTS" -T "$PGBENCH_SECONDS" \
		-f "$CLUSTER_DIR/mix.sql" postgres 2>&1)
	echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1
	echo "$out" | grep -c 'running on the cpu backend' >"$CLUSTER_DIR/fallbacks" || true
}
echo
echo "pgbench, $PGBENCH_CLIENTS clients for $PGBENCH_SECONDS s each; a transaction: a band count 100k x 100k (native: index nested loop),"
echo "an equi-join sum 1M x 100k and a theta count 5000 x 5000, each plan in one process:"
echo
echo "| plans | transactions/s | fallbacks to the cpu backend |"
echo "| --- | --: | --: |"
t=$(pgbench_tps "-c gpujoin.device=service -c enable_nestloop=off -c enable_hashjoin=off -c enable_mergejoin=off -c max_parallel_workers_per_gather=0")
echo "| GpuJoin in the service | $t | $(cat "$CLUSTER_DIR/fallbacks") |"
t=$(pgbench_tps "-c gpujoin.enabled=off -c max_parallel_workers_per_gather=0")
echo "| native | $t | - |"
echo "service after the run: $(psql -At -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'")"

# without the service: each new connection opens CUDA itself
if [ "$SERVICE_BACKEND" = cuda ] && [ "$ONLY_PGBENCH" = 0 ]; then
	cluster_stop
	GPUJOIN_CLUSTER_CONF="gpujoin.service = off
$BASE_CONF" cluster_start
	psql <<SQL
CREATE EXTENSION IF NOT EXISTS gpujoin;
SELECT setseed(0.42);
CREATE TABLE small_r AS SELECT g AS id, (random() * 20000000)::int AS t FROM generate_series(1, 20000) g;
CREATE TABLE small_s AS SELECT g AS id, (random() * 20000000)::int AS t FROM generate_series(1, 20000) g;
VACUUM ANALYZE;
SQL
	CUDA="SET gpujoin.device = cuda; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off; $SERIAL"
	f=$(first_join "$CUDA")
	w=$(warm_join "$CUDA")
	echo
	echo "| where the join runs | first in a new connection ms | warm ms | difference |"
	echo "| --- | --: | --: | --: |"
	echo "| the backend itself (cuda, no service) | $f | $w | $(awk -v f="$f" -v w="$w" 'BEGIN {printf "%+.1f ms", f - w}') |"
fi
