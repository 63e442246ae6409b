#!/bin/bash
# test/bench/run_bench.sh: GpuJoin against PostgreSQL's own plans, at several
# sizes, as a markdown table and a log-log plot of the speedup.
#
# For each size N in SIZES the data are generated anew (schema gpujoin_bench),
# then every query of QUERIES runs twice:
#
#   native   gpujoin.enabled = off: PostgreSQL's best plan, with parallel
#            workers as the server is configured (max_parallel_workers_per_gather)
#   gpujoin  gpujoin.enabled = on and the native join methods disabled, as
#            gj_force() in sql/setup.sql does, so GpuJoin runs wherever the
#            planner is offered it; where it is not (a join type GpuJoin does
#            not support yet) the plan column shows what ran instead
#
# Each measurement is one psql session: a warm-up EXPLAIN (ANALYZE, TIMING
# OFF), which also tells the plan, the algorithm and the backend that ran,
# then RUNS runs timed by psql's \timing (no per-node instrumentation, which
# would inflate the native nested loop); the table shows their median.
#
# Runs that would take too long are not run:
#   - a plan that is a nested loop without an index (every pair evaluated)
#     when outer x inner rows exceed NATIVE_MAX_PAIRS;
#   - any run whose join produces more than MAX_JOIN_ROWS rows (the theta
#     joins' N^2/2 rows, which both plans must form before count(*));
#   - the larger sizes of a (query, plan) that timed out (TIMEOUT_S, as
#     statement_timeout).
# The first two are extrapolated from the largest smaller size measured (in
# proportion to pairs, respectively join rows), marked "~" in the table with
# the reason in the notes.
#
# Environment:
#   SIZES    sizes N (rows of each side of the theta and band joins, of the
#            fact table; the dimension has N/10)     default "1000 10000 100000"
#   RUNS     timed runs per measurement (median)     default 3
#   QUERIES  subset of: theta_lt theta_gt theta_rows band band_idx equi
#            multikey three left anti                default all
#   DEVICE   cpu | cuda: SET gpujoin.device in the GpuJoin sessions (needs a
#            superuser); default: the server's setting
#   OUTDIR   where results.md, results.tsv, speedup.png go
#                                                    default bench_out/<date>
#   NATIVE_MAX_PAIRS (default 2e8), MAX_JOIN_ROWS (default 1e9),
#   ROWS_MAX_N (sides of the output-bound theta_rows query are cut to this,
#   default 3000), TIMEOUT_S (default 300), PARALLEL (workers per gather in the
#   cluster this script starts, default 2), WARMUP (default 1; 0 skips the
#   warm-up and takes the plan from plain EXPLAIN, without the backend).
#
# With PGHOST or PGPORT set, it uses that server (database PGDATABASE or
# postgres; gpujoin must be installed there, and preloaded or loadable);
# otherwise it starts a throwaway cluster (test/lib/cluster.sh) with
# GPUJOIN_CLUSTER_CONF as extra settings, e.g. "gpujoin.device = cuda".
set -euo pipefail
cd "$(dirname "$0")/../.."

SIZES=$(printf '%s\n' ${SIZES:-1000 10000 100000} | sort -n | uniq | paste -sd' ' -)
RUNS=${RUNS:-3}
ALL_QUERIES="theta_lt theta_gt theta_rows band band_idx equi multikey three left anti"
QUERIES=${QUERIES:-$ALL_QUERIES}
DEVICE=${DEVICE:-}
OUTDIR=${OUTDIR:-bench_out/$(date +%Y%m%d-%H%M%S)}
NATIVE_MAX_PAIRS=${NATIVE_MAX_PAIRS:-2e8}
MAX_JOIN_ROWS=${MAX_JOIN_ROWS:-1e9}
ROWS_MAX_N=${ROWS_MAX_N:-3000}
TIMEOUT_S=${TIMEOUT_S:-300}
PARALLEL=${PARALLEL:-2}
WARMUP=${WARMUP:-1}

for q in $QUERIES; do
	case " $ALL_QUERIES " in
	*" $q "*) ;;
	*)
		echo "unknown query '$q' (known: $ALL_QUERIES)" >&2
		exit 1
		;;
	esac
