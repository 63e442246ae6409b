#!/bin/bash
# test/bench/bench_wall_clock.sh: where each process's wall clock goes in a
# GpuJoin, serial and parallel (issue 36, "the service's overheads").
#
# What it measures: the equi-join of bench_equi.sh,
#
#   SELECT count(*) FROM f JOIN d ON f.k = d.k
#
# (f(k int4, v float8), d(k int4 primary key, w float8, c int4), generated
# as bench_equi.sh generates them), with gpujoin.device = cpu (the cpu
# backend in each process) and = service (the GPU service, on whatever
# backend the server's service runs: cpu on a machine without a GPU), at
# each max_parallel_workers_per_gather of WORKERS.  Per run, EXPLAIN
# (ANALYZE, VERBOSE) gives every process's Wall Clock line (the time before
# the node's first call, then the parts from its first call to the end of
# its shutdown, which add up to the whole; gpujoin_explain.c) and its
# Backend Time by part, and the query is timed once more with psql's
# \timing, without EXPLAIN.  RUNS runs; the tables show medians.
#
# Two tables: the wall clock per process (serial: one; parallel: the leader
# and each worker), with the leader's Execution Time and \timing, whose
# difference from the leader's wall clock is what happens outside the node
# (the executor's start and end, the Gather's wait for its workers to
# exit); and each process's Backend Time by part.  On a machine with fewer
# cores than processes (2 cores here, 3 or 5 processes and the service's
# threads), waits are exaggerated: say so when quoting them.
#
# Environment:
#   F_N, D_N    rows of f and d                 default 3000000, 300000
#   WORKERS     max_parallel_workers_per_gather values   default "0 2 4"
#   DEVICES     gpujoin.device values           default "cpu service"
#   RUNS        runs per setting (median)       default 5
#   KEEP_DATA   1: keep the schema at the end and reuse it when the sizes
#               match (default 0)
#   OUTDIR      where wall_clock.md and run.log go
#                                       default bench_out/wall-clock-<date>
#
# With PGHOST or PGPORT set it uses that server (a superuser: it sets
# gpujoin.device; the service must run for DEVICES=service); otherwise a
# throwaway cluster (test/lib/bench_server.sh) with the GPU service on the
# cpu backend and GPUJOIN_CLUSTER_CONF as extra settings.
#
#   test/bench/bench_wall_clock.sh
#   F_N=1000000 D_N=100000 RUNS=3 test/bench/bench_wall_clock.sh
set -u
cd "$(dirname "$0")/../.."

F_N=${F_N:-3000000}
D_N=${D_N:-300000}
WORKERS=${WORKERS:-"0 2 4"}
DEVICES=${DEVICES:-"cpu service"}
RUNS=${RUNS:-5}
KEEP_DATA=${KEEP_DATA:-0}
TIMEOUT_S=${TIMEOUT_S:-120}
OUTDIR=${OUTDIR:-bench_out/wall-clock-$(date +%Y%m%d-%H%M%S)}
QUERY="SELECT count(*) FROM f JOIN d ON f.k = d.k"

mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/run.log
: >"$LOG"

. test/lib/bench_server.sh
. test/lib/bench_tables.sh
bench_server "gpujoin.service = on
gpujoin.service_backend = cpu
max_worker_processes = 16
max_parallel_workers = 8
${GPUJOIN_CLUSTER_CONF:-}"
[ "$(type -t cluster_stop)" = function ] && trap cluster_stop EXIT
bench_modes gpujoin_wall || exit 1

SIG="f=$F_N d=$D_N"
have=$(psql_run -At -c "SELECT obj_description('gpujoin_wall'::regnamespace)" 2>/dev/null)
if [ "$KEEP_DATA" = 1 ] && [ "$have" = "$SIG" ]; then
	echo "reusing the data of schema gpujoin_wall ($SIG)"
else
	echo "generating the data ($SIG)"
	psql_run -v ON_ERROR_STOP=1 >>"$LOG" 2>&1 <<SQL || {
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS gpujoin_wall CASCADE;
CREATE SCHEMA gpujoin_wall;
SET search_path = gpujoin_wall;
SELECT setseed(0.42);
$(equi_tables_sql "$F_N" "$D_N")
VACUUM ANALYZE;
COMMENT ON SCHEMA gpujoin_wall IS '$SIG';
SQL
		echo "data generation failed (see $LOG)" >&2
		exit 1
	}
fi
[ "$KEEP_DATA" = 1 ] || trap 'psql_run -c "DROP SCHEMA gpujoin_wall CASCADE" >/dev/null 2>&1; [ "$(type -t cluster_stop)" = function ] && cluster_stop' EXIT

# One session per setting: a warm-up, then RUNS times EXPLAIN (ANALYZE,
# VERBOSE) and the query under \timing.  Prints the lines the tables are
# made of, each prefixed with the run: "run N|<line>".
run_setting() {
	local device=$1 workers=$2
	{
		printf '%s\n' "$PRELUDE"
		echo "SET gpujoin.device = $device;"
		echo "SET max_parallel_workers_per_gather = $workers;"
		echo "$QUERY;"
		for r in $(seq "$RUNS"); do
			echo "\\echo @@run $r"
			echo "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) $QUERY;"
			echo '\timing on'
			echo "$QUERY;"
			echo '\timing off'
		done
	} | psql_run -At 2>&1 | tee -a "$LOG" | awk '
		/^@@run / { run = $2; next }
		/Wall Clock:|Backend Time:|Execution Time:|^Time: |Backend: / { sub(/^ */, ""); print run "|" $0 }'
}

