#!/bin/bash
# test/bench/bench_equi.sh: GpuJoin's equi-joins (and one band join) side by
# side with PostgreSQL and DuckDB, on the same data.  (issue 36)
#
# What it measures: the queries issue 36 measured on one H200, a fact table
# f(k int4, v float8) joined to a dimension d(k int4 primary key, w float8,
# c int4) on f.k = d.k, and a band join of two int8 tables:
#
#   equi_count   SELECT count(*) FROM f JOIN d ON f.k = d.k
#   equi_sum     SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k
#   equi_group   SELECT d.k % 100, count(*), sum(f.v * d.w) ... GROUP BY 1
#   band_count   SELECT count(*) FROM rb r JOIN sb s
#                  ON s.t BETWEEN r.t - 12 AND r.t + 12
#
# each four ways:
#
#   default     GpuJoin as the planner chooses (the plan is shown: "Parallel
#               GpuJoin hash +agg", "Parallel Hash Join", ...)
#   forced      enable_hashjoin/mergejoin/nestloop off, as gj_force() in
#               sql/setup.sql and bench_plan_quality.sh's forced mode do:
#               GpuJoin wherever it is offered
#   PostgreSQL  gpujoin.enabled = off: PostgreSQL's own best plan
#   DuckDB      the same tables loaded into an in-memory DuckDB through its C
#               API (libduckdb.so, from python3 with ctypes), SET threads =
#               the machine's cores
#
# Why: the issue's DuckDB column is the bar for an equi-join on the same
# machine (19.5 ms against GpuJoin's 160 ms for the count at 10M x 1M), and
# the breakdown of GpuJoin's own time says what stands between them.
#
# How: the data are generated in PostgreSQL (setseed(0.42), as
# bench_plan_quality.sh does), exported with psql's \copy to CSV files in a
# temporary directory and loaded into DuckDB with explicit column types, so
# both engines join the same rows.  Only the queries are timed: PostgreSQL
# by psql's \timing in one session per (query, mode) after a warm-up run (as
# the other benches), DuckDB by time.perf_counter around each duckdb_query
# call after a warm-up; best and median of RUNS.  Every engine's answer
# (counts, sums to a relative 1e-9, each group's) is compared with
# PostgreSQL's, and a line says so where one differs.  After the table, the
# forced GpuJoin's EXPLAIN (ANALYZE, VERBOSE) lines that say where its time
# went (inputs, Drain Time, Backend Time by part, Kernel and Transfer Time).
#
# Data (schema gpujoin_equi), sizes by PROFILE times SCALE:
#   f: k uniform over 1.2 x |d| (a sixth of f has no match), v = g % 100
#   d: k = 0 .. |d| - 1, w = k % 10, c = k % 1000
#   rb, sb (t int8, uniform over [0, 25 |rb|]): the band +-12 matches about
#       one row of the other side per row; a btree on sb.t, so that
#       PostgreSQL's own plan is an index nested loop, not all pairs
#
#              f       d       rb = sb
#   cpu        2M      200k    200k     (2-core machine: under a minute)
#   gpu        10M     1M      1M       (GPU machine: about 5 minutes, most
#                                        of it generating and loading data
#                                        and the native grouped join)
#
# Environment:
#   PROFILE     cpu | gpu                                   default cpu
#   SCALE       multiplies every size                       default 1
#   RUNS        timed runs per measurement (best, median)   default 5
#   TIMEOUT_S   statement_timeout of every PostgreSQL run   default 120
#   ONLY        extended regexp: only the queries whose name matches
#   DEVICE      cpu | cuda | auto | service: SET gpujoin.device in the default
#               and forced sessions (needs a superuser); default: the
#               server's setting
#   DUCKDB_LIB  path of libduckdb.so (the npm package
#               @duckdb/node-bindings-linux-x64 has one); default: the first
#               found of node_modules/@duckdb/node-bindings-linux-x64/ under
#               the repository and $HOME, and /tmp/duck/package.  None: the
#               DuckDB column says n/a
#   DUCKDB_THREADS  SET threads in DuckDB                   default nproc
#   OUTDIR      where equi.md, equi.tsv and run.log go
#                                                   default bench_out/equi-<date>
#   KEEP_DATA   1: keep the schema at the end and reuse it when the sizes
#               match (default 0: generated anew, dropped at the end)
#   PARALLEL    max_parallel_workers_per_gather of the throwaway cluster
#               (default 2)
#   HUGE_PAGES  1: the throwaway cluster's shared memory in huge pages
#               (test/lib/cluster.sh reserves them as root); the issue's
#               count went from 75 to 58 ms with them on an H200
#
# With PGHOST or PGPORT set it uses that server (database PGDATABASE or
# postgres; gpujoin installed there, preloaded or loadable); otherwise it
# starts a throwaway cluster (test/lib/bench_server.sh, PG_CONFIG from the
# environment) with GPUJOIN_CLUSTER_CONF as extra settings (PROFILE=cpu
# default: "gpujoin.device = cpu").  For example:
#
#   SCALE=0.05 RUNS=1 test/bench/bench_equi.sh                  # smoke test
#   PROFILE=gpu DUCKDB_LIB=/tmp/libduckdb.so test/bench/bench_equi.sh
set -u
cd "$(dirname "$0")/../.."