done
case "$DEVICE" in
"" | cpu | cuda | auto) ;;
*)
	echo "DEVICE must be cpu, cuda or auto" >&2
	exit 1
	;;
esac

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/run.log
: >"$LOG"

. test/lib/bench_server.sh
bench_server "max_parallel_workers_per_gather = $PARALLEL
${GPUJOIN_CLUSTER_CONF:-}"


# Every session: our schema, a statement timeout, gpujoin loaded.
psql_run -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS gpujoin" >/dev/null
PRELUDE="SET search_path = gpujoin_bench, public;
SET statement_timeout = '${TIMEOUT_S}s';"
if ! psql_run -At -c "SHOW gpujoin.enabled" >/dev/null 2>&1; then
	PRELUDE="LOAD 'gpujoin';
$PRELUDE"
fi
GPU_SETTINGS="SET gpujoin.enabled = on;
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;"
[ -n "$DEVICE" ] && GPU_SETTINGS="$GPU_SETTINGS
SET gpujoin.device = $DEVICE;"
NATIVE_SETTINGS="SET gpujoin.enabled = off;"
psql_run -v ON_ERROR_STOP=1 >/dev/null <<SQL || {
$PRELUDE
$GPU_SETTINGS
SQL
	echo "cannot apply the GpuJoin settings (DEVICE=$DEVICE needs a superuser)" >&2
	exit 1
}

# Generate the data for size N: theta/band sides r, s (and s_idx, the same
# rows with a btree index on t); fact (N rows) x dim (N/10) x cat (100).
# r.t, s.t are spread over [0, 100 N], so the band +-50 matches about one s
# row per r row and leaves about a third of r without a match.
gen_data() {
	local n=$1 d=$(($1 / 10 > 0 ? $1 / 10 : 1))
	psql_run -v ON_ERROR_STOP=1 >>"$LOG" 2>&1 <<SQL
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS gpujoin_bench CASCADE;
CREATE SCHEMA gpujoin_bench;
SET search_path = gpujoin_bench;
SELECT setseed(0.42);
CREATE TABLE r AS SELECT g AS id, (random() * 1000000)::int AS a, (random() * 100 * $n)::int AS t
  FROM generate_series(1, $n) g;
CREATE TABLE s AS SELECT g AS id, (random() * 1000000)::int AS a, (random() * 100 * $n)::int AS t
  FROM generate_series(1, $n) g;
CREATE TABLE s_idx AS TABLE s;
CREATE INDEX ON s_idx (t);
CREATE TABLE dim AS SELECT g AS k, g / 100 AS k1, g % 100 AS k2, (g % 10)::float8 AS w, g % 100 AS c
  FROM generate_series(0, $d - 1) g;
CREATE TABLE fact AS SELECT g AS id, k, k / 100 AS k1, k % 100 AS k2, (g % 100)::float8 AS v
  FROM (SELECT g, (random() * ($d - 1))::int AS k FROM generate_series(1, $n) g) x;
CREATE TABLE cat AS SELECT g AS c, (g % 7)::float8 AS x FROM generate_series(0, 99) g;
VACUUM ANALYZE;
SQL
}

