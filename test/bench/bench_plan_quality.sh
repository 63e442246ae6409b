#!/bin/bash
# test/bench/bench_plan_quality.sh: does the planner pick GpuJoin where it
# pays, and only there?  (issue 35, item 1)
#
# What it measures: for each join shape of SHAPES below (equi, band and
# inequality joins in the forms people write them; inner, left, semi, anti;
# aggregates with and without GROUP BY; rows to the client; ORDER BY ...
# LIMIT; selective filters; index lookups with few outer rows; a fact table
# partitioned in four (fp, f's rows by id: an Append under the join); parallel
# and serial), three timings of the same SQL:
#
#   default  gpujoin as the server is configured: the plan the costs pick
#   native   SET gpujoin.enabled = off: PostgreSQL's own best plan
#   forced   gpujoin.enabled = on and enable_nestloop/hashjoin/mergejoin =
#            off (as gj_force() in sql/setup.sql, run_bench.sh): GpuJoin
#            wherever the planner is offered it
#
# How: each (shape, mode) is one psql session (as run_bench.sh): the shape's
# SETs and the mode's, EXPLAIN (COSTS OFF) for the plan, a warm-up EXPLAIN
# (ANALYZE, TIMING OFF), then RUNS runs timed by psql's \timing (no per-node
# instrumentation); the median is reported.  Shapes that return many rows
# run as \copy (...) TO /dev/null, so the rows do travel to the client.
# Every statement runs under statement_timeout = TIMEOUT_S: a native plan
# that is a nested loop over all pairs is not waited for, it shows
# "timeout" (a warm-up that times out skips the timed runs), and a timed-out
# run counts as slower than any finished one.
#
# Per shape it prints the plan the default picked ("Parallel GpuJoin hash",
# "GpuJoin Anti sortmerge +agg", "Hash Join", "Nested Loop (index)", ...: the
# top join node; for GpuJoin its join type, the Algorithm: line, "+agg" when
# the aggregates run inside it), the three times, default/native,
# forced/native, and a flag:
#
#   SLOWER   the default plan has a GpuJoin and takes more than 1.1 x native
#            (or timed out where native did not)
#   MISSED   the default plan has no GpuJoin, though forced (a GpuJoin plan)
#            takes less than 0.67 x native (or native timed out) and less
#            than 0.67 x the default plan: a GpuJoin would have won by that
#            margin over what the planner picked.  Where the default is a
#            native plan faster than PostgreSQL's own pick (gpujoin offers
#            the band index nested loop at its real cost, and PostgreSQL
#            alone may prefer a slower parallel plan), a GpuJoin faster than
#            native but slower than the default was not missed: the flag
#            says "ok (default beats GpuJoin)".
#
# and at the end the two counts, as the last line: "slower = N, missed = N".
# The table also goes to $OUTDIR/plan_quality.md and plan_quality.tsv, the
# psql sessions to $OUTDIR/run.log.
#
# Data (schema gpujoin_plan; setseed(0.42)), sizes by PROFILE times SCALE:
#   f(id int8 pk, k int4, v float8, g int4)  x  d(k int4 pk, w float8, c int4)
#       equi joins; f.k uniform over 1.2 x |d|, so a sixth of f has no match
#   r(id pk, t int4, a, b)  x  s(id, t, a, b), btree on s.t: band joins +-50,
#       about one match per row (t uniform over [0, 100 |r|])
#   rb, sb: as r, s with t int8 and no index (native: all pairs)
#   rq, sq: as r, s, smaller: inequality and non-band joins (all pairs)
#
#              f       d       r = s   rb = sb  rq      sq
#   cpu        1M      100k    100k    200k     5k      20k   (2-core machine,
#                                                             about 10 minutes)
#   gpu        10M     1M      200k    1M       250k    1M    (GPU machine;
#                                       native plans over all pairs time out:
#                                       expect 20-30 minutes, split by ONLY)
#
# Environment:
#   PROFILE    cpu | gpu                                      default cpu
#   SCALE      multiplies every size                          default 1
#   RUNS       timed runs per (shape, mode), median           default 3
#   TIMEOUT_S  statement_timeout of every run    default 10 (cpu), 30 (gpu)
#   ONLY       extended regexp: only the shapes whose name matches
#   DEVICE     cpu | cuda | auto: SET gpujoin.device in the default and forced
#              sessions (needs a superuser); default: the server's setting
#   OUTDIR     where plan_quality.md, plan_quality.tsv, run.log go
#                                                  default bench_out/plan-<date>
#   KEEP_DATA  1: keep the schema at the end and reuse it when PROFILE and
#              sizes match (default 0: generated anew, dropped at the end)
#   PARALLEL   max_parallel_workers_per_gather of the throwaway cluster
#              (default 2)
#
# With PGHOST or PGPORT set it uses that server (database PGDATABASE or
# postgres; gpujoin installed there, preloaded or loadable); otherwise it
# starts a throwaway cluster (test/lib/cluster.sh, PG_CONFIG from the
# environment) with GPUJOIN_CLUSTER_CONF as extra settings (PROFILE=cpu
# default: "gpujoin.device = cpu").  For example:
#
#   SCALE=0.05 RUNS=1 test/bench/bench_plan_quality.sh       # smoke test
#   PROFILE=gpu OUTDIR=$OUT/plan test/bench/bench_plan_quality.sh
set -u
cd "$(dirname "$0")/../.."