PROFILE=${PROFILE:-cpu}
SCALE=${SCALE:-1}
RUNS=${RUNS:-5}
TIMEOUT_S=${TIMEOUT_S:-120}
ONLY=${ONLY:-}
DEVICE=${DEVICE:-}
KEEP_DATA=${KEEP_DATA:-0}
PARALLEL=${PARALLEL:-2}
DUCKDB_THREADS=${DUCKDB_THREADS:-$(nproc)}
OUTDIR=${OUTDIR:-bench_out/equi-$(date +%Y%m%d-%H%M%S)}

case $PROFILE in
cpu) sizes="2000000 200000 200000" ;;
gpu) sizes="10000000 1000000 1000000" ;;
*)
	echo "PROFILE must be cpu or gpu" >&2
	exit 1
	;;
esac
read -r F_N D_N RB_N <<<"$(for n in $sizes; do
	awk -v n="$n" -v s="$SCALE" 'BEGIN { x = int(n * s); printf "%d ", (x < 10 ? 10 : x) }'
done)"
case "$DEVICE" in
"" | cpu | cuda | auto | service) ;;
*)
	echo "DEVICE must be cpu, cuda, auto or service" >&2
	exit 1
	;;
esac

# libduckdb.so: DUCKDB_LIB, or where npm puts it, or the unpacked package
if [ -z "${DUCKDB_LIB:-}" ]; then
	for cand in node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so \
		"$HOME"/node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so \
		/tmp/duck/package/libduckdb.so; do
		[ -f "$cand" ] && DUCKDB_LIB=$cand && break
	done
fi
DUCKDB_LIB=${DUCKDB_LIB:-}
[ -n "$DUCKDB_LIB" ] && [ ! -f "$DUCKDB_LIB" ] && {
	echo "DUCKDB_LIB=$DUCKDB_LIB: no such file" >&2
	exit 1
}

# The queries, one a line: name | SQL (the same text runs in both engines).
QUERIES=$(
	cat <<'EOF'
equi_count | SELECT count(*) FROM f JOIN d ON f.k = d.k
equi_sum   | SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k
equi_group | SELECT d.k % 100 AS g, count(*), sum(f.v * d.w) FROM f JOIN d ON f.k = d.k GROUP BY 1 ORDER BY 1
band_count | SELECT count(*) FROM rb r JOIN sb s ON s.t BETWEEN r.t - 12 AND r.t + 12
EOF
)

mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/run.log
: >"$LOG"
WORK=$(mktemp -d /tmp/gpujoin_equi.XXXXXX)
chmod 755 "$WORK"

conf=${GPUJOIN_CLUSTER_CONF-}
[ "$PROFILE" = cpu ] && [ -z "$conf" ] && conf="gpujoin.device = cpu"
. test/lib/bench_server.sh
. test/lib/bench_tables.sh
bench_server "max_parallel_workers_per_gather = $PARALLEL
$conf"
# bench_server's trap stops a throwaway cluster; the CSV files go too
trap 'rm -rf "$WORK"; [ "$(type -t cluster_stop)" = function ] && cluster_stop' EXIT