# query_def NAME N: sets Q_DESC, Q_SQL, Q_SIZE (label), Q_INPUT (input rows of
# all tables), Q_PAIRS (outer x inner of the join), Q_ROWS (about how many
# rows the join forms), Q_N (the size it really runs at), Q_COPY (1: rows go
# to the client through \copy ... TO /dev/null).
query_def() {
	local n=$2 d=$(($2 / 10 > 0 ? $2 / 10 : 1))
	Q_N=$n
	Q_COPY=0
	Q_SIZE="$n x $n"
	Q_INPUT=$((2 * n))
	Q_PAIRS=$((n * n))
	Q_ROWS=$n
	case $1 in
	theta_lt | theta_gt)
		local op='<'
		[ "$1" = theta_gt ] && op='>'
		Q_DESC="theta \`r.a $op s.a\`, count(*)"
		Q_SQL="SELECT count(*) FROM r JOIN s ON r.a $op s.a"
		Q_ROWS=$((n * n / 2))
		;;
	theta_rows)
		Q_N=$((n < ROWS_MAX_N ? n : ROWS_MAX_N))
		n=$Q_N
		Q_SIZE="$n x $n"
		Q_INPUT=$((2 * n))
		Q_PAIRS=$((n * n))
		Q_ROWS=$((n * n / 2))
		Q_COPY=1
		Q_DESC="theta \`r.a < s.a\`, rows to the client"
		Q_SQL="SELECT r.id, r.a, s.id, s.a FROM (SELECT * FROM r WHERE id <= $n) r JOIN (SELECT * FROM s WHERE id <= $n) s ON r.a < s.a"
		;;
	band)
		Q_DESC="band \`s.t BETWEEN r.t - 50 AND r.t + 50\`, count(*), no index"
		Q_SQL="SELECT count(*) FROM r JOIN s ON s.t BETWEEN r.t - 50 AND r.t + 50"
		;;
	band_idx)
		Q_DESC="band join, count(*), btree index on s.t"
		Q_SQL="SELECT count(*) FROM r JOIN s_idx s ON s.t BETWEEN r.t - 50 AND r.t + 50"
		;;
	equi)
		Q_DESC="equality fact x dim, sum(f.v * d.w)"
		Q_SQL="SELECT sum(f.v * d.w) FROM fact f JOIN dim d ON f.k = d.k"
		Q_SIZE="$n x $d"
		Q_INPUT=$((n + d))
		Q_PAIRS=$((n * d))
		;;
	multikey)
		Q_DESC="two-key equality \`(f.k1, f.k2) = (d.k1, d.k2)\`, sum"
		Q_SQL="SELECT sum(f.v * d.w) FROM fact f JOIN dim d ON f.k1 = d.k1 AND f.k2 = d.k2"
		Q_SIZE="$n x $d"
		Q_INPUT=$((n + d))
		Q_PAIRS=$((n * d))
		;;
	three)
		Q_DESC="three tables fact x dim x cat, sum"
		Q_SQL="SELECT sum(f.v * d.w * c.x) FROM fact f JOIN dim d ON f.k = d.k JOIN cat c ON c.c = d.c"
		Q_SIZE="$n x $d x 100"
		Q_INPUT=$((n + d + 100))
		Q_PAIRS=$((n * d))
		;;
	left)
		Q_DESC="LEFT band join, count(*), count(s.id), btree index on s.t"
		Q_SQL="SELECT count(*), count(s.id) FROM r LEFT JOIN s_idx s ON s.t BETWEEN r.t - 50 AND r.t + 50"
		;;
	anti)
		Q_DESC="anti band join (NOT EXISTS), count(*), btree index on s.t"
		Q_SQL="SELECT count(*) FROM r WHERE NOT EXISTS (SELECT 1 FROM s_idx s WHERE s.t BETWEEN r.t - 50 AND r.t + 50)"
		;;
	esac
}

# The plan in a few words, from EXPLAIN text on stdin: join nodes (GpuJoin
# with its algorithm and backend), index scans, parallel workers.
plan_summary() {
	awk '
	function add(s) { out = out (out == "" ? "" : " + ") s }
	/Custom Scan \(GpuJoin\)/ { add("GpuJoin"); gj = 1; next }
	gj && /Algorithm: / { sub(/.*Algorithm: /, ""); out = out " " $0; next }
	gj && /(Backend|Device): / { sub(/.*(Backend|Device): /, ""); out = out "/" $0; gj = 0; next }
	/(Hash|Merge)( [A-Za-z]+)* Join|Nested Loop( [A-Za-z]+ Join)?/ {
		match($0, /(Hash|Merge)( [A-Za-z]+)* Join|Nested Loop( [A-Za-z]+ Join)?/)
		add(substr($0, RSTART, RLENGTH)); next
	}
	/Index Only Scan|Index Scan|Bitmap Index Scan/ && !idx {
		match($0, /Index Only Scan|Index Scan|Bitmap Index Scan/)
		add(substr($0, RSTART, RLENGTH)); idx = 1; next
	}
	/Workers Launched: / { w = $NF }
	/Workers Planned: / && w == "" { wp = $NF }
	END {
		if (w != "") out = out ", " w " workers"
		else if (wp != "") out = out ", " wp " workers planned"
		print (out == "" ? "no join" : out)
	}'
}