PROFILE=${PROFILE:-cpu}
SCALE=${SCALE:-1}
RUNS=${RUNS:-3}
ONLY=${ONLY:-}
DEVICE=${DEVICE:-}
KEEP_DATA=${KEEP_DATA:-0}
PARALLEL=${PARALLEL:-2}
OUTDIR=${OUTDIR:-bench_out/plan-$(date +%Y%m%d-%H%M%S)}

case $PROFILE in
cpu)
	sizes="1000000 100000 100000 200000 5000 20000"
	TIMEOUT_S=${TIMEOUT_S:-10}
	;;
gpu)
	sizes="10000000 1000000 200000 1000000 250000 1000000"
	TIMEOUT_S=${TIMEOUT_S:-30}
	;;
*)
	echo "PROFILE must be cpu or gpu" >&2
	exit 1
	;;
esac
# every size times SCALE, at least 10 rows
read -r F_N D_N R_N RB_N RQ_N SQ_N <<<"$(for n in $sizes; do
	awk -v n="$n" -v s="$SCALE" 'BEGIN { x = int(n * s); printf "%d ", (x < 10 ? 10 : x) }'
done)"
case "$DEVICE" in
"" | cpu | cuda | auto) ;;
*)
	echo "DEVICE must be cpu, cuda or auto" >&2
	exit 1
	;;
esac

