#!/bin/bash
# test/bench/bench_partitions.sh: sort-merge and hash joins whose sides do
# not fit gpujoin.device_memory, cut into device partitions (issue 21,
# src/host_chunking/device_partitions.c), against the same join with the
# default budget and against PostgreSQL's own plan, as a markdown table.
#
#   hash   SELECT count(*), sum(a * 3 + b) FROM (SELECT r.id AS a, s.id AS b
#          FROM r JOIN s ON r.k = s.k OFFSET 0) q
#   band   the same over r JOIN s ON s.t BETWEEN r.t - 1 AND r.t + 1
#
# r and s have N rows each (default 20000000, the issue's 20M x 20M); the
# partitioned run sets gpujoin.device_memory = DEVICE_MEMORY (default 256MB),
# the default run gpujoin.device_memory = 0 (on cuda half of the free device
# memory; on cpu no partitions), and "partitions off" shows what the budget
# did before (on cuda: the join ran on the cpu backend).  Rows and the
# checksum must equal native's.  gpujoin.max_host_memory = HOST_MEMORY
# (default 16GB: no host spill), max_parallel_workers_per_gather = 0, an
# index on s.t (native runs the band join as an index nested loop),
# gpujoin.enable_aggregate = off (the pairs come out of the GpuJoin node).
# Times are the median of RUNS (default 3) after a warm-up, with psql's
# \timing.  "ahead on" is the partitioned run with
# gpujoin.partitions_open_ahead = on (in the GPU service each next piece
# opens while the current one runs; off, the default, in turn).  SKIP_NATIVE=1 leaves
# native's time out (its rows are still compared, unless SKIP_NATIVE=2,
# where the partitioned rows are compared with the default budget's only).
# JOINS picks the rows (default "hash band").  The throwaway cluster (test/lib/cluster.sh) takes the installed
# library; with RUNNING_CLUSTER=1 the server of PGHOST/PGPORT is used
# instead (a database bench_partitions is made there and dropped).
#
#   N=200000 DEVICE_MEMORY=4MB RUNS=1 test/bench/bench_partitions.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
N=${N:-20000000}
DEVICE_MEMORY=${DEVICE_MEMORY:-256MB}
HOST_MEMORY=${HOST_MEMORY:-16GB}
for v in RUNS N; do
	[[ ${!v} =~ ^[0-9]+$ ]] || { echo "$0: $v must be a whole number (got '${!v}')" >&2; exit 2; }
done

export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
. test/bench/time_query.sh
if [ -n "${RUNNING_CLUSTER:-}" ]; then
	DB=bench_partitions
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
COMMON="SET max_parallel_workers_per_gather = 0; SET gpujoin.max_host_memory = '$HOST_MEMORY'; SET gpujoin.enable_aggregate = off"
GPU="$COMMON; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off"
PARTS="$GPU; SET gpujoin.device_memory = '$DEVICE_MEMORY'"
DEFAULT="$GPU; SET gpujoin.device_memory = 0"
NOPARTS="$PARTS; SET gpujoin.device_partitions = off"
AHEAD="$PARTS; SET gpujoin.partitions_open_ahead = on"
SKIP_NATIVE=${SKIP_NATIVE:-0}
NATIVE="$COMMON; SET gpujoin.enabled = off"

echo "settings: N=$N RUNS=$RUNS gpujoin.device_memory=$DEVICE_MEMORY" \
	"gpujoin.max_host_memory=$HOST_MEMORY device=$(psql -Atc 'SHOW gpujoin.device') $(nproc) cores"

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

# explain_of SETTINGS QUERY: GpuJoin's backend and device partitions
explain_of() {
	psql -c "$1" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $2" |
		sed -n 's/^ *\(Backend\|Device Partitions\|Partition Pieces\|Partitions As Nested Loop\|Partition Pieces Opened Ahead\|Devices\): \(.*\)$/\1=\2/p' |
		paste -sd' '
}
# plan_of SETTINGS QUERY: the join node of the plan
plan_of() {
	psql -c "$1" -c "EXPLAIN (COSTS OFF) $2" |
		grep -o -m1 'Custom Scan (GpuJoin)\|Hash Join\|Nested Loop\|Merge Join'
}

echo
echo "| join | rows out | partitioned (ms) | ahead on (ms) | default budget (ms) | partitions off (ms) | native (ms) | native plan | partitioned / default | partitioned run |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |"
for join in ${JOINS:-hash band}; do
	case $join in
		hash) cond='r.k = s.k' ;;
		band) cond='s.t BETWEEN r.t - 1 AND r.t + 1' ;;
	esac
	query="SELECT count(*), sum(a * 3 + b) FROM (SELECT r.id::int8 AS a, s.id::int8 AS b FROM r JOIN s ON $cond OFFSET 0) q"
	[ "$(plan_of "$PARTS" "$query")" = "Custom Scan (GpuJoin)" ] || { echo "$join: GpuJoin not chosen" >&2; exit 1; }
	out_parts=$(psql -Atc "$PARTS" -c "$query")
	out_default=$(psql -Atc "$DEFAULT" -c "$query")
	if [ "$SKIP_NATIVE" = 2 ]; then
		out_native=$out_default
	else
		out_native=$(psql -Atc "$NATIVE" -c "$query")
	fi
	[ "$out_parts" = "$out_native" ] && [ "$out_default" = "$out_native" ] ||
		{ echo "$join: GpuJoin gave $out_parts (partitioned), $out_default (default); native $out_native" >&2; exit 1; }
	time_query "$PARTS" "$query" >/dev/null
	parts_ms=$(time_query "$PARTS" "$query")
	time_query "$DEFAULT" "$query" >/dev/null
	default_ms=$(time_query "$DEFAULT" "$query")
	ahead_ms=$(time_query "$AHEAD" "$query")
	noparts_ms=$(time_query "$NOPARTS" "$query")
	if [ "$SKIP_NATIVE" = 0 ]; then
		time_query "$NATIVE" "$query" >/dev/null
		native_ms=$(time_query "$NATIVE" "$query")
	else
		native_ms=0
	fi
	printf '| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %.2f | %s |\n' "$join" "${out_parts%%|*}" \
		"$parts_ms" "$ahead_ms" "$default_ms" "$noparts_ms" "$native_ms" "$(plan_of "$NATIVE" "$query")" \
		"$(awk -v a="$parts_ms" -v b="$default_ms" 'BEGIN {print a / b}')" \
		"$(explain_of "$PARTS" "$query")"
done
