#!/bin/bash
# test/bench/bench_columnar_input.sh: how fast GpuJoin gets its input rows,
# through the columnar heap reader (gpujoin.columnar_input = on) and through
# the child plan (off), as markdown tables.
#
# 1. Reader throughput, one process (max_parallel_workers_per_gather = 0):
#    the rows of the big side divided by the time its drain took (the
#    "Outer/Inner Input: ..., X ms" of EXPLAIN ANALYZE), median of RUNS
#    (default 3) after a warm-up, for
#      narrow       (a int4, b float8), N rows (default 10000000), frozen
#                   (every page all-visible)
#      narrow-mvcc  the same rows, never vacuumed (autovacuum off) and read
#                   once before, so hint bits are set but no page is
#                   all-visible: every tuple takes a visibility check
#      mixed12      12 columns of mixed types (text, numeric, int8, date, ...)
#                   of which the join reads 2, N rows, frozen
#    in the query SELECT count(*), sum(t.b) FROM t JOIN one ON t.a < one.a
#    (one: a single row), with the GpuJoin forced.  Beside them, PostgreSQL's
#    own SELECT count(*) FROM t (a seq scan that deforms nothing) as the
#    rows/s of reading the pages alone: what copying raw pages to the device
#    and deforming them there could at best be compared with.
#
# 2. End to end (unless E2E=0), the queries of issue 19's table, GpuJoin with
#    the reader on and off, and PostgreSQL's own plan (gpujoin.enabled = off),
#    median of RUNS after a warm-up, at max_parallel_workers_per_gather =
#    PARALLEL (default 2; 8 on the GPU machine):
#      equi-sum     SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k
#                   f: EQUI_F rows (default 10000000), d: EQUI_D (1000000)
#      equi-count   SELECT count(*) FROM f JOIN d ON f.k = d.k
#      band         SELECT count(*) FROM b1 JOIN b2 ON b2.t BETWEEN b1.t - 1
#                   AND b1.t + 1, BAND_N x BAND_N int8 (default 1000000)
#      theta        SELECT count(*) FROM t1 JOIN t2 ON t1.a < t2.a,
#                   THETA_N x THETA_N (default 1000000); the native plan is
#                   timed at THETA_NATIVE_N (default 20000) and extrapolated
#                   quadratically
#
# The throwaway cluster (test/lib/cluster.sh) gets shared_buffers =
# SHARED_BUFFERS (default 1GB: the tables are read from PostgreSQL's buffers,
# not the kernel's), jit = off, autovacuum = off (an auto-analyze running
# while a table is loaded holds back the horizon, and VACUUM would leave its
# pages not all-visible), and the lines of GPUJOIN_CLUSTER_CONF (e.g.
# "gpujoin.device = cuda").  Small run:
#
#   N=200000 EQUI_F=200000 EQUI_D=20000 BAND_N=20000 THETA_N=20000 RUNS=1 \
#     test/bench/bench_columnar_input.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
N=${N:-10000000}
PARALLEL=${PARALLEL:-2}
E2E=${E2E:-1}
EQUI_F=${EQUI_F:-10000000}
EQUI_D=${EQUI_D:-1000000}
BAND_N=${BAND_N:-1000000}
THETA_N=${THETA_N:-1000000}
THETA_NATIVE_N=${THETA_NATIVE_N:-20000}
SHARED_BUFFERS=${SHARED_BUFFERS:-1GB}
for v in RUNS N PARALLEL EQUI_F EQUI_D BAND_N THETA_N THETA_NATIVE_N; do
	[[ ${!v} =~ ^[0-9]+$ ]] || { echo "$0: $v must be a whole number (got '${!v}')" >&2; exit 2; }
done

export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
WORK=$(mktemp -d /tmp/bench_columnar.XXXXXX)
trap 'cluster_stop; rm -rf "$WORK"' EXIT
GPUJOIN_CLUSTER_CONF="${GPUJOIN_CLUSTER_CONF:-}
shared_buffers = $SHARED_BUFFERS
autovacuum = off
jit = off" cluster_start

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
load() { { echo 'SET client_min_messages = warning;'; cat; } | psql >/dev/null; }
FORCE='SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off'