# The shapes, one a line: name | SETs for all three modes (- for none) | SQL.
# SQL starting with "ROWS: " returns its rows to the client (\copy ... TO
# /dev/null).  Serial variants set max_parallel_workers_per_gather = 0; the
# others run with the server's setting.
BAND="s.t BETWEEN r.t - 50 AND r.t + 50"
SHAPES=$(
	cat <<EOF
equi_count          | - | SELECT count(*) FROM f JOIN d ON f.k = d.k
equi_sum            | - | SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k
equi_sum_serial     | SET max_parallel_workers_per_gather = 0 | SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k
equi_sum_dim_outer  | - | SELECT sum(f.v * d.w) FROM d JOIN f ON d.k = f.k
equi_avg_serial     | SET max_parallel_workers_per_gather = 0 | SELECT avg(f.v), avg(d.w) FROM f JOIN d ON f.k = d.k
equi_group_d        | - | SELECT d.c % 100, sum(f.v * d.w) FROM f JOIN d ON f.k = d.k GROUP BY d.c % 100
equi_group_f        | - | SELECT f.g, avg(f.v * d.w) FROM f JOIN d ON f.k = d.k GROUP BY f.g
equi_group_f_serial | SET max_parallel_workers_per_gather = 0 | SELECT f.g, avg(f.v * d.w) FROM f JOIN d ON f.k = d.k GROUP BY f.g
equi_rows           | - | ROWS: SELECT f.id, f.v, d.w FROM f JOIN d ON f.k = d.k WHERE f.v < 10
equi_order_limit    | - | SELECT f.id, f.v * d.w FROM f JOIN d ON f.k = d.k ORDER BY f.v * d.w DESC, f.id LIMIT 10
equi_filter_dc      | - | SELECT count(*), sum(f.v) FROM f JOIN d ON f.k = d.k WHERE d.c = 7
equi_index_few      | - | SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k WHERE f.id < 100
equi_left           | - | SELECT count(*), count(d.k) FROM f LEFT JOIN d ON f.k = d.k
equi_semi           | - | SELECT count(*) FROM d WHERE EXISTS (SELECT 1 FROM f WHERE f.k = d.k)
equi_anti           | - | SELECT count(*) FROM f WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.k = f.k)
equi_part_count     | - | SELECT count(*) FROM fp JOIN d ON fp.k = d.k
equi_part_sum       | - | SELECT sum(fp.v * d.w) FROM fp JOIN d ON fp.k = d.k
band_between        | - | SELECT count(*) FROM r JOIN s ON $BAND
band_between_serial | SET max_parallel_workers_per_gather = 0 | SELECT count(*) FROM r JOIN s ON $BAND
band_between_rev    | - | SELECT count(*) FROM s JOIN r ON r.t BETWEEN s.t - 50 AND s.t + 50
band_abs            | - | SELECT count(*) FROM r JOIN s ON abs(r.t - s.t) <= 50
band_ge_le          | - | SELECT count(*) FROM r JOIN s ON s.t >= r.t - 50 AND s.t <= r.t + 50
band_plus_minus     | - | SELECT count(*) FROM r JOIN s ON r.t + 50 >= s.t AND r.t - 50 <= s.t
band_diff_between   | - | SELECT count(*) FROM rq r JOIN sq s ON r.t - s.t BETWEEN -50 AND 50
band_sum            | - | SELECT sum(r.a + s.b) FROM r JOIN s ON $BAND
band_group_r        | - | SELECT r.a % 100, count(*) FROM r JOIN s ON $BAND GROUP BY r.a % 100
band_group_s        | - | SELECT s.b % 100, avg(s.a - r.a) FROM r JOIN s ON $BAND GROUP BY s.b % 100
band_wide           | - | SELECT count(*) FROM r JOIN s ON s.t BETWEEN r.t - 5000 AND r.t + 5000
band_left           | - | SELECT count(*), count(s.id) FROM r LEFT JOIN s ON $BAND
band_semi           | - | SELECT count(*) FROM r WHERE EXISTS (SELECT 1 FROM s WHERE $BAND)
band_anti           | - | SELECT count(*) FROM r WHERE NOT EXISTS (SELECT 1 FROM s WHERE $BAND)
band_rows           | - | ROWS: SELECT r.id, s.id, s.t - r.t FROM r JOIN s ON $BAND
band_order_limit    | - | SELECT r.id, s.id FROM r JOIN s ON $BAND ORDER BY abs(s.t - r.t), r.id, s.id LIMIT 10
band_filter_r       | - | SELECT count(*) FROM r JOIN s ON $BAND WHERE r.a < 1000
band_index_few      | - | SELECT count(*) FROM r JOIN s ON $BAND WHERE r.id < 100
band_noindex        | - | SELECT count(*) FROM rb r JOIN sb s ON $BAND
band_noindex_serial | SET max_parallel_workers_per_gather = 0 | SELECT sum(s.a - r.a) FROM rb r JOIN sb s ON $BAND
ineq_lt             | - | SELECT count(*) FROM rq r JOIN sq s ON r.a < s.a
ineq_gt_rev         | - | SELECT count(*) FROM sq s JOIN rq r ON s.a > r.a
three_qual          | - | SELECT count(*) FROM rq r JOIN sq s ON r.a < s.a AND r.b > s.b AND r.a + s.b > 0
three_qual_serial   | SET max_parallel_workers_per_gather = 0 | SELECT count(*) FROM rq r JOIN sq s ON r.a < s.a AND r.b > s.b AND r.a + s.b > 0
three_qual_group    | - | SELECT r.t % 10, count(*) FROM rq r JOIN sq s ON r.a < s.a AND r.b > s.b AND r.a + s.b > 0 GROUP BY r.t % 10
EOF
)

mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/run.log
: >"$LOG"