bench_modes gpujoin_equi || exit 1

SIG="f=$F_N d=$D_N rb=$RB_N"
have=$(psql_run -At -c "SELECT obj_description('gpujoin_equi'::regnamespace)" 2>/dev/null)
if [ "$KEEP_DATA" = 1 ] && [ "$have" = "$SIG" ]; then
	echo "reusing the data of schema gpujoin_equi ($SIG)"
else
	echo "generating the data ($SIG)"
	psql_run -v ON_ERROR_STOP=1 >>"$LOG" 2>&1 <<SQL || {
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS gpujoin_equi CASCADE;
CREATE SCHEMA gpujoin_equi;
SET search_path = gpujoin_equi;
SELECT setseed(0.42);
$(equi_tables_sql "$F_N" "$D_N")
$(band_tables_sql "$RB_N")
VACUUM ANALYZE;
COMMENT ON SCHEMA gpujoin_equi IS '$SIG';
SQL
		echo "data generation failed (see $LOG)" >&2
		exit 1
	}
fi
bench_settle gpujoin_equi

# The same rows for DuckDB: CSV files of every table, in column order.
DUCK_NOTE=""
if [ -n "$DUCKDB_LIB" ]; then
	echo "exporting the tables for DuckDB ($WORK)"
	for t in f d rb sb; do
		psql_run -v ON_ERROR_STOP=1 -c "\\copy gpujoin_equi.$t TO '$WORK/$t.csv' WITH (FORMAT csv)" >>"$LOG" 2>&1 || {
			echo "export of $t failed (see $LOG)" >&2
			exit 1
		}
	done
else
	DUCK_NOTE="DuckDB: n/a (no libduckdb.so: set DUCKDB_LIB, e.g. from the npm package @duckdb/node-bindings-linux-x64)"
	echo "$DUCK_NOTE"
fi

# DuckDB through its C API: load the CSV files with explicit types, then per
# query a warm-up and RUNS timed duckdb_query calls.  Prints per query:
# name <tab> best_ms <tab> median_ms <tab> result (rows ";", columns "|").
# The script goes to a file: the queries come on its standard input.
duckdb_run() {
	cat >"$WORK/duckdb_run.py" <<'PY'
import ctypes, statistics, sys, time

lib_path, work, threads, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
lib = ctypes.CDLL(lib_path)
# duckdb_result: six pointer-sized fields in the 1.x C API; room to spare
Result = ctypes.c_byte * 128
lib.duckdb_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
lib.duckdb_connect.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
lib.duckdb_query.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
lib.duckdb_result_error.argtypes = [ctypes.c_void_p]
lib.duckdb_result_error.restype = ctypes.c_char_p
lib.duckdb_row_count.argtypes = [ctypes.c_void_p]
lib.duckdb_row_count.restype = ctypes.c_uint64
lib.duckdb_column_count.argtypes = [ctypes.c_void_p]
lib.duckdb_column_count.restype = ctypes.c_uint64
lib.duckdb_value_double.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64]
lib.duckdb_value_double.restype = ctypes.c_double
lib.duckdb_destroy_result.argtypes = [ctypes.c_void_p]
lib.duckdb_disconnect.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
lib.duckdb_close.argtypes = [ctypes.POINTER(ctypes.c_void_p)]

db = ctypes.c_void_p()
con = ctypes.c_void_p()
if lib.duckdb_open(None, ctypes.byref(db)) != 0 or lib.duckdb_connect(db, ctypes.byref(con)) != 0:
    sys.exit("duckdb: cannot open an in-memory database")

def query(sql, keep=False):
    res = Result()
    start = time.perf_counter()
    state = lib.duckdb_query(con, sql.encode(), ctypes.byref(res))
    ms = (time.perf_counter() - start) * 1000.0
    if state != 0:
        err = lib.duckdb_result_error(ctypes.byref(res))
        lib.duckdb_destroy_result(ctypes.byref(res))
        raise RuntimeError("duckdb: %s: %s" % (sql, err.decode() if err else "error"))
    rows = None
    if keep:
        nr = lib.duckdb_row_count(ctypes.byref(res))
        nc = lib.duckdb_column_count(ctypes.byref(res))
        rows = [[lib.duckdb_value_double(ctypes.byref(res), c, r) for c in range(nc)]
                for r in range(nr)]
    lib.duckdb_destroy_result(ctypes.byref(res))
    return ms, rows