# settle TABLE...: VACUUM (FREEZE, ANALYZE) until every page is all-visible
# (a VACUUM right after the load left some pages not all-visible: the hint
# bits of commits not yet flushed, with synchronous_commit off), at most 10
# times
settle() {
	local t i
	psql -c CHECKPOINT
	for t in "$@"; do
		for i in $(seq 10); do
			psql -c "VACUUM (FREEZE, ANALYZE) $t"
			[ "$(psql -Atc "SELECT relallvisible >= relpages FROM pg_class WHERE relname = '$t'")" = t ] && break
			sleep 0.5
		done
	done
}

# median of the numbers on stdin
median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) exit 1; print a[int((NR + 1) / 2)]}'; }
median_ms() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$1" | median; }
rate() { awk -v r="$1" -v t="$2" 'BEGIN {if (t <= 0) print "-"; else printf "%.1fM", r / t / 1000}'; }
ms() { awk -v t="$1" 'BEGIN {printf (t < 10 ? "%.2f" : "%.1f"), t}'; }

echo "settings: N=$N RUNS=$RUNS PARALLEL=$PARALLEL shared_buffers=$SHARED_BUFFERS" \
	"device=$(psql -Atc 'SHOW gpujoin.device') $(nproc) cores"

load <<SQL
SELECT setseed(0.42);
CREATE TABLE one (a int4, b float8);
INSERT INTO one VALUES (2000000000, 0);
CREATE TABLE narrow (a int4, b float8);
INSERT INTO narrow SELECT (random() * 1e9)::int4, random() FROM generate_series(1, $N);
CREATE TABLE narrow_mvcc (a int4, b float8) WITH (autovacuum_enabled = off);
INSERT INTO narrow_mvcc SELECT * FROM narrow;
CREATE TABLE mixed12 (id int8, label text, price numeric, day date, at timestamp, flag bool,
                      a int4, note text, small int2, ratio float4, b float8, qty int4);
INSERT INTO mixed12
SELECT g, 'item ' || g, (g % 1000) * 1.25, date '2020-01-01' + (g % 1000),
       timestamp '2020-01-01' + g * interval '1 second', g % 2 = 0,
       (random() * 1e9)::int4, repeat('n', g % 20), (g % 100)::int2, (g % 7)::float4,
       random(), g % 50
FROM generate_series(1, $N) g;
ANALYZE narrow_mvcc;
SELECT count(*) FROM narrow_mvcc;
SQL
settle one narrow mixed12
psql -Atc "SELECT relname || ' ' || relpages || ' pages, ' || relallvisible || ' all-visible'
           FROM pg_class WHERE relname IN ('narrow', 'narrow_mvcc', 'mixed12') ORDER BY 1" | sed 's/^/  /'

# input_ms SETTING TABLE: the big side's drain time of each run, one a line
input_ms() {
	local setting=$1 table=$2 _ args=()
	for _ in $(seq $((RUNS + 1))); do
		args+=(-c "EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*), sum(t.b) FROM $table t JOIN one ON t.a < one.a")
	done
	psql -c "SET max_parallel_workers_per_gather = 0; $FORCE; SET gpujoin.columnar_input = $setting" \
		"${args[@]}" | sed -n 's/^ *\(Outer\|Inner\) Input: .*, \([0-9.]*\) ms$/\2/p' |
		awk 'NR % 2 == 1 {x = $1} NR % 2 == 0 {print (x > $1 ? x : $1)}' | tail -n +2
}

echo
echo "### Reader throughput, one process (rows/s of the big side's drain)"
echo
echo "| table | rows | columnar reader | rows/s | child plan | rows/s | speedup | seq scan count(*) | rows/s |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for table in narrow narrow_mvcc mixed12; do
	on=$(input_ms on $table | median)
	off=$(input_ms off $table | median)
	args=()
	for _ in $(seq $((RUNS + 1))); do
		args+=(-c "SELECT count(*) FROM $table")
	done
	psql -c 'SET max_parallel_workers_per_gather = 0' -c '\timing on' -c '\o /dev/null' \
		"${args[@]}" >"$WORK/scan.out"
	scan=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$WORK/scan.out" | tail -n +2 | median)
	echo "| $table | $N | $(ms "$on") ms | $(rate "$N" "$on") | $(ms "$off") ms | $(rate "$N" "$off") |" \
		"$(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.1fx", b / a}') | $(ms "$scan") ms | $(rate "$N" "$scan") |"
done

[ "$E2E" = 1 ] || exit 0