conf=${GPUJOIN_CLUSTER_CONF-}
[ "$PROFILE" = cpu ] && [ -z "$conf" ] && conf="gpujoin.device = cpu"
. test/lib/bench_server.sh
bench_server "max_parallel_workers_per_gather = $PARALLEL
$conf"

bench_modes gpujoin_plan || exit 1

# The data.  Each r-like table gets its own t spread, [0, 100 n], so the band
# +-50 matches about one row of the other side per row at every size.
SIG="profile=$PROFILE f=$F_N d=$D_N r=$R_N rb=$RB_N rq=$RQ_N sq=$SQ_N fp=4"
have=$(psql_run -At -c "SELECT obj_description('gpujoin_plan'::regnamespace)" 2>/dev/null)
if [ "$KEEP_DATA" = 1 ] && [ "$have" = "$SIG" ]; then
	echo "reusing the data of schema gpujoin_plan ($SIG)"
else
	echo "generating the data ($SIG)"
	rs_table() { # name rows t-type
		echo "CREATE TABLE $1 AS SELECT g AS id, (random() * 100 * $2)::$3 AS t,
  (random() * 2000000 - 1000000)::int4 AS a, (random() * 2000000 - 1000000)::int4 AS b
  FROM generate_series(1, $2) g;"
	}
	psql_run -v ON_ERROR_STOP=1 >>"$LOG" 2>&1 <<SQL || {
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS gpujoin_plan CASCADE;
CREATE SCHEMA gpujoin_plan;
SET search_path = gpujoin_plan;
SELECT setseed(0.42);
CREATE TABLE d AS SELECT g::int4 AS k, (g % 10)::float8 AS w, (g % 1000)::int4 AS c
  FROM generate_series(0, $D_N - 1) g;
ALTER TABLE d ADD PRIMARY KEY (k);
CREATE TABLE f AS SELECT g::int8 AS id, (random() * ($D_N * 1.2 - 1))::int4 AS k,
  (g % 100)::float8 AS v, (g % 50)::int4 AS g
  FROM generate_series(1, $F_N) g;
ALTER TABLE f ADD PRIMARY KEY (id);
CREATE TABLE fp (LIKE f) PARTITION BY RANGE (id);
CREATE TABLE fp1 PARTITION OF fp FOR VALUES FROM (MINVALUE) TO ($F_N / 4);
CREATE TABLE fp2 PARTITION OF fp FOR VALUES FROM ($F_N / 4) TO ($F_N / 2);
CREATE TABLE fp3 PARTITION OF fp FOR VALUES FROM ($F_N / 2) TO ($F_N / 4 * 3);
CREATE TABLE fp4 PARTITION OF fp FOR VALUES FROM ($F_N / 4 * 3) TO (MAXVALUE);
INSERT INTO fp SELECT * FROM f;
$(rs_table r "$R_N" int4)
$(rs_table s "$R_N" int4)
ALTER TABLE r ADD PRIMARY KEY (id);
CREATE INDEX ON s (t);
$(rs_table rb "$RB_N" int8)
$(rs_table sb "$RB_N" int8)
$(rs_table rq "$RQ_N" int4)
$(rs_table sq "$SQ_N" int4)
VACUUM ANALYZE;
COMMENT ON SCHEMA gpujoin_plan IS '$SIG';
SQL
		echo "data generation failed (see $LOG)" >&2
		exit 1
	}
fi
bench_settle gpujoin_plan

