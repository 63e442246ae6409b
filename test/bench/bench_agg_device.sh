#!/bin/bash
# test/bench/bench_agg_device.sh: aggregates over a two-table join reduced in
# the backend (GpuJoin's aggregate node: "GPU Aggregates" in EXPLAIN) against
# PostgreSQL's own plan, as a markdown table.
#
#   dominance    SELECT count(*) FROM t1 JOIN t2 ON t1.a < t2.a AND t1.b > t2.b
#                N x N random int4 pairs (a, b) in [0, 1e9], N in DOM_SIZES
#                (default "10000 100000 1000000"); and, for N up to NODOM_MAX
#                (default 100000; 0: never), once more with
#                gpujoin.enable_dominance = off (the row
#                "dominance (enable_dominance off)")
#   equi-group   SELECT d.k % 100, sum(f.v * d.w), count(*) FROM f JOIN d
#                ON f.k = d.k GROUP BY 1
#                f: EQUI_F rows (default 10000000), k uniform in 1..D,
#                v in 0..100; d: EQUI_D rows (default 1000000), k = 1..D,
#                w in 0..100; both times SCALE (default 1: SCALE=0.1 is
#                1M x 100k)
#   band-group   SELECT r.g, count(*), sum(s.x) FROM r JOIN s
#                ON s.t BETWEEN r.t - 5 AND r.t + 5 GROUP BY r.g
#                BAND_N x BAND_N (default 1000000), t uniform in
#                [0, 1.1 BAND_N] (about 10 matches a row), g in 0..99;
#                s.t has a btree index, which PostgreSQL's plan can use
#   theta-group  SELECT s2.g, count(*), min(r2.a) FROM r2 JOIN s2
#                ON r2.a < s2.a GROUP BY s2.g
#                THETA_N x THETA_N (default 100000), a in [0, 1e9], g in 0..9
#
# The tables are made with setseed(0.42) and VACUUM ANALYZE.  The output is
# one line of settings (GPUJOIN_SETTINGS, gpujoin.device and the backend it
# selects, PARALLEL, RUNS), then the table.  Each row of the table: the
# GpuJoin time (settings GPUJOIN_SETTINGS, default
# 'SET gpujoin.enable_aggregate = on'; the planner picks the plan), the native
# time (SET gpujoin.enabled = off), the speedup (native / GpuJoin), the plan
# GpuJoin got and whether both plans returned the same rows.  The plan comes
# from the EXPLAIN (ANALYZE, FORMAT TEXT) of the GpuJoin session:
# "GpuJoin agg, <Algorithm>, <Backend>, reduced in backend: <Pairs Reduced in
# Backend / Pairs Aggregated>" when the top node is GpuJoin's aggregate node,
# "<top node> over GpuJoin agg, ..." when that node is lower down,
# "Agg over GpuJoin, ..." when an Agg sums the joined rows GpuJoin returns, and
# "native (<top node>, <join>)" when the planner kept PostgreSQL's plan.
#
# Timing: each measurement is one warm psql session.  GpuJoin: the EXPLAIN
# ANALYZE is its warm-up run (CUDA initialisation, caches), then RUNS runs
# (default 3); native: NATIVE_RUNS runs (default RUNS), no warm-up.  The table
# shows the median of psql's \timing (query results go to a file, not the
# terminal).  Native plans that would run for hours are timed at a smaller size
# and extrapolated quadratically, marked "~... (extrapolated from N)": the
# dominance join above DOM_NATIVE_N rows a side (default NATIVE_N, else 10000),
# the theta join above THETA_NATIVE_N (default NATIVE_N, else 20000); their
# results are then not compared ("same result" -).
#
# The throwaway cluster (test/lib/cluster.sh; the extension must be installed
# in the PostgreSQL of PG_CONFIG) runs with max_parallel_workers_per_gather =
# PARALLEL (default 2; 8 on the GPU machine), jit = off, and the
# postgresql.conf lines of GPUJOIN_CLUSTER_CONF (e.g. "gpujoin.device = cuda").
# ONLY='regex' (extended) runs the queries whose name matches; OUT_TSV=file
# also writes the rows as TSV (raw numbers, pair counts in their own columns);
# EXPLAIN=1 prints each GpuJoin EXPLAIN ANALYZE after the table.
#
#   DOM_SIZES="2000 5000" NATIVE_N=2000 SCALE=0.01 BAND_N=20000 THETA_N=3000 \
#     RUNS=1 test/bench/bench_agg_device.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
NATIVE_RUNS=${NATIVE_RUNS:-$RUNS}
PARALLEL=${PARALLEL:-2}
SCALE=${SCALE:-1}
DOM_SIZES=${DOM_SIZES:-"10000 100000 1000000"}
DOM_NATIVE_N=${DOM_NATIVE_N:-${NATIVE_N:-10000}}
NODOM_MAX=${NODOM_MAX:-100000}
EQUI_F=${EQUI_F:-10000000}
EQUI_D=${EQUI_D:-1000000}
BAND_N=${BAND_N:-1000000}
THETA_N=${THETA_N:-100000}
THETA_NATIVE_N=${THETA_NATIVE_N:-${NATIVE_N:-20000}}
GPUJOIN_SETTINGS=${GPUJOIN_SETTINGS:-'SET gpujoin.enable_aggregate = on'}
NATIVE='SET gpujoin.enabled = off'
ONLY=${ONLY:-}