load <<SQL
SELECT setseed(0.42);
CREATE TABLE d AS SELECT g AS k, (random() * 100)::int4 AS w FROM generate_series(1, $EQUI_D) g;
CREATE TABLE f AS SELECT 1 + (random() * ($EQUI_D - 1))::int4 AS k, (random() * 100)::int4 AS v
                  FROM generate_series(1, $EQUI_F) g;
CREATE TABLE b1 AS SELECT (random() * $BAND_N * 1.1)::int8 AS t FROM generate_series(1, $BAND_N);
CREATE TABLE b2 AS SELECT (random() * $BAND_N * 1.1)::int8 AS t FROM generate_series(1, $BAND_N);
CREATE INDEX ON b2 (t);
CREATE TABLE t1 AS SELECT (random() * 1e9)::int4 AS a FROM generate_series(1, $THETA_N);
CREATE TABLE t2 AS SELECT (random() * 1e9)::int4 AS a FROM generate_series(1, $THETA_N);
CREATE TABLE t1s AS SELECT * FROM t1 LIMIT $THETA_NATIVE_N;
CREATE TABLE t2s AS SELECT * FROM t2 LIMIT $THETA_NATIVE_N;
SQL
settle d f b1 b2 t1 t2 t1s t2s

# timed SETTINGS QUERY: median ms of RUNS runs after a warm-up; the plan's
# first line and algorithm go to $WORK/plan
timed() {
	local settings=$1 query=$2 _ args=()
	for _ in $(seq "$RUNS"); do
		args+=(-c "$query")
	done
	psql -c "SET max_parallel_workers_per_gather = $PARALLEL; $settings" \
		-c "EXPLAIN (ANALYZE, COSTS OFF) $query" -c '\timing on' -c '\o /dev/null' "${args[@]}" >"$WORK/e2e.out"
	sed '/^Time: /,$d' "$WORK/e2e.out" >"$WORK/plan"
	median_ms "$WORK/e2e.out"
}
plan_of() {
	if grep -q 'GpuJoin' "$WORK/plan"; then
		echo "GpuJoin $(sed -n 's/^ *Algorithm: //p' "$WORK/plan" | head -1), $(sed -n 's/^ *Backend: //p' "$WORK/plan" | head -1)"
	else
		grep -oE 'Hash Join|Merge Join|Nested Loop' "$WORK/plan" | head -1 || echo native
	fi
}

echo
echo "### End to end (max_parallel_workers_per_gather = $PARALLEL)"
echo
echo "| query | size | GpuJoin, reader on | GpuJoin, reader off | native | native / reader on | GpuJoin plan |"
echo "| --- | --- | ---: | ---: | ---: | ---: | --- |"
e2e() {
	local name=$1 size=$2 query=$3 native_query=${4:-$3} scale=${5:-1} on off nat plan
	on=$(timed "$FORCE; SET gpujoin.columnar_input = on" "$query")
	plan=$(plan_of)
	off=$(timed "$FORCE; SET gpujoin.columnar_input = off" "$query")
	nat=$(timed "SET gpujoin.enabled = off" "$native_query")
	nat=$(awk -v t="$nat" -v s="$scale" 'BEGIN {print t * s}')
	echo "| $name | $size | $(ms "$on") | $(ms "$off") | $([ "$scale" = 1 ] || echo '~')$(ms "$nat") |" \
		"$(awk -v a="$on" -v b="$nat" 'BEGIN {printf "%.1fx", b / a}') | $plan |"
}
e2e equi-sum "${EQUI_F} x ${EQUI_D}" "SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k"
e2e equi-count "${EQUI_F} x ${EQUI_D}" "SELECT count(*) FROM f JOIN d ON f.k = d.k"
e2e band "${BAND_N} x ${BAND_N}" "SELECT count(*) FROM b1 JOIN b2 ON b2.t BETWEEN b1.t - 1 AND b1.t + 1"
e2e theta "${THETA_N} x ${THETA_N}" "SELECT count(*) FROM t1 JOIN t2 ON t1.a < t2.a" \
	"SELECT count(*) FROM t1s JOIN t2s ON t1s.a < t2s.a" \
	"$(awk -v n="$THETA_N" -v m="$THETA_NATIVE_N" 'BEGIN {print (n / m) * (n / m)}')"
[ "$THETA_N" = "$THETA_NATIVE_N" ] || echo "(native theta timed at $THETA_NATIVE_N x $THETA_NATIVE_N, extrapolated: ~)"
