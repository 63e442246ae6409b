#!/bin/bash
# test/bench/bench_agg_device.sh: aggregates over a join reduced in the
# backend (every algorithm, arguments over both sides, GROUP BY expressions,
# dominance counting) against PostgreSQL's own plan, as a markdown table.
#
#   dominance  SELECT count(*) FROM t1 JOIN t2 ON t1.a < t2.a AND t1.b > t2.b
#              N x N random int4 pairs, N in DOM_SIZES (default
#              "10000 100000 1000000"); GpuJoin as the planner picks it
#              (dominance counting where it applies) and, up to NODOM_MAX rows
#              (default 100000), with gpujoin.enable_dominance = off (the
#              count kernel / loop over every pair)
#   equi-group SELECT d.k % 100, sum(f.v * d.w), count(*) FROM f JOIN d
#              ON f.k = d.k GROUP BY 1, f of EQUI_F rows (default 10M), d of
#              EQUI_D (default 1M), both times SCALE (default 1)
#   band-group SELECT r.g, count(*), sum(s.x) FROM r JOIN s ON s.t BETWEEN
#              r.t - 5 AND r.t + 5 GROUP BY r.g, BAND_N x BAND_N (default
#              1M; about 11 matches a row, 100 groups; s.t has a btree index,
#              which PostgreSQL's plan uses)
#   theta-group SELECT s2.g, count(*), min(r2.a) FROM r2 JOIN s2 ON
#              r2.a < s2.a GROUP BY s2.g, THETA_N x THETA_N (default 100000,
#              10 groups of the inner table)
#
# Each query runs in one warm session: once to warm up (CUDA's initialisation,
# caches), then RUNS times (default 3), the median of psql's \timing.  Native
# nested loops that would run for hours (dominance above DOM_NATIVE_N, default
# 10000, theta above THETA_NATIVE_N, default 20000) are timed at that size and
# extrapolated quadratically, marked so.  Both plans run with
# max_parallel_workers_per_gather = PARALLEL (default 2; 8 on the GPU
# machine).  GPUJOIN_CLUSTER_CONF adds postgresql.conf lines (e.g.
# "gpujoin.device = cuda"); ONLY='regex' runs the queries whose name matches;
# OUT_TSV=file also writes the rows as TSV; EXPLAIN=1 prints each GpuJoin
# EXPLAIN ANALYZE after the table.  Needs the extension installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
SCALE=${SCALE:-1}
DOM_SIZES=${DOM_SIZES:-"10000 100000 1000000"}
NODOM_MAX=${NODOM_MAX:-100000}
DOM_NATIVE_N=${DOM_NATIVE_N:-10000}
EQUI_F=${EQUI_F:-10000000}
EQUI_D=${EQUI_D:-1000000}
BAND_N=${BAND_N:-1000000}
THETA_N=${THETA_N:-100000}
THETA_NATIVE_N=${THETA_NATIVE_N:-20000}
ONLY=${ONLY:-.}
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="${GPUJOIN_CLUSTER_CONF:-}
max_parallel_workers_per_gather = ${PARALLEL:-2}
jit = off" cluster_start

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

GPU='SET gpujoin.enable_aggregate = on'
NATIVE='SET gpujoin.enabled = off'
NODOM='SET gpujoin.enable_dominance = off'

# time_query SETTINGS QUERY -> median milliseconds of RUNS runs after a warm-up
time_query() {
	local settings=$1 query=$2 i args=()
	for i in $(seq $((RUNS + 1))); do
		args+=(-c "$query")
	done
	psql -c "$settings" -c '\timing on' "${args[@]}" |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n "$RUNS" | sort -g |
		awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]}'
}

# once, without warm-up: for native plans that take minutes
time_once() {
	psql -c "$1" -c '\timing on' -c "$2" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}