query("SET threads = %d" % threads)
for table, cols in (("f", "k INTEGER, v DOUBLE"),
                    ("d", "k INTEGER PRIMARY KEY, w DOUBLE, c INTEGER"),
                    ("rb", "id BIGINT, t BIGINT"), ("sb", "id BIGINT, t BIGINT")):
    query("CREATE TABLE %s (%s)" % (table, cols))
    query("COPY %s FROM '%s/%s.csv' (FORMAT csv, HEADER false)" % (table, work, table))
for line in sys.stdin:
    name, _, sql = line.rstrip("\n").partition("\t")
    try:
        _, rows = query(sql, keep=True)
        times = [query(sql)[0] for _ in range(runs)]
    except RuntimeError as e:
        print(e, file=sys.stderr)
        print("%s\t\t\terror" % name)
        continue
    result = ";".join("|".join(repr(v) for v in row) for row in rows)
    print("%s\t%.3f\t%.3f\t%s" % (name, min(times), statistics.median(times), result))
    sys.stdout.flush()
lib.duckdb_disconnect(ctypes.byref(con))
lib.duckdb_close(ctypes.byref(db))
PY
	python3 "$WORK/duckdb_run.py" "$DUCKDB_LIB" "$WORK" "$DUCKDB_THREADS" "$RUNS"
}

# The plan in a few words, from EXPLAIN output on stdin (as
# bench_plan_quality.sh's plan_label, shorter): the top join node,
# "Parallel" under a Gather, for GpuJoin its algorithm and "+agg".
plan_label() {
	awk '
	/Gather/ && !found { gather = 1 }
	!found && /Custom Scan \(GpuJoin\)/ { found = 1; gj = 1; label = "GpuJoin"; next }
	!found && /(Hash|Merge)( [A-Za-z]+)* Join|Nested Loop/ {
		match($0, /(Hash|Merge)( [A-Za-z]+)* Join|Nested Loop/)
		label = substr($0, RSTART, RLENGTH); found = 1; next
	}
	gj && /^ *Algorithm: / && alg == "" { sub(/.*Algorithm: /, ""); alg = " " $0 }
	gj && /^ *GPU Aggregates: / { agg = " +agg" }
	gj && /->  / { gj = 0 }
	END {
		if (!found) { print "no join"; exit }
		print (gather ? "Parallel " : "") label alg agg
	}'
}

# measure NAME SQL MODE: one psql session; sets M_BEST, M_MEDIAN (empty on a
# timeout or error, M_STATUS says which), M_PLAN, M_RESULT (the last run's
# rows, ";" between rows, "|" between columns).
measure() {
	local name=$1 sql=$2 mode=$3 settings out times
	case $mode in
	default) settings=$DEFAULT_SETTINGS ;;
	native) settings=$NATIVE_SETTINGS ;;
	forced) settings=$FORCED_SETTINGS ;;
	esac
	out=$(
		{
			printf '%s\n%s\n' "$PRELUDE" "$settings"
			echo "EXPLAIN (COSTS OFF) $sql;"
			echo '\echo @@warmup'
			echo "$sql;"
			echo '\timing on'
			for _ in $(seq "$RUNS"); do
				echo '\echo @@run'
				echo "$sql;"
			done
		} | psql_run -At -F'|' -v ON_ERROR_STOP=1 2>&1
	)
	printf '== %s %s\n%s\n' "$name" "$mode" "$out" >>"$LOG"
	M_PLAN=$(printf '%s\n' "$out" | sed '/^@@warmup/,$d' | plan_label)
	M_BEST="" M_MEDIAN="" M_RESULT=""
	if printf '%s\n' "$out" | grep -q 'canceling statement due to statement timeout'; then
		M_STATUS=timeout
	elif printf '%s\n' "$out" | grep -q 'ERROR:'; then
		M_STATUS=error
	else
		times=$(printf '%s\n' "$out" | sed -n '/^@@run/,$p' | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -g)
		M_BEST=$(printf '%s\n' "$times" | head -1)
		M_MEDIAN=$(printf '%s\n' "$times" | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else if (NR) printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
		M_RESULT=$(printf '%s\n' "$out" | awk '/^@@run/ { rows = ""; n = 0; next } /^Time: / { next } { rows = rows (n++ ? ";" : "") $0 } END { print rows }')
		M_STATUS=ok
		[ -z "$M_MEDIAN" ] && M_STATUS=error
	fi
}