# The medians of a setting's runs, as rows of the two tables: from the
# lines of run_setting on stdin.
summarize() {
	local label=$1
	awk -F'|' -v label="$label" -v wall="$OUTDIR/wall.rows" -v back="$OUTDIR/backend.rows" '
	function median(key,    n, i, j, t, v) {
		n = split(vals[key], v, " ")
		if (n == 0) return ""
		for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--) v[j + 1] = v[j]; v[j + 1] = t }
		return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	function add(key, x) { vals[key] = vals[key] " " x; if (!(key in seen)) { seen[key] = 1; keys[++nkeys] = key } }
	# "Worker 0 Wall Clock: 72.4 ms (start 4.4, inner wait 1.2, ...)"
	function parts(line, proc, kind,    head, body, n, p, i, name, num) {
		head = line; sub(/:.*/, "", head)
		body = line; sub(/^[^:]*: /, "", body)
		add(kind SUBSEP proc SUBSEP "total", body + 0)
		sub(/^[^(]*\(/, "", body); sub(/\)$/, "", body)
		n = split(body, p, ", ")
		for (i = 1; i <= n; i++) {
			num = p[i]; sub(/.* /, "", num)
			name = p[i]; sub(/ [^ ]*$/, "", name)
			add(kind SUBSEP proc SUBSEP name, num)
			if (!((kind, name) in pseen)) { pseen[kind, name] = 1; pnames[kind] = pnames[kind] "|" name }
			if (!((kind, proc) in procseen)) { procseen[kind, proc] = 1; procs[kind] = procs[kind] "|" proc }
		}
	}
	{
		line = $2
		if (line ~ /^Backend: /) { sub(/^Backend: /, "", line); backend = line; next }
		if (line ~ /^Execution Time: /) { sub(/^Execution Time: /, "", line); add("exec", line + 0); next }
		if (line ~ /^Time: /) { sub(/^Time: /, "", line); add("timing", line + 0); next }
		proc = "leader"
		if (line ~ /^Worker [0-9]+ /) { split(line, w, " "); proc = "worker " w[2] }
		if (line ~ /Wall Clock:/) parts(line, proc, "wall")
		else if (line ~ /^Backend Time:/) pending[$1] = line
		else if (line ~ /Backend Time:/) { parallel = 1; parts(line, proc, "backend") }
	}
	END {
		# serial: the one Backend Time line is the leader'"'"'s own
		if (!parallel)
			for (r in pending) parts(pending[r], "leader", "backend")
		for (k = 0; k < 2; k++) {
			kind = k ? "backend" : "wall"
			out = k ? back : wall
			np = split(substr(procs[kind], 2), pl, "|")
			nn = split(substr(pnames[kind], 2), nl, "|")
			if (!((kind) in hdr)) { h = "setting|process|total"; for (i = 1; i <= nn; i++) h = h "|" nl[i]; if (!k) h = h "|Execution Time|\\timing"; print h > (out ".head") }
			for (j = 1; j <= np; j++) {
				row = label " (" backend ")|" pl[j] "|" median(kind SUBSEP pl[j] SUBSEP "total")
				for (i = 1; i <= nn; i++) row = row "|" median(kind SUBSEP pl[j] SUBSEP nl[i])
				if (!k) row = row "|" (pl[j] == "leader" ? median("exec") "|" median("timing") : "|")
				print row >> out
			}
		}
	}'
}

# a markdown table from a header file and a rows file ("|"-separated)
table() {
	awk -F'|' '
	NR == 1 { n = NF; line = "|"; sep = "|"; for (i = 1; i <= NF; i++) { line = line " " $i " |"; sep = sep (i <= 2 ? " --- |" : " ---: |") } print line; print sep; next }
	{ line = "|"; for (i = 1; i <= n; i++) { v = $i; if (i > 2 && v ~ /^[0-9.]+$/) v = sprintf("%.1f", v); line = line " " v " |" } print line }' "$1" "$2"
}

rm -f "$OUTDIR/wall.rows" "$OUTDIR/backend.rows" "$OUTDIR/wall.rows.head" "$OUTDIR/backend.rows.head"
echo "f $F_N x d $D_N; runs $RUNS (medians); devices $DEVICES; workers $WORKERS; $(nproc) cores"
for device in $DEVICES; do
	for workers in $WORKERS; do
		echo "device $device, max_parallel_workers_per_gather $workers" >&2
		run_setting "$device" "$workers" | summarize "$device, $workers workers"
	done
done

MD=$OUTDIR/wall_clock.md
{
	echo "# Where the wall clock goes, per process (ms, median of $RUNS)"
	echo
	echo "\`$QUERY\`, f $F_N x d $D_N, $(nproc) cores, at $(git rev-parse --short HEAD 2>/dev/null)."
	echo "total = start (before the node's first call) + the parts from the first call to the shutdown;"
	echo "Execution Time and \\timing are the leader's (the query's)."
	echo
	table "$OUTDIR/wall.rows.head" "$OUTDIR/wall.rows"
	echo
	echo "## Backend Time by part, per process (ms, median)"
	echo
	table "$OUTDIR/backend.rows.head" "$OUTDIR/backend.rows"
} >"$MD"
cat "$MD"