# The plan in a few words, from EXPLAIN output on stdin: the top join node
# ("Parallel" when a Gather is above it), for GpuJoin its join type,
# algorithm and "+agg" (aggregates inside), for a native nested loop
# "(index)" when an index condition is under it (an index lookup).
plan_label() {
	awk '
	/->  Gather|^ *Gather/ && !found { gather = 1 }
	!found && /Custom Scan \(GpuJoin\)/ { found = 1; gj = 1; label = "GpuJoin"; next }
	!found && /(Hash|Merge)( [A-Za-z]+)* Join|Nested Loop( [A-Za-z]+ Join)?/ {
		match($0, /(Parallel )?(Hash|Merge)( [A-Za-z]+)* Join|Nested Loop( [A-Za-z]+ Join)?/)
		label = substr($0, RSTART, RLENGTH); sub(/^Parallel /, "", label)
		found = 1; nl = (label ~ /Nested Loop/); next
	}
	gj && /^ *Join Type: / { sub(/.*Join Type: /, ""); jt = $0 }
	gj && /^ *Algorithm: / && alg == "" { sub(/.*Algorithm: /, ""); alg = $0 }
	gj && /^ *GPU Aggregates: / { agg = 1 }
	gj && /->  / { gj = 0 }
	nl && /^ *(Index Cond|Recheck Cond): / { idx = 1 }
	END {
		if (!found) { print "no join"; exit }
		out = (gather ? "Parallel " : "") label
		if (label == "GpuJoin") {
			if (jt != "" && jt != "Inner") out = out " " jt
			if (alg != "") out = out " " alg
			if (agg) out = out " +agg"
		}
		if (idx) out = out " (index)"
		print out
	}'
}

