#!/bin/bash
# test/bench/bench_compiled_programs.sh: device programs compiled to GPU
# code against interpreted, end to end (issue 37).
#
# What it measures: nested-loop GpuJoins whose program is more than a few
# compares, over two tables of N random int4 rows (a, b uniform in
# [0, 1e9)), serial (max_parallel_workers_per_gather = 0) and
# gpujoin.algorithm = nestloop:
#
#   count   SELECT count(*) ... ON r.a < s.a AND r.b > s.b AND r.a + s.b > 0
#           (the program count kernel)
#   rows    SELECT r.id, s.id ... ON r.b < s.a AND r.a + s.b > C
#           (the nested loop's pairs kernels; C near 2e9 keeps a few
#           thousand rows, so that the program, not the output, is the work)
#   sum     SELECT sum(s.b) ... ON r.a < s.a AND r.b > s.b AND r.a + s.b > 0
#           (an aggregate step folded on the device: compiled, it reads
#           the verdict kernel's bits; not in the default SHAPES)
#
# each timed with psql's \timing three ways: gpujoin.compile_programs = off
# (interpreted); on, cold (a program the process has never seen: the
# constant changes every run, so each run compiles anew, in the background
# while the first steps interpret); on, warm (the same program again: the
# kernel from the process's cache).  RUNS runs each, the medians, and the
# cold runs' Program line from EXPLAIN ANALYZE.  On a throwaway cluster a
# fourth way: after a restart of the server, the warm runs' program as the
# first query of the new server (EXPLAIN (ANALYZE, VERBOSE), timed by
# \timing; its kernel comes from the kernel store,
# gpujoin.compiled_kernel_dir), its Program line, and how long of it the
# join waited for the GPU service, which starts again with the server
# (opening CUDA and pinning its staging memory), to be ready ("Service
# Start Wait" in EXPLAIN ANALYZE; pg_ctl's -w waits for connections, not
# for the service); the log has that EXPLAIN and the same query's from a
# second connection after it.
#
# Environment:
#   N           rows of each table              default 1000000
#   RUNS        runs per way (median)           default 3
#   SHAPES      which shapes                    default "count rows"
#   SKIP_OFF    1: leave out the interpreted runs (at 1M x 1M the count
#               takes 12 s a run interpreted on an H200)
#   OUTDIR      where compiled.md and run.log go
#                                       default bench_out/compiled-<date>
#
# With PGHOST or PGPORT set it uses that server; otherwise a throwaway
# cluster (test/lib/bench_server.sh) with GPUJOIN_CLUSTER_CONF as extra
# settings.  On a machine without a GPU every program runs interpreted
# (the cpu backend) and the three columns measure the same thing.
#
#   N=200000 RUNS=3 test/bench/bench_compiled_programs.sh
set -u
cd "$(dirname "$0")/../.."

PGHOST_GIVEN=${PGHOST:-${PGPORT:-}}
N=${N:-1000000}
RUNS=${RUNS:-3}
OUTDIR=${OUTDIR:-bench_out/compiled-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/run.log
: >"$LOG"

. test/lib/bench_server.sh
bench_server "${GPUJOIN_CLUSTER_CONF:-}"

echo "generating $N x $N rows"
psql_run -v ON_ERROR_STOP=1 >>"$LOG" 2>&1 <<SQL || { echo "data generation failed (see $LOG)" >&2; exit 1; }
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS gpujoin_compiled CASCADE;
CREATE SCHEMA gpujoin_compiled;
SET search_path = gpujoin_compiled;
SELECT setseed(0.37);
CREATE TABLE r AS SELECT i AS id, (random() * 1e9)::int4 AS a, (random() * 1e9)::int4 AS b
    FROM generate_series(1, $N) i;
CREATE TABLE s AS SELECT i AS id, (random() * 1e9)::int4 AS a, (random() * 1e9)::int4 AS b
    FROM generate_series(1, $N) i;
VACUUM ANALYZE;
SQL
trap 'psql_run -c "DROP SCHEMA gpujoin_compiled CASCADE" >/dev/null 2>&1; [ "$(type -t cluster_stop)" = function ] && cluster_stop' EXIT

PRELUDE="SET search_path = gpujoin_compiled, public;
SET max_parallel_workers_per_gather = 0;
SET gpujoin.algorithm = nestloop;
SET statement_timeout = '300s';"

# the query of a shape with constant C (the program's bytes change with it)
query() {
	case $1 in
		count) echo "SELECT count(*) FROM r JOIN s ON r.a < s.a AND r.b > s.b AND r.a + s.b > $2" ;;
		rows) echo "SELECT r.id, s.id FROM r JOIN s ON r.b < s.a AND r.a + s.b > $((1999000000 + $2))" ;;
		sum) echo "SELECT sum(s.b) FROM r JOIN s ON r.a < s.a AND r.b > s.b AND r.a + s.b > $2" ;;
	esac
}

# a query that failed leaves no time worth printing: stop, naming its error
failed() {
	if echo "$1" | grep -q '^ERROR:'; then
		echo "a query failed (see $LOG): $(echo "$1" | grep -m1 '^ERROR:')" >&2
		exit 1
	fi
}

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }


# One session per shape (its CUDA context and cache of compiled kernels
# are the process's): a warm-up, then the three ways, each statement's
# \timing labelled by the way it measures.
ROWS=$OUTDIR/rows.txt
: >"$ROWS"
for shape in ${SHAPES:-count rows}; do
	echo "shape $shape" >&2
	off_runs=$RUNS
	[ "${SKIP_OFF:-}" = 1 ] && off_runs=0
	base=$(( $(date +%s) % 100000 * 10 + 7 ))
	out=$( {
		echo "$PRELUDE"
		echo "SET gpujoin.compile_programs = off;"
		[ "$off_runs" -gt 0 ] && echo "$(query $shape 0) \\g /dev/null"
		echo '\timing on'
		for r in $(seq "$off_runs"); do echo '\echo @@off'; echo "$(query $shape 0) \\g /dev/null"; done
		echo "SET gpujoin.compile_programs = on;"
		for r in $(seq "$RUNS"); do echo '\echo @@cold'; echo "$(query $shape $((base + r))) \\g /dev/null"; done
		echo '\timing off'
		echo "EXPLAIN (ANALYZE, COSTS OFF) $(query $shape $((base + RUNS + 1)));"
		echo "SET gpujoin.compile_programs = always;"
		echo "$(query $shape 0) \\g /dev/null"
		echo "SET gpujoin.compile_programs = on;"
		echo '\timing on'
		for r in $(seq "$RUNS"); do echo '\echo @@warm'; echo "$(query $shape 0) \\g /dev/null"; done
	} | psql_run -At 2>&1 | tee -a "$LOG")
	failed "$out"
	pick() { echo "$out" | awk -v w="@@$1" '$0 == w { take = 1; next } take && /^Time: / { sub(/^Time: /, ""); print $1 + 0; take = 0 }' | median; }
	program=$(echo "$out" | grep -E 'Program:' | head -1 | sed -E 's/^ *Program: //')
	times="$(pick off)|$(pick cold)|$(pick warm)"
	restart=""
	restart_program=""
	restart_wait=""
	if [ -n "${CLUSTER_DIR:-}" ] && [ -z "${PGHOST_GIVEN:-}" ]; then
		# the server restarted: the warm runs' program is new to every process
		as_owner "'$PG_BINDIR/pg_ctl' -D '$CLUSTER_DIR/data' -l '$CLUSTER_DIR/server.log' -m fast -w -t 60 restart >/dev/null 2>&1" ||
			echo "could not restart the server" >&2
		out_restart=$( {
			echo "$PRELUDE"
			echo "SET gpujoin.compile_programs = on;"
			echo '\timing on'
			echo '\echo @@restart'
			echo "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) $(query $shape 0);"
		} | psql_run -At 2>&1 | tee -a "$LOG")
		failed "$out_restart"
		# and once more, from a new connection to the same server
		{
			echo "$PRELUDE"
			echo "SET gpujoin.compile_programs = on;"
			echo '\timing on'
			echo '\echo @@restart-2'
			echo "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) $(query $shape 0);"
		} | psql_run -At >>"$LOG" 2>&1
		restart=$(echo "$out_restart" | awk '$0 == "@@restart" { take = 1; next } take && /^Time: / { sub(/^Time: /, ""); print $1 + 0; take = 0 }')
		restart_program=$(echo "$out_restart" | grep -E 'Program:' | head -1 | sed -E 's/^ *Program: //')
		restart_wait=$(echo "$out_restart" | grep -E 'Service Start Wait:' | head -1 | sed -E 's/^ *Service Start Wait: //; s/ ms$//')
		# what the service's start took, by its own LOG lines (pinning the staging area)
		grep -h "gpujoin service" "$CLUSTER_DIR/server.log" 2>/dev/null | tail -3 >>"$LOG"
	fi
	echo "$shape|$times|$program|$restart|$restart_program|$restart_wait" >>"$ROWS"
done

MD=$OUTDIR/compiled.md
{
	echo "# Device programs compiled against interpreted, end to end (ms, median of $RUNS)"
	echo
	echo "r x s, $N x $N random int4 rows, serial, nested loop, at $(git rev-parse --short HEAD 2>/dev/null), $(nproc) cores."
	echo
	echo "| shape | query | off (interpreted) | on, cold (compiles) | on, warm (cached) | off / warm | a cold run's Program line | first query after a restart | its Program line | of it, waiting for the GPU service to start |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: |"
	while IFS='|' read -r shape off cold warm program restart restart_program restart_wait; do
		ratio=$(awk -v a="$off" -v b="$warm" 'BEGIN { if (b > 0 && a != "") printf "%.1f", a / b }')
		case $shape in
			count) q='count(*) of r.a < s.a AND r.b > s.b AND r.a + s.b > C' ;;
			rows) q='r.id, s.id of r.b < s.a AND r.a + s.b > 1999000000 + C' ;;
			sum) q='sum(s.b) of r.a < s.a AND r.b > s.b AND r.a + s.b > C' ;;
		esac
		echo "| $shape | \`$q\` | $off | $cold | $warm | $ratio | $program | $restart | $restart_program | ${restart:+${restart_wait:-0}} |"
	done <"$ROWS"
} >"$MD"
cat "$MD"