# The forced GpuJoin's lines of EXPLAIN (ANALYZE, VERBOSE) that say where
# its time went, for the notes under the table.
breakdown() {
	local sql=$1
	printf '%s\n%s\n%s\n' "$PRELUDE" "$FORCED_SETTINGS" "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) $sql;" |
		psql_run -At 2>&1 | tee -a "$LOG" |
		grep -E '^ *(Backend|Outer Input|Inner Input|Drain Time|Backend Time|Kernel Time|Transfer Time|Service Queue Time|Execution Time):' |
		sed 's/^ *//'
}

# Are two results the same?  Equal row counts, and every value equal to a
# relative 1e-9 (float sums differ in their last bits between orders).
same_result() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		na = split(a, ra, ";"); nb = split(b, rb, ";")
		if (na != nb) exit 1
		for (i = 1; i <= na; i++) {
			nc = split(ra[i], ca, "|"); if (split(rb[i], cb, "|") != nc) exit 1
			for (j = 1; j <= nc; j++) {
				x = ca[j] + 0; y = cb[j] + 0; d = x - y; if (d < 0) d = -d
				m = (x < 0 ? -x : x); if ((y < 0 ? -y : y) > m) m = (y < 0 ? -y : y)
				if (d > 1e-9 * m && d > 1e-9) exit 1
			}
		}
		exit 0
	}'
}

TSV=$OUTDIR/equi.tsv
printf 'query\tdefault_plan\tdefault_best\tdefault_median\tforced_plan\tforced_best\tforced_median\tnative_plan\tnative_best\tnative_median\tduckdb_best\tduckdb_median\n' >"$TSV"
echo "profile $PROFILE, scale $SCALE: f $F_N x d $D_N, rb = sb $RB_N; runs $RUNS; results in $OUTDIR"

declare -A DUCK
if [ -n "$DUCKDB_LIB" ]; then
	echo "loading DuckDB and running its queries"
	duck_out=$(
		while IFS='|' read -r name sql; do
			name=$(echo "$name" | xargs)
			[ -z "$ONLY" ] || echo "$name" | grep -Eq -- "$ONLY" || continue
			printf '%s\t%s\n' "$name" "$(echo "$sql" | sed 's/^ *//')"
		done <<<"$QUERIES" | duckdb_run 2>>"$LOG"
	)
	while IFS=$'\t' read -r name best median result; do
		[ -n "$name" ] && DUCK[$name]="$best	$median	$result"
	done <<<"$duck_out"
fi

MISMATCH=""
NOTES=""
while IFS='|' read -r name sql; do
	name=$(echo "$name" | xargs)
	sql=$(echo "$sql" | sed 's/^ *//; s/ *$//')
	[ -n "$name" ] || continue
	[ -z "$ONLY" ] || echo "$name" | grep -Eq -- "$ONLY" || continue
	declare -A plan best median result status
	for mode in native default forced; do
		measure "$name" "$sql" "$mode"
		plan[$mode]=$M_PLAN best[$mode]=$M_BEST median[$mode]=$M_MEDIAN
		result[$mode]=$M_RESULT status[$mode]=$M_STATUS
	done
	IFS=$'\t' read -r d_best d_median d_result <<<"${DUCK[$name]:-		}"
	# every answer against PostgreSQL's own
	for mode in default forced; do
		if [ "${status[$mode]}" = ok ] && [ "${status[native]}" = ok ] &&
			! same_result "${result[$mode]}" "${result[native]}"; then
			MISMATCH="$MISMATCH
- $name: GpuJoin $mode answered ${result[$mode]:0:200}, PostgreSQL ${result[native]:0:200}"
		fi
	done
	if [ -n "$d_best" ] && [ "${status[native]}" = ok ] && ! same_result "$d_result" "${result[native]}"; then
		MISMATCH="$MISMATCH