for v in RUNS NATIVE_RUNS PARALLEL DOM_NATIVE_N NODOM_MAX EQUI_F EQUI_D BAND_N THETA_N THETA_NATIVE_N $DOM_SIZES; do
	case $v in
		[A-Z]*) val=${!v} ;;
		*) val=$v ;;
	esac
	[[ $val =~ ^[0-9]+$ ]] || { echo "$0: $v must be a whole number (got '$val')" >&2; exit 2; }
done
[[ $SCALE =~ ^[0-9]*\.?[0-9]+$ ]] || { echo "$0: SCALE must be a number (got '$SCALE')" >&2; exit 2; }
if [ "$RUNS" -lt 1 ] || [ "$NATIVE_RUNS" -lt 1 ]; then
	echo "$0: RUNS and NATIVE_RUNS must be at least 1" >&2
	exit 2
fi
scaled() { awk -v n="$1" -v s="$SCALE" 'BEGIN {n = int(n * s + 0.5); print (n < 1 ? 1 : n)}'; }
F=$(scaled "$EQUI_F")
D=$(scaled "$EQUI_D")

export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
WORK=$(mktemp -d /tmp/bench_agg_device.XXXXXX)
trap 'cluster_stop; rm -rf "$WORK"' EXIT
GPUJOIN_CLUSTER_CONF="${GPUJOIN_CLUSTER_CONF:-}
max_parallel_workers_per_gather = $PARALLEL
jit = off" cluster_start

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
# load SQL: run a script of CREATE TABLEs quietly (no NOTICEs from DROP)
load() { { echo 'SET client_min_messages = warning;'; cat; } | psql >/dev/null; }

wanted() { [ -z "$ONLY" ] || grep -Eq -- "$ONLY" <<<"$1"; }

# median of the "Time: x ms" lines of psql's output in file $1
median_ms() {
	sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$1" | sort -g |
		awk '{a[NR] = $1} END {if (NR == 0) exit 1; print a[int((NR + 1) / 2)]}'
}

# run_gpu LABEL QUERY [EXTRA SETTINGS]: one session with GPUJOIN_SETTINGS,
# EXPLAIN ANALYZE as the warm-up, then RUNS timed runs.  Sets G_MS, PLAN, ALG,
# BACKEND, PAIRS_AGG, PAIRS_BE; the rows returned are in $WORK/gpu.res.
run_gpu() {
	local label=$1 query=$2 settings="$GPUJOIN_SETTINGS${3:+; $3}" _ args=() top join
	for _ in $(seq "$RUNS"); do
		args+=(-c "$query")
	done
	psql -c "$settings" -c '\pset format unaligned' -c '\pset tuples_only on' \
		-c "EXPLAIN (ANALYZE, FORMAT TEXT) $query" \
		-c '\timing on' -c "\\o $WORK/gpu.res" "${args[@]}" >"$WORK/gpu.out"
	G_MS=$(median_ms "$WORK/gpu.out")
	sed '/^Time: /,$d' "$WORK/gpu.out" >"$WORK/plan"
	if [ -n "${EXPLAIN:-}" ]; then
		printf '\n### %s\n\n    %s\n' "$label" "$settings" >>"$WORK/explains"
		sed 's/^/    /' "$WORK/plan" >>"$WORK/explains"
	fi
	top=$(head -1 "$WORK/plan" | sed -E 's/^[ >-]*//; s/  \(cost=.*//; s/  \(actual .*//')
	ALG=$(sed -n 's/^ *Algorithm: //p' "$WORK/plan" | head -1)
	BACKEND=$(sed -n 's/^ *Backend: //p' "$WORK/plan" | head -1)
	PAIRS_AGG=$(sed -n 's/^ *Pairs Aggregated: //p' "$WORK/plan" | head -1)
	PAIRS_BE=$(sed -n 's/^ *Pairs Reduced in Backend: //p' "$WORK/plan" | head -1)
	if grep -q '^ *GPU Aggregates: ' "$WORK/plan"; then
		if [ "$top" = "Custom Scan (GpuJoin)" ]; then
			PLAN="GpuJoin agg, $ALG, $BACKEND"
		else
			PLAN="$top over GpuJoin agg, $ALG, $BACKEND"
		fi
		if [ -n "$PAIRS_AGG" ] && [ -n "$PAIRS_BE" ] && [ "$PAIRS_AGG" != 0 ]; then
			PLAN="$PLAN, reduced in backend: $(awk -v b="$PAIRS_BE" -v a="$PAIRS_AGG" \
				'BEGIN {p = 100 * b / a; printf (p == 100 || p < 1 ? "%.0f%%" : "%.1f%%"), p}')"
		fi
	elif grep -q 'Custom Scan (GpuJoin)' "$WORK/plan"; then
		case $top in
			*Aggregate*) PLAN="Agg over GpuJoin, $ALG, $BACKEND" ;;
			*) PLAN="$top over GpuJoin, $ALG, $BACKEND" ;;
		esac
	else
		join=$(grep -oE 'Hash Join|Merge Join|Nested Loop' "$WORK/plan" | head -1 || true)
		PLAN="native ($top${join:+, $join})"
	fi
}