# A plan that evaluates every pair: a nested loop with no index under it.
plan_is_pairwise() {
	case "$1" in
	*GpuJoin*) return 1 ;;
	*"Nested Loop"*) case "$1" in *Index*) return 1 ;; *) return 0 ;; esac ;;
	*) return 1 ;;
	esac
}

fgt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 > b + 0) }'; }

# measure MODE: runs Q_SQL in one session; sets M_STATUS (ok|timeout|error),
# M_MS (median), M_PLAN, M_NOTE.
measure() {
	local mode=$1 settings out stmt plan
	settings=$NATIVE_SETTINGS
	[ "$mode" = gpujoin ] && settings=$GPU_SETTINGS
	if [ "$Q_COPY" = 1 ]; then
		stmt="\\copy ($Q_SQL) TO /dev/null"
	else
		stmt="$Q_SQL;"
	fi
	out=$(
		{
			printf '%s\n%s\n' "$PRELUDE" "$settings"
			if [ "$WARMUP" = 1 ]; then
				echo "EXPLAIN (ANALYZE, TIMING OFF) $Q_SQL;"
			else
				echo "EXPLAIN (COSTS OFF) $Q_SQL;"
			fi
			echo '\echo @@runs'
			echo '\timing on'
			for _ in $(seq "$RUNS"); do echo "$stmt"; done
		} | psql_run -v ON_ERROR_STOP=1 2>&1
	) || true
	{
		echo "== $mode $Q_NAME N=$Q_N"
		echo "$out"
	} >>"$LOG"
	plan=$(echo "$out" | sed "/^@@runs/,\$d" | plan_summary)
	[ "$plan" != "no join" ] && M_PLAN=$plan
	M_NOTE=""
	if echo "$out" | grep -q 'canceling statement due to statement timeout'; then
		M_STATUS=timeout
		M_MS=$((TIMEOUT_S * 1000))
		M_NOTE="timed out after ${TIMEOUT_S}s"
		return
	fi
	if echo "$out" | grep -q '^\(psql:.*\)\?ERROR:'; then
		M_STATUS=error
		M_MS=""
		M_NOTE=$(echo "$out" | grep -m1 'ERROR:' | sed 's/.*ERROR: *//')
		return
	fi
	M_MS=$(echo "$out" | sed -n '/^@@runs/,$p' | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -g |
		awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
	if [ -z "$M_MS" ]; then
		M_STATUS=error
		M_NOTE="no timing in the output (see run.log)"
	else
		M_STATUS=ok
	fi
}

# The largest measured (status ok) row of a (query, mode): "n ms pairs rows".
last_measured() {
	awk -F'\t' -v q="$1" -v m="$2" '$1 == q && $5 == m && $6 == "ok" { l = $2 " " $7 " " $10 " " $11 } END { print l }' "$TSV"
}

TSV=$OUTDIR/results.tsv
printf 'query\tn\tsize\tinput_rows\tmode\tstatus\tms\tplan\tnote\tpairs\tjoin_rows\n' >"$TSV"
declare -A timed_out=()
declare -A done_n=()

echo "sizes: $SIZES; runs: $RUNS; queries: $QUERIES; results in $OUTDIR"
for N in $SIZES; do
	echo "== generating data, N = $N"
	gen_data "$N"
	for Q_NAME in $QUERIES; do
		query_def "$Q_NAME" "$N"
		[ -n "${done_n[$Q_NAME:$Q_N]:-}" ] && continue
		done_n[$Q_NAME:$Q_N]=1
		for mode in native gpujoin; do
			M_PLAN="" M_NOTE="" M_MS="" M_STATUS=""
			skip=""
			work=""
			raw_plan=$({
				printf '%s\n' "$PRELUDE"
				[ "$mode" = gpujoin ] && printf '%s\n' "$GPU_SETTINGS" || printf '%s\n' "$NATIVE_SETTINGS"
				echo "EXPLAIN (COSTS OFF) $Q_SQL;"
			} | psql_run 2>&1)
			M_PLAN=$(printf '%s\n' "$raw_plan" | plan_summary)
			# aggregates computed inside GpuJoin: no join row is ever formed
			agg_inside=""
			if printf '%s\n' "$raw_plan" | grep -q 'GPU Aggregates'; then
				agg_inside=1
				M_PLAN="$M_PLAN, aggregates inside"
			fi
			if [ -n "${timed_out[$Q_NAME:$mode]:-}" ]; then
				skip="not run: timed out at N = ${timed_out[$Q_NAME:$mode]}"
			elif [ -z "$agg_inside" ] && fgt "$Q_ROWS" "$MAX_JOIN_ROWS"; then
				skip="join forms ~$Q_ROWS rows > MAX_JOIN_ROWS"
				work=rows
			elif plan_is_pairwise "$M_PLAN" && fgt "$Q_PAIRS" "$NATIVE_MAX_PAIRS"; then
				skip="nested loop over $Q_PAIRS pairs > NATIVE_MAX_PAIRS"
				work=pairs
			fi
			if [ -n "$skip" ]; then
				M_STATUS=skipped
				M_NOTE=$skip
				if [ -n "$work" ]; then
					read -r n0 ms0 pairs0 rows0 <<<"$(last_measured "$Q_NAME" "$mode")"
					if [ -n "${n0:-}" ]; then
						M_STATUS=extrapolated
						if [ "$work" = pairs ]; then
							M_MS=$(awk -v a="$ms0" -v w="$Q_PAIRS" -v w0="$pairs0" 'BEGIN { printf "%.0f", a * w / w0 }')
						else
							M_MS=$(awk -v a="$ms0" -v w="$Q_ROWS" -v w0="$rows0" 'BEGIN { printf "%.0f", a * w / w0 }')
						fi
						M_NOTE="$skip; extrapolated from N = $n0 ($ms0 ms) in proportion to $work"
					fi
				fi
			else
				measure "$mode"
				[ "$M_STATUS" = timeout ] && timed_out[$Q_NAME:$mode]=$Q_N
			fi
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$Q_NAME" "$Q_N" "$Q_SIZE" "$Q_INPUT" "$mode" \
				"$M_STATUS" "$M_MS" "$M_PLAN" "$M_NOTE" "$Q_PAIRS" "$Q_ROWS" >>"$TSV"
			printf '%-10s %-16s %-8s %-12s %10s ms  %s%s\n' "$Q_NAME" "$Q_SIZE" "$mode" "$M_STATUS" "${M_MS:--}" \
				"$M_PLAN" "${M_NOTE:+  ($M_NOTE)}"
		done
		# what the planner picks by itself (default costs, every method
		# allowed): planned, not run; the report says whether it is the
		# faster of the two measured plans
		M_PLAN=$({
			printf '%s\n' "$PRELUDE"
			[ -n "$DEVICE" ] && echo "SET gpujoin.device = $DEVICE;"
			echo "EXPLAIN (COSTS OFF) $Q_SQL;"
		} | psql_run 2>&1 | plan_summary)
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$Q_NAME" "$Q_N" "$Q_SIZE" "$Q_INPUT" default \
			planned "" "$M_PLAN" "" "$Q_PAIRS" "$Q_ROWS" >>"$TSV"
	done
done

# The report: machine, versions, settings, then one table row per (query, size).
PG_VERSION=$(psql_run -At -c "SELECT version()")
DEVICES=$(psql_run -At -F' ' -c "SELECT backend, coalesce(name, ''), CASE WHEN selected THEN '(selected)' ELSE '' END FROM gpujoin_devices()" 2>/dev/null | sed 's/ *$//' | paste -sd';' - | sed 's/;/; /g' || true)
SERVER_SETTINGS=$(psql_run -At -F' = ' -c "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ('max_parallel_workers_per_gather', 'work_mem', 'shared_buffers', 'jit', 'gpujoin.device', 'gpujoin.device_memory') ORDER BY name" | paste -sd',' - | sed 's/,/, /g')
CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
GPU=$(nvidia-smi -L 2>/dev/null | head -1 || true)
{
	echo "# GpuJoin benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "- machine: $CPU, $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) memory${GPU:+; $GPU}"
	echo "- server: $PG_VERSION"
	echo "- settings: $SERVER_SETTINGS; GpuJoin sessions: gpujoin.device = ${DEVICE:-(server setting)}"
	echo "- gpujoin_devices(): ${DEVICES:-?}"
	echo "- sizes: $SIZES; median of $RUNS runs after a warm-up; psql \\timing"
	echo
	echo "A GpuJoin plan without GpuJoin in it means the planner was offered no GpuJoin path (a join"
	echo "type GpuJoin does not support): that run is a native plan with the native join methods disabled."
	echo
	echo "The planner column is what PostgreSQL plans with GpuJoin enabled and the default costs: the"
	echo "plan it picks by itself, marked ok when that is the faster of the two measured ones."
	echo
	echo "| query | size | native ms | GpuJoin ms | speedup | GpuJoin plan | native plan | planner |"
	echo "| --- | --- | --: | --: | --: | --- | --- | --- |"
	awk -F'\t' -v descs="$(for q in $QUERIES; do query_def "$q" 1; printf '%s=%s\t' "$q" "$Q_DESC"; done)" '
	function cell(st, ms) {
		if (st == "ok") return ms
		if (st == "extrapolated") return "~" ms
		if (st == "timeout") return "> " ms
		return st
	}
	BEGIN { n = split(descs, d, "\t"); for (i = 1; i <= n; i++) { p = index(d[i], "="); desc[substr(d[i], 1, p - 1)] = substr(d[i], p + 1) } }
	NR == 1 { next }
	{
		key = $1 SUBSEP $2
		if (!(key in seen)) { seen[key] = 1; order[++k] = key; size[key] = $3; q[key] = $1 }
		st[key, $5] = $6; ms[key, $5] = $7; plan[key, $5] = $8
		if ($9 != "") notes[++nn] = "`" $1 "` " $3 ", " $5 ": " $9
	}
	END {
		for (i = 1; i <= k; i++) {
			key = order[i]
			sn = st[key, "native"]; sg = st[key, "gpujoin"]
			sp = ""
			if (plan[key, "gpujoin"] !~ /GpuJoin/)
				sp = "- (no GpuJoin)"
			else if ((sn == "ok" || sn == "extrapolated") && (sg == "ok" || sg == "extrapolated") && ms[key, "gpujoin"] > 0) {
				sp = sprintf("%.2fx", ms[key, "native"] / ms[key, "gpujoin"])
				if (sn != "ok" || sg != "ok") sp = "~" sp
			} else if (sn == "timeout" && sg == "ok")
				sp = sprintf("> %.0fx", ms[key, "native"] / ms[key, "gpujoin"])
			pick = (plan[key, "default"] ~ /GpuJoin/) ? "GpuJoin" : "native"
			if (plan[key, "gpujoin"] ~ /GpuJoin/ && (sn == "ok" || sn == "extrapolated" || sn == "timeout") &&
			    (sg == "ok" || sg == "extrapolated") && ms[key, "gpujoin"] > 0)
				pick = pick ((pick == "GpuJoin") == (ms[key, "gpujoin"] + 0 < ms[key, "native"] + 0) ? " (ok)" : " (the slower)")
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", desc[q[key]], size[key],
				cell(sn, ms[key, "native"]), cell(sg, ms[key, "gpujoin"]), sp,
				plan[key, "gpujoin"], plan[key, "native"], pick
		}
		if (nn) {
			print ""
			print "Notes (~: extrapolated, not measured):"
			print ""
			for (i = 1; i <= nn; i++) print "- " notes[i]
		}
	}' "$TSV"
} >"$OUTDIR/results.md"

# The plot (test/bench/plot_speedup.sh).
if test/bench/plot_speedup.sh "$TSV" "$OUTDIR/speedup.png" "${DEVICE:-server device setting}" >>"$LOG" 2>&1; then
	printf '\n![speedup](speedup.png)\n' >>"$OUTDIR/results.md"
else
	echo "no plot (see $LOG): gnuplot missing (Debian: apt-get install gnuplot-nox) or nothing to plot"
fi

psql_run -q -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS gpujoin_bench CASCADE" >/dev/null
echo
cat "$OUTDIR/results.md"