# measure NAME SETS SQL MODE: one psql session; sets M_STATUS (ok|timeout|
# error), M_MS (median), M_PLAN.
measure() {
	local name=$1 sets=$2 sql=$3 mode=$4 settings out stmt
	case $mode in
	default) settings=$DEFAULT_SETTINGS ;;
	native) settings=$NATIVE_SETTINGS ;;
	forced) settings=$FORCED_SETTINGS ;;
	esac
	if [ "${sql#ROWS: }" != "$sql" ]; then
		sql=${sql#ROWS: }
		stmt="\\copy ($sql) TO /dev/null"
	else
		stmt="$sql;"
	fi
	[ "$sets" = "-" ] && sets=""
	out=$(
		{
			printf '%s\n%s\n%s\n' "$PRELUDE" "$settings" "${sets:+$sets;}"
			echo "EXPLAIN (COSTS OFF) $sql;"
			echo '\echo @@warmup'
			echo "EXPLAIN (ANALYZE, TIMING OFF) $sql;"
			echo '\echo @@runs'
			echo '\timing on'
			for _ in $(seq "$RUNS"); do echo "$stmt"; done
		} | psql_run -v ON_ERROR_STOP=1 2>&1
	)
	printf '== %s %s\n%s\n' "$name" "$mode" "$out" >>"$LOG"
	M_PLAN=$(printf '%s\n' "$out" | sed '/^@@warmup/,$d' | plan_label)
	M_MS=""
	if printf '%s\n' "$out" | grep -q 'canceling statement due to statement timeout'; then
		M_STATUS=timeout
	elif printf '%s\n' "$out" | grep -q 'ERROR:'; then
		M_STATUS=error
	else
		M_MS=$(printf '%s\n' "$out" | sed -n '/^@@runs/,$p' | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -g |
			awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else if (NR) printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
		M_STATUS=ok
		[ -z "$M_MS" ] && M_STATUS=error
	fi
}

TSV=$OUTDIR/plan_quality.tsv
printf 'shape\tsets\tsql\tdefault_plan\tnative_plan\tforced_plan\tdefault_ms\tnative_ms\tforced_ms\tdefault_status\tnative_status\tforced_status\n' >"$TSV"
echo "profile $PROFILE, scale $SCALE: f $F_N x d $D_N, r = s $R_N (index on s.t), rb = sb $RB_N, rq $RQ_N x sq $SQ_N;"
echo "runs $RUNS, timeout ${TIMEOUT_S}s; results in $OUTDIR"
n_shapes=0
while IFS='|' read -r name sets sql; do
	name=$(echo "$name" | xargs)
	sets=$(echo "$sets" | sed 's/^ *//; s/ *$//')
	sql=$(echo "$sql" | sed 's/^ *//; s/ *$//')
	[ -n "$name" ] || continue
	[ -z "$ONLY" ] || echo "$name" | grep -Eq -- "$ONLY" || continue
	row=("$name" "$sets" "$sql")
	plans=() times=() stats=()
	for mode in default native forced; do
		measure "$name" "$sets" "$sql" "$mode"
		plans+=("$M_PLAN")
		times+=("$M_MS")
		stats+=("$M_STATUS")
	done
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${row[@]}" "${plans[@]}" "${times[@]}" "${stats[@]}" >>"$TSV"
	printf '%-20s %-28s default %9s  native %9s  forced %9s  (%s)\n' "$name" "${plans[0]}" \
		"${times[0]:-${stats[0]}}" "${times[1]:-${stats[1]}}" "${times[2]:-${stats[2]}}" "forced: ${plans[2]}" >&2
	n_shapes=$((n_shapes + 1))
done <<<"$SHAPES"

# The table, the flags and the counts.  A timed-out run is slower than any
# finished one: its ratio is written "> x" (or "< x" when native timed out),
# taking TIMEOUT_S for its time.
MD=$OUTDIR/plan_quality.md
{
	echo "# GpuJoin plan quality, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "- machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores$(nvidia-smi -L 2>/dev/null | head -1 | sed 's/^/; /')"
	echo "- server: $(psql_run -At -c "SELECT version()" | cut -d, -f1)"
	echo "- settings: $(psql_run -At -F' = ' -c "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ('max_parallel_workers_per_gather', 'work_mem', 'gpujoin.device', 'jit') ORDER BY name" | paste -sd, - | sed 's/,/, /g')${DEVICE:+; default and forced: gpujoin.device = $DEVICE}"
	echo "- profile $PROFILE, scale $SCALE: f $F_N x d $D_N; r = s $R_N (btree on s.t); rb = sb $RB_N; rq $RQ_N x sq $SQ_N"
	echo "- median of $RUNS runs after a warm-up, psql \\timing, ms; statement_timeout ${TIMEOUT_S}s"
	echo
	echo "| shape | default plan | default | native | forced | default/native | forced/native | flag | native plan | forced plan |"
	echo "| --- | --- | --: | --: | --: | --: | --: | --- | --- | --- |"
	awk -F'\t' -v tmo="$((TIMEOUT_S * 1000))" '
	function cell(st, ms) { return st == "ok" ? ms : st }
	function fmt(x) { return sprintf(x < 0.1 ? "%.2g" : x < 10 ? "%.2f" : "%.0f", x) }
	# ratio of x to native; "" when it cannot be told
	function ratio(sx, x, sn, n) {
		if (sx == "ok" && sn == "ok") return n > 0 ? fmt(x / n) : ""
		if (sx == "ok" && sn == "timeout") return "< " fmt(x / tmo)
		if (sx == "timeout" && sn == "ok") return "> " fmt(tmo / n)
		return ""
	}
	# is x less than f times native?  1 yes, 0 no, -1 unknown
	function less(sx, x, sn, n, f) {
		if (sx == "ok" && sn == "ok") return (x < f * n)
		if (sx == "ok" && sn == "timeout") return 1
		if (sx == "timeout" && sn == "ok") return 0
		return -1
	}
	NR == 1 { next }
	{
		dp = $4; np = $5; fp = $6; dms = $7; nms = $8; fms = $9; ds = $10; ns = $11; fs = $12
		flag = "ok"
		if (dp ~ /GpuJoin/) {
			if (less(ds, dms, ns, nms, 1.1) == 0) { flag = "SLOWER"; slower++ }
		} else if (fp ~ /GpuJoin/ && less(fs, fms, ns, nms, 0.67) == 1) {
			if (less(fs, fms, ds, dms, 0.67) != 0) { flag = "MISSED"; missed++ }
			else flag = "ok (default beats GpuJoin)"
		}
		if (ds == "error" || ns == "error" || fs == "error") flag = flag " (error)"
		else if (fp !~ /GpuJoin/) flag = flag " (no GpuJoin path)"
		else if (less(ds, dms, ns, nms, 1.1) == -1 && less(fs, fms, ns, nms, 0.67) == -1) flag = flag " (all timed out)"
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, dp, cell(ds, dms), cell(ns, nms), cell(fs, fms),
			ratio(ds, dms, ns, nms), ratio(fs, fms, ns, nms), flag, np, fp
	}
	END {
		print ""
		printf "slower = %d, missed = %d\n", slower, missed
	}' "$TSV"
} >"$MD"

[ "$KEEP_DATA" = 1 ] || psql_run -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS gpujoin_plan CASCADE" >/dev/null
echo
cat "$MD"