- $name: DuckDB answered ${d_result:0:200}, PostgreSQL ${result[native]:0:200}"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" \
		"${plan[default]}" "${best[default]:-${status[default]}}" "${median[default]}" \
		"${plan[forced]}" "${best[forced]:-${status[forced]}}" "${median[forced]}" \
		"${plan[native]}" "${best[native]:-${status[native]}}" "${median[native]}" \
		"${d_best:-n/a}" "$d_median" >>"$TSV"
	printf '%-11s default %9s (%s)  forced %9s  PostgreSQL %9s  DuckDB %9s\n' "$name" \
		"${median[default]:-${status[default]}}" "${plan[default]}" "${median[forced]:-${status[forced]}}" \
		"${median[native]:-${status[native]}}" "${d_median:-n/a}" >&2
	NOTES="$NOTES
$name, forced ($(echo "${plan[forced]}")):
$(breakdown "$sql" | sed 's/^/    /')"
	unset plan best median result status
done <<<"$QUERIES"

MD=$OUTDIR/equi.md
{
	echo "# GpuJoin equi-joins against PostgreSQL and DuckDB, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "- machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores$(nvidia-smi -L 2>/dev/null | head -1 | sed 's/^/; /')"
	echo "- server: $(psql_run -At -c "SELECT version()" | cut -d, -f1); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "- settings: $(psql_run -At -F' = ' -c "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ('max_parallel_workers_per_gather', 'work_mem', 'gpujoin.device', 'gpujoin.service', 'jit') ORDER BY name" | paste -sd, - | sed 's/,/, /g')${DEVICE:+; default and forced: gpujoin.device = $DEVICE}"
	if [ -n "$DUCKDB_LIB" ]; then
		echo "- DuckDB: $(python3 -c "import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); l.duckdb_library_version.restype=ctypes.c_char_p; print(l.duckdb_library_version().decode())" "$DUCKDB_LIB" 2>/dev/null) ($DUCKDB_LIB), threads $DUCKDB_THREADS, in-memory, C API through python3 ctypes"
	else
		echo "- $DUCK_NOTE"
	fi
	echo "- profile $PROFILE, scale $SCALE: f $F_N x d $D_N (f.k over 1.2 |d|), band rb = sb $RB_N (int8, +-12, about one match a row)"
	echo "- ms, median of $RUNS runs after a warm-up (best in parentheses); PostgreSQL: psql \\timing; DuckDB: perf_counter around duckdb_query"
	echo "- ratios: GpuJoin forced over DuckDB and over PostgreSQL (below 1: GpuJoin is faster)"
	echo
	echo "| query | GpuJoin default (plan) | GpuJoin forced | PostgreSQL (plan) | DuckDB | GpuJoin/DuckDB | GpuJoin/PostgreSQL |"
	echo "| --- | --: | --: | --: | --: | --: | --: |"
	awk -F'\t' '
	function cell(b, m) { return m == "" ? b : sprintf("%s (%s)", m, b) }
	function ratio(x, y) { return (x == "" || y == "" || y + 0 <= 0) ? "" : sprintf("%.2f", x / y) }
	NR == 1 { next }
	{
		printf "| %s | %s, %s | %s | %s, %s | %s | %s | %s |\n", $1, cell($3, $4), $2, cell($6, $7),
			cell($9, $10), $8, cell($11, $12), ratio($7, $12), ratio($7, $10)
	}' "$TSV"
	echo
	if [ -n "$MISMATCH" ]; then
		echo "Answers that differ from PostgreSQL's:$MISMATCH"
	else
		echo "Every engine's answers equal PostgreSQL's (counts exactly, sums to a relative 1e-9)."
	fi
	echo
	echo "Where the forced GpuJoin's time went (EXPLAIN (ANALYZE, VERBOSE), one run; times summed over the processes):"
	echo
	echo '```'
	echo "${NOTES#?}"
	echo '```'
} >"$MD"

[ "$KEEP_DATA" = 1 ] || psql_run -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS gpujoin_equi CASCADE" >/dev/null
echo
cat "$MD"