# run_native QUERY: one session, NATIVE_RUNS timed runs.  Sets N_MS; the rows
# returned are in $WORK/native.res.
run_native() {
	local query=$1 _ args=()
	for _ in $(seq "$NATIVE_RUNS"); do
		args+=(-c "$query")
	done
	psql -c "$NATIVE" -c '\pset format unaligned' -c '\pset tuples_only on' \
		-c '\timing on' -c "\\o $WORK/native.res" "${args[@]}" >"$WORK/native.out"
	N_MS=$(median_ms "$WORK/native.out")
}

# same_result [NATIVE_AT]: whether both sessions returned the same rows (each
# run's copy collapsed by sort -u); "-" when the native plan ran at NATIVE_AT
same_result() {
	if [ -n "${1:-}" ]; then
		echo -
	elif cmp -s <(sort -u "$WORK/gpu.res") <(sort -u "$WORK/native.res"); then
		echo same
	else
		echo DIFFERENT
	fi
}

ms() { awk -v t="$1" 'BEGIN {printf (t < 10 ? "%.2f" : "%.1f"), t}'; }
speedup() { awk -v g="$1" -v n="$2" 'BEGIN {if (g <= 0) print "-"; else {s = n / g; printf (s < 10 ? "%.2fx" : "%.0fx"), s}}'; }
# extrapolate MS FROM_N TO_N: quadratically in the rows a side
extrapolate() { awk -v t="$1" -v m="$2" -v n="$3" 'BEGIN {printf "%.1f", t * (n / m) * (n / m)}'; }

# row NAME SIZE GPU_MS NATIVE_MS NATIVE_AT SAME: NATIVE_AT is the size the native
# plan was timed at when extrapolated, else empty
row() {
	local name=$1 size=$2 g=$3 n=$4 at=$5 same=$6 nshown sp
	if [ -n "$at" ]; then
		nshown="~$(awk -v t="$n" 'BEGIN {printf "%.0f", t}') (extrapolated from $at)"
		sp="~$(speedup "$g" "$n")"
	else
		nshown=$(ms "$n")
		sp=$(speedup "$g" "$n")
	fi
	echo "| $name | $size | $(ms "$g") | $nshown | $sp | $PLAN | $same |"
	[ -z "${OUT_TSV:-}" ] || printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$name" "$size" "$g" "$n" "$at" "$(speedup "$g" "$n" | tr -d x)" "$PLAN" \
		"$ALG" "$BACKEND" "$PAIRS_AGG" "$PAIRS_BE" "$same" >>"$OUT_TSV"
}

psql -c 'CREATE EXTENSION IF NOT EXISTS gpujoin'
selected=$(psql -At -c "SELECT string_agg(backend || coalesce(' ' || name, ''), ', ') FROM gpujoin_devices() WHERE selected")
echo "GpuJoin: $GPUJOIN_SETTINGS; gpujoin.device = $(psql -At -c 'SHOW gpujoin.device')${selected:+ ($selected)};" \
	"max_parallel_workers_per_gather = $PARALLEL; median of $RUNS (GpuJoin) / $NATIVE_RUNS (native) runs"
echo
echo "| query | size | GpuJoin ms | native ms | speedup | GpuJoin plan | same result |"
echo "| --- | --- | --: | --: | --: | --- | --- |"
[ -z "${OUT_TSV:-}" ] || printf 'query\tsize\tgpujoin_ms\tnative_ms\tnative_extrapolated_from\tspeedup\tplan\talgorithm\tbackend\tpairs_aggregated\tpairs_reduced_in_backend\tsame_result\n' >"$OUT_TSV"
: >"$WORK/explains"

