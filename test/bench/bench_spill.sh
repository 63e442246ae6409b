#!/bin/bash
# test/bench/bench_spill.sh: joins whose inputs are about 8 times
# gpujoin.max_host_memory, GpuJoin spilled (issue 21: the inputs written to
# temporary files in chunks and joined chunk pair by chunk pair) against
# PostgreSQL's own plan, as a markdown table.
#
#   hash   SELECT count(*) FROM (SELECT r.id, s.id FROM r JOIN s ON r.k = s.k
#          OFFSET 0) q; PostgreSQL's hash join, batched at work_mem
#   band   SELECT count(*) FROM (SELECT r.id, s.id FROM r JOIN s ON s.t BETWEEN
#          r.t - 1 AND r.t + 1 OFFSET 0) q; PostgreSQL's index nested loop
#          over an index on s.t; GpuJoin's spill by key range, and without
#          (gpujoin.spill_by_range = off: the block nested loop)
#
# r and s have N rows each (default 2000000: about 8 x 8MB of host buffers,
# 17 bytes a row on each side)
# in all); gpujoin.max_host_memory = HOST_MEMORY (default 8MB), work_mem =
# WORK_MEM (default 4MB), max_parallel_workers_per_gather = 0 (a spilled
# GpuJoin is not offered in a partial plan), gpujoin.enable_aggregate = off
# (the joined rows come out of the GpuJoin node).  Times are the median of
# RUNS (default 3) after a warm-up, with psql's \timing; each row also shows
# both plans' row counts and what GpuJoin spilled (EXPLAIN ANALYZE).  The
# throwaway cluster (test/lib/cluster.sh) takes the installed library; with
# RUNNING_CLUSTER=1 the server of PGHOST/PGPORT is used instead (a database
# bench_spill is made there and dropped), e.g. a cluster started with the
# library under test while others install theirs.
#
#   N=200000 HOST_MEMORY=1MB RUNS=1 test/bench/bench_spill.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
N=${N:-2000000}
HOST_MEMORY=${HOST_MEMORY:-8MB}
WORK_MEM=${WORK_MEM:-4MB}
for v in RUNS N; do
	[[ ${!v} =~ ^[0-9]+$ ]] || { echo "$0: $v must be a whole number (got '${!v}')" >&2; exit 2; }
done

export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
. test/bench/time_query.sh
if [ -n "${RUNNING_CLUSTER:-}" ]; then
	DB=bench_spill
	"$PG_BINDIR/psql" -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
	trap '"$PG_BINDIR/psql" -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB"' EXIT
else
	DB=postgres
	trap 'cluster_stop' EXIT
	GPUJOIN_CLUSTER_CONF="${GPUJOIN_CLUSTER_CONF:-}
autovacuum = off
jit = off" cluster_start
fi

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
COMMON="SET max_parallel_workers_per_gather = 0; SET work_mem = '$WORK_MEM'; SET gpujoin.max_host_memory = '$HOST_MEMORY'; SET gpujoin.enable_aggregate = off"
GPU="$COMMON; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off"
NATIVE="$COMMON; SET gpujoin.enabled = off"
# the same GpuJoin with room for its inputs: what the spill costs
INMEM="$GPU; SET gpujoin.max_host_memory = '4GB'"

echo "settings: N=$N RUNS=$RUNS gpujoin.max_host_memory=$HOST_MEMORY work_mem=$WORK_MEM" \
	"device=$(psql -Atc 'SHOW gpujoin.device') $(nproc) cores"

psql >/dev/null <<SQL
SET client_min_messages = warning;
SELECT setseed(0.21);
CREATE TABLE r AS SELECT g AS id, (random() * $N)::int4 AS k, (random() * $N * 3)::int8 AS t
FROM generate_series(1, $N) g;
CREATE TABLE s AS SELECT g AS id, (random() * $N)::int4 AS k, (random() * $N * 3)::int8 AS t
FROM generate_series(1, $N) g;
CREATE INDEX s_t ON s (t);
VACUUM (FREEZE, ANALYZE) r;
VACUUM (FREEZE, ANALYZE) s;
SQL

# spill_summary SETTINGS QUERY: GpuJoin's chunks and bytes spilled
spill_summary() {
	psql -c "$1" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $2" |
		sed -n 's/^ *\(Outer Chunks Spilled\|Inner Chunks Spilled\|Spill Partitions\|Spill Partitioned By\|Chunk Pairs\|Bytes Spilled\): \(.*\)$/\1 \2/p' |
		sed 's/Outer Chunks Spilled/outer chunks/; s/Inner Chunks Spilled/inner chunks/; s/Spill Partitions/partitions/;
			s/Spill Partitioned By/by/; s/Chunk Pairs/chunk pairs/; s/Bytes Spilled/spilled/' | paste -sd',' | sed 's/,/, /g'
}
# plan_of SETTINGS QUERY: the join node of the plan
plan_of() {
	psql -c "$1" -c "EXPLAIN (COSTS OFF) $2" |
		grep -o -m1 'Custom Scan (GpuJoin)\|Hash Join\|Nested Loop\|Merge Join'
}

echo
echo "| join | rows out | GpuJoin spilled (ms) | spilled, block nested loop (ms) | GpuJoin in memory (ms) | native (ms) | native plan | spilled / native | spill |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |"
for join in hash band; do
	case $join in
		hash) cond='r.k = s.k' ;;
		band) cond='s.t BETWEEN r.t - 1 AND r.t + 1' ;;
	esac
	query="SELECT count(*) FROM (SELECT r.id AS a, s.id AS b FROM r JOIN s ON $cond OFFSET 0) q"
	[ "$(plan_of "$GPU" "$query")" = "Custom Scan (GpuJoin)" ] || { echo "$join: GpuJoin not chosen" >&2; exit 1; }
	rows_gpu=$(psql -Atc "$GPU" -c "$query")
	rows_native=$(psql -Atc "$NATIVE" -c "$query")
	[ "$rows_gpu" = "$rows_native" ] || { echo "$join: $rows_gpu rows from GpuJoin, $rows_native native" >&2; exit 1; }
	time_query "$GPU" "$query" >/dev/null
	gpu_ms=$(time_query "$GPU" "$query")
	# the band join's spill without its key ranges: the block nested loop
	# over the chunks (the hash join's partitions have no such switch)
	bnl_ms=-
	if [ $join = band ]; then
		time_query "$GPU; SET gpujoin.spill_by_range = off" "$query" >/dev/null
		bnl_ms=$(printf '%.0f' "$(time_query "$GPU; SET gpujoin.spill_by_range = off" "$query")")
	fi
	time_query "$INMEM" "$query" >/dev/null
	inmem_ms=$(time_query "$INMEM" "$query")
	time_query "$NATIVE" "$query" >/dev/null
	native_ms=$(time_query "$NATIVE" "$query")
	printf '| %s | %s | %.0f | %s | %.0f | %.0f | %s | %.2f | %s |\n' "$join" "$rows_gpu" "$gpu_ms" "$bnl_ms" "$inmem_ms" "$native_ms" \
		"$(plan_of "$NATIVE" "$query")" "$(awk -v a="$gpu_ms" -v b="$native_ms" 'BEGIN {print a / b}')" \
		"$(spill_summary "$GPU" "$query")"
done