# plan_of SETTINGS QUERY -> what ran: "GpuJoin agg, <algorithm>, <backend>",
# "Agg over GpuJoin", or "native"
plan_of() {
	local plan
	plan=$(psql -c "$1" -c "EXPLAIN (ANALYZE, COSTS OFF) $2")
	[ -n "${EXPLAIN:-}" ] && explains="$explains
### $3
$plan
"
	if grep -q 'GPU Aggregates' <<<"$plan"; then
		printf 'GpuJoin agg, %s, %s' \
			"$(sed -n 's/^ *Algorithm: //p' <<<"$plan" | head -1)" \
			"$(sed -n 's/^ *Backend: //p' <<<"$plan" | head -1)"
	elif grep -q 'GpuJoin' <<<"$plan"; then
		echo "Agg over GpuJoin"
	else
		echo "native"
	fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.0fx", b / a}'; }
scaled() { awk -v n="$1" -v s="$SCALE" 'BEGIN {printf "%d", n * s}'; }

row() {
	echo "| $1 | $2 | $3 | $4 | $5 | $6 |"
	[ -z "${OUT_TSV:-}" ] || printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" >>"$OUT_TSV"
}

explains=""
[ -z "${OUT_TSV:-}" ] || printf 'query\tsize\tGpuJoin ms\tplan\tnative ms\tspeedup\n' >"$OUT_TSV"
echo "| query | size | GpuJoin ms | plan | native ms | speedup |"
echo "| --- | --- | --- | --- | --- | --- |"

if [[ dominance =~ $ONLY ]]; then
	Q='SELECT count(*) FROM t1 JOIN t2 ON t1.a < t2.a AND t1.b > t2.b'
	dom_tables() {
		psql >/dev/null <<SQL
DROP TABLE IF EXISTS t1, t2;
SELECT setseed(0.42);
CREATE TABLE t1 AS SELECT (random() * 1e9)::int AS a, (random() * 1e9)::int AS b FROM generate_series(1, $1);
CREATE TABLE t2 AS SELECT (random() * 1e9)::int AS a, (random() * 1e9)::int AS b FROM generate_series(1, $1);
VACUUM ANALYZE t1, t2;
SQL
	}
	dom_tables "$DOM_NATIVE_N"
	native_small=$(time_once "$NATIVE" "$Q")
	for n in $DOM_SIZES; do
		dom_tables "$n"
		if [ "$n" -le "$DOM_NATIVE_N" ]; then
			native=$(time_once "$NATIVE" "$Q")
			shown=$native
		else
			native=$(awk -v t="$native_small" -v n="$n" -v m="$DOM_NATIVE_N" \
				'BEGIN {printf "%.0f", t * (n / m) * (n / m)}')
			shown="~$native (extrapolated from $DOM_NATIVE_N)"
		fi
		t=$(time_query "$GPU" "$Q")
		row dominance "$n x $n" "$t" "$(plan_of "$GPU" "$Q" "dominance $n")" "$shown" "$(ratio "$t" "$native")"
		if [ "$n" -le "$NODOM_MAX" ]; then
			t=$(time_query "$GPU; $NODOM" "$Q")
			row "dominance, enable_dominance off" "$n x $n" "$t" \
				"$(plan_of "$GPU; $NODOM" "$Q" "dominance off $n")" "$shown" "$(ratio "$t" "$native")"
		fi
	done
fi

if [[ equi-group =~ $ONLY ]]; then
	F=$(scaled "$EQUI_F")
	D=$(scaled "$EQUI_D")
	Q='SELECT d.k % 100, sum(f.v * d.w), count(*) FROM f JOIN d ON f.k = d.k GROUP BY 1'
	psql >/dev/null <<SQL
DROP TABLE IF EXISTS f, d;
SELECT setseed(0.42);
CREATE TABLE d AS SELECT g AS k, (random() * 100)::int AS w FROM generate_series(1, $D) g;
CREATE TABLE f AS SELECT (1 + random() * ($D - 1))::int AS k, (random() * 100)::int AS v
  FROM generate_series(1, $F) g;
VACUUM ANALYZE f, d;
SQL
	native=$(time_query "$NATIVE" "$Q")
	t=$(time_query "$GPU" "$Q")
	row equi-group "$F x $D" "$t" "$(plan_of "$GPU" "$Q" "equi-group")" "$native" "$(ratio "$t" "$native")"
fi

if [[ band-group =~ $ONLY ]]; then
	Q='SELECT r.g, count(*), sum(s.x) FROM r JOIN s ON s.t BETWEEN r.t - 5 AND r.t + 5 GROUP BY r.g'
	psql >/dev/null <<SQL
DROP TABLE IF EXISTS r, s;
SELECT setseed(0.42);
CREATE TABLE r AS SELECT (g % 100)::int AS g, (random() * $BAND_N)::int AS t FROM generate_series(1, $BAND_N) g;
CREATE TABLE s AS SELECT (random() * 1000)::int AS x, (random() * $BAND_N)::int AS t FROM generate_series(1, $BAND_N) g;
CREATE INDEX ON s (t);
VACUUM ANALYZE r, s;
SQL
	native=$(time_query "$NATIVE" "$Q")
	t=$(time_query "$GPU" "$Q")
	row band-group "$BAND_N x $BAND_N" "$t" "$(plan_of "$GPU" "$Q" "band-group")" "$native" "$(ratio "$t" "$native")"
fi

if [[ theta-group =~ $ONLY ]]; then
	Q='SELECT s2.g, count(*), min(r2.a) FROM r2 JOIN s2 ON r2.a < s2.a GROUP BY s2.g'
	theta_tables() {
		psql >/dev/null <<SQL
DROP TABLE IF EXISTS r2, s2;
SELECT setseed(0.42);
CREATE TABLE r2 AS SELECT (random() * 1e9)::int AS a FROM generate_series(1, $1);
CREATE TABLE s2 AS SELECT (g % 10)::int AS g, (random() * 1e9)::int AS a FROM generate_series(1, $1) g;
VACUUM ANALYZE r2, s2;
SQL
	}
	theta_tables "$THETA_NATIVE_N"
	native=$(time_once "$NATIVE" "$Q")
	shown=$native
	if [ "$THETA_N" -gt "$THETA_NATIVE_N" ]; then
		native=$(awk -v t="$native" -v n="$THETA_N" -v m="$THETA_NATIVE_N" \
			'BEGIN {printf "%.0f", t * (n / m) * (n / m)}')
		shown="~$native (extrapolated from $THETA_NATIVE_N)"
		theta_tables "$THETA_N"
	fi
	t=$(time_query "$GPU" "$Q")
	row theta-group "$THETA_N x $THETA_N" "$t" "$(plan_of "$GPU" "$Q" "theta-group")" "$shown" "$(ratio "$t" "$native")"
fi

[ -z "${EXPLAIN:-}" ] || printf '%s\n' "$explains"