if wanted dominance; then
	Q='SELECT count(*) FROM t1 JOIN t2 ON t1.a < t2.a AND t1.b > t2.b'
	dom_tables() {
		load <<SQL
DROP TABLE IF EXISTS t1, t2;
SELECT setseed(0.42);
CREATE TABLE t1 AS SELECT (random() * 1e9)::int AS a, (random() * 1e9)::int AS b FROM generate_series(1, $1);
CREATE TABLE t2 AS SELECT (random() * 1e9)::int AS a, (random() * 1e9)::int AS b FROM generate_series(1, $1);
VACUUM ANALYZE t1, t2;
SQL
	}
	native_small=""
	for n in $DOM_SIZES; do
		if [ "$n" -le "$DOM_NATIVE_N" ]; then
			dom_tables "$n"
			run_native "$Q"
			at=""
			[ "$n" != "$DOM_NATIVE_N" ] || native_small=$N_MS
		else
			if [ -z "$native_small" ]; then
				dom_tables "$DOM_NATIVE_N"
				run_native "$Q"
				native_small=$N_MS
			fi
			dom_tables "$n"
			N_MS=$(extrapolate "$native_small" "$DOM_NATIVE_N" "$n")
			at=$DOM_NATIVE_N
		fi
		run_gpu "dominance $n x $n" "$Q"
		row dominance "$n x $n" "$G_MS" "$N_MS" "$at" "$(same_result "$at")"
		if [ "$n" -le "$NODOM_MAX" ]; then
			run_gpu "dominance $n x $n, enable_dominance off" "$Q" 'SET gpujoin.enable_dominance = off'
			row "dominance (enable_dominance off)" "$n x $n" "$G_MS" "$N_MS" "$at" "$(same_result "$at")"
		fi
	done
fi

if wanted equi-group; then
	Q='SELECT d.k % 100, sum(f.v * d.w), count(*) FROM f JOIN d ON f.k = d.k GROUP BY 1'
	load <<SQL
DROP TABLE IF EXISTS f, d;
SELECT setseed(0.42);
CREATE TABLE d AS SELECT g AS k, (random() * 100)::int AS w FROM generate_series(1, $D) g;
CREATE TABLE f AS SELECT 1 + floor(random() * $D)::int AS k, (random() * 100)::int AS v
  FROM generate_series(1, $F) g;
VACUUM ANALYZE f, d;
SQL
	run_native "$Q"
	run_gpu "equi-group $F x $D" "$Q"
	row equi-group "$F x $D" "$G_MS" "$N_MS" "" "$(same_result)"
fi

if wanted band-group; then
	Q='SELECT r.g, count(*), sum(s.x) FROM r JOIN s ON s.t BETWEEN r.t - 5 AND r.t + 5 GROUP BY r.g'
	load <<SQL
DROP TABLE IF EXISTS r, s;
SELECT setseed(0.42);
CREATE TABLE r AS SELECT (g % 100)::int AS g, (random() * 1.1 * $BAND_N)::int AS t
  FROM generate_series(1, $BAND_N) g;
CREATE TABLE s AS SELECT (random() * 1000)::int AS x, (random() * 1.1 * $BAND_N)::int AS t
  FROM generate_series(1, $BAND_N) g;
CREATE INDEX ON s (t);
VACUUM ANALYZE r, s;
SQL
	run_native "$Q"
	run_gpu "band-group $BAND_N x $BAND_N" "$Q"
	row band-group "$BAND_N x $BAND_N" "$G_MS" "$N_MS" "" "$(same_result)"
fi

if wanted theta-group; then
	Q='SELECT s2.g, count(*), min(r2.a) FROM r2 JOIN s2 ON r2.a < s2.a GROUP BY s2.g'
	theta_tables() {
		load <<SQL
DROP TABLE IF EXISTS r2, s2;
SELECT setseed(0.42);
CREATE TABLE r2 AS SELECT (random() * 1e9)::int AS a FROM generate_series(1, $1);
CREATE TABLE s2 AS SELECT (g % 10)::int AS g, (random() * 1e9)::int AS a FROM generate_series(1, $1) g;
VACUUM ANALYZE r2, s2;
SQL
	}
	at=""
	if [ "$THETA_N" -gt "$THETA_NATIVE_N" ]; then
		theta_tables "$THETA_NATIVE_N"
		run_native "$Q"
		N_MS=$(extrapolate "$N_MS" "$THETA_NATIVE_N" "$THETA_N")
		at=$THETA_NATIVE_N
	fi
	theta_tables "$THETA_N"
	[ -n "$at" ] || run_native "$Q"
	run_gpu "theta-group $THETA_N x $THETA_N" "$Q"
	row theta-group "$THETA_N x $THETA_N" "$G_MS" "$N_MS" "$at" "$(same_result "$at")"
fi

[ -z "${EXPLAIN:-}" ] || cat "$WORK/explains"
