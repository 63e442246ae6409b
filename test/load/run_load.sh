#!/bin/bash
# test/load/run_load.sh: load test of gpujoin.
#
# pgbench with LOAD_CLIENTS clients (default 8) for LOAD_DURATION seconds
# (default 20) runs GpuJoins of every algorithm (hash.sql, sortmerge.sql,
# nestloop.sql), joins in the GPU service where it runs (service.sql) and
# GpuJoins ended by statement_timeout (timeout.sql), while
# a side session runs long GpuJoins that a canceller ends with
# pg_cancel_backend.  Then one session runs a batch of GpuJoins, errors and
# cancels (batch.sql) over and over, and the memory it holds
# (pg_backend_memory_contexts) must come back to where it was.  Checks, one
# test each: every script runs GpuJoin with its algorithm; pgbench ends with
# no client aborted and transactions of every script; the side session saw
# cancels and no other error, and works after them; the memory comes back;
# the server log has no crash, assertion failure or PANIC.
#
# Runs on a throwaway cluster, or with LOAD_USE_SERVER=1 on the server that
# PGHOST/PGPORT name.  The last line is "load: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
DURATION=${LOAD_DURATION:-20}
CLIENTS=${LOAD_CLIENTS:-8}
# growth of a session's memory over the batches that counts as a leak
MEMORY_SLACK_KB=${LOAD_MEMORY_SLACK_KB:-64}
RSS_SLACK_KB=${LOAD_RSS_SLACK_KB:-16384}
DB=gpujoin_load
PSQL="$PG_BINDIR/psql -X -q -A -t"
OUT=$(mktemp -d /tmp/gpujoin_load.XXXXXX)
chmod 755 "$OUT"
. test/lib/check.sh

finish() {
	[ -z "${LOAD_USE_SERVER:-}" ] && cluster_stop
	[ -n "${LOAD_KEEP:-}" ] || rm -rf "$OUT"
}
trap finish EXIT

if [ -z "${LOAD_USE_SERVER:-}" ]; then
	cluster_start || {
		echo "could not start a test cluster"
		echo "load: 0 passed, 1 failed"
		exit 1
	}
fi
LOG_LINES_BEFORE=0
[ -n "${CLUSTER_DIR:-}" ] && LOG_LINES_BEFORE=$(wc -l <"$CLUSTER_DIR/server.log")

$PSQL -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" &&
	$PSQL -d $DB -v ON_ERROR_STOP=1 -f test/load/setup.sql >/dev/null || {
	echo "could not set up the load database"
	echo "load: 0 passed, 1 failed"
	exit 1
}

# 1. each script's join runs as GpuJoin with its algorithm
plan_has() {
	# plan_has SETTINGS QUERY ALGORITHM
	$PSQL -d $DB -c "$1" -c "EXPLAIN (COSTS OFF) $2" | grep -q "Algorithm: $3"
}
plan_has "SELECT 1" "SELECT count(*) FROM lr JOIN ls ON lr.k = ls.k" hash
check "hash.sql runs a hash GpuJoin" $?
plan_has "SELECT 1" "SELECT count(*) FROM lr JOIN ls ON ls.t BETWEEN lr.t - 3 AND lr.t + 3" sortmerge
check "sortmerge.sql runs a sortmerge GpuJoin" $?
plan_has "SET gpujoin.algorithm = nestloop" "SELECT count(*) FROM lr JOIN ls ON lr.a + 1 < ls.b" nestloop
check "nestloop.sql runs a nestloop GpuJoin" $?

# 2. pgbench, with a side session whose long GpuJoins are cancelled
# The side session reads its queries from a pipe: a long GpuJoin every
# half second (each limited to 2s by statement_timeout, so nothing queues
# up), then, once the canceller has stopped, a short one that must work.
(
	end=$((SECONDS + DURATION))
	while [ $SECONDS -lt $end ]; do
		$PSQL -d $DB -c "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
			WHERE application_name = 'gpujoin_load_victim' AND state = 'active' AND query LIKE '%cancel-me%'" >>"$OUT/canceller.out" 2>&1
		sleep 0.$((2 + RANDOM % 5))
	done
) &
canceller=$!
(
	echo "SET application_name = 'gpujoin_load_victim';"
	echo "SET statement_timeout = '2s';"
	i=0
	while kill -0 $canceller 2>/dev/null; do
		case $((i++ % 3)) in
		0) echo "SET gpujoin.algorithm = nestloop; SELECT count(*) /* cancel-me */ FROM lr x JOIN ls y ON x.a + 1 < y.b - 1;" ;;
		1) echo "RESET gpujoin.algorithm; SELECT count(*) /* cancel-me */ FROM lr x JOIN ls y ON x.a < y.a;" ;;
		2) echo "SELECT count(*) /* cancel-me */ FROM lr x JOIN ls y ON x.h = y.h;" ;;
		esac
		sleep 0.5
	done
	echo "RESET gpujoin.algorithm;"
	echo "SELECT 'victim alive', count(*) FROM lr JOIN ls ON lr.k = ls.k WHERE lr.id <= 100;"
) | $PSQL -d $DB -v ON_ERROR_STOP=0 >"$OUT/victim.out" 2>"$OUT/victim.err" &
victim=$!

"$PG_BINDIR/pgbench" -n -c "$CLIENTS" -j 2 -T "$DURATION" \
	-f test/load/hash.sql@3 -f test/load/sortmerge.sql@3 -f test/load/nestloop.sql@3 \
	-f test/load/timeout.sql@1 -f test/load/service.sql@2 $DB >"$OUT/pgbench.log" 2>&1
pgbench_status=$?
wait $canceller
wait $victim
cat "$OUT/pgbench.log" | grep -E "^(number of|latency|tps|SQL script| - [0-9]+ transactions)" | sed 's/^/# /'
aborted=$(grep -c "aborted" "$OUT/pgbench.log")
check "pgbench: $CLIENTS clients, ${DURATION}s, exit status $pgbench_status, no client aborted" \
	$([ "$pgbench_status" = 0 ] && [ "$aborted" = 0 ] && echo 0 || echo 1) \
	"$(grep -m3 -iE "error|abort" "$OUT/pgbench.log")"
n_scripts=$(grep -cE "^ - [1-9][0-9]* transactions" "$OUT/pgbench.log")
check "pgbench: transactions of all 5 scripts" $([ "$n_scripts" = 5 ] && echo 0 || echo 1)
timeouts=$($PSQL -d $DB -c "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM load_cancels")
echo "# GpuJoins ended by statement_timeout in pgbench: $timeouts"
check "pgbench: statement_timeout ended GpuJoins" $([ "${timeouts:-0}" -gt 0 ] && echo 0 || echo 1)

cancels=$(grep -c "canceling statement due to user request" "$OUT/victim.err")
other=$(grep "ERROR" "$OUT/victim.err" | grep -vcE "canceling statement due to (user request|statement timeout)")
echo "# GpuJoins ended by pg_cancel_backend: $cancels; other errors: $other"
check "pg_cancel_backend ended GpuJoins, no other error" \
	$([ "$cancels" -gt 0 ] && [ "$other" = 0 ] && echo 0 || echo 1) "$(grep ERROR "$OUT/victim.err" | grep -vE 'user request|statement timeout' | head -3)"
grep -q "victim alive" "$OUT/victim.out"
check "the cancelled session runs GpuJoin afterwards" $?

# 3. a session's memory comes back after GpuJoins, errors and cancels
{
	echo "\\i test/load/batch.sql"
	echo "\\i test/load/batch.sql"
	echo "SELECT 'mem1 ' || sum(total_bytes) FROM pg_backend_memory_contexts;"
	echo "SELECT 'rss1 ' || substring(pg_read_file('/proc/' || pg_backend_pid() || '/status') FROM 'VmRSS:\\s*([0-9]+)');"
	for i in 1 2 3 4 5 6; do echo "\\i test/load/batch.sql"; done
	echo "SELECT 'mem2 ' || sum(total_bytes) FROM pg_backend_memory_contexts;"
	echo "SELECT 'rss2 ' || substring(pg_read_file('/proc/' || pg_backend_pid() || '/status') FROM 'VmRSS:\\s*([0-9]+)');"
	echo "SELECT 'contexts ' || count(*) FROM pg_backend_memory_contexts;"
} >"$OUT/memory.sql"
$PSQL -d $DB -v ON_ERROR_STOP=0 -f "$OUT/memory.sql" >"$OUT/memory.out" 2>"$OUT/memory.err"
mem1=$(sed -n 's/^mem1 //p' "$OUT/memory.out")
mem2=$(sed -n 's/^mem2 //p' "$OUT/memory.out")
unexpected=$(grep ERROR "$OUT/memory.err" | grep -vcE "out of range|statement timeout")
rss1=$(sed -n 's/^rss1 //p' "$OUT/memory.out")
rss2=$(sed -n 's/^rss2 //p' "$OUT/memory.out")
echo "# session memory contexts after 2 batches: ${mem1:-?} bytes, after 8: ${mem2:-?} bytes"
echo "# session RSS (malloc outside memory contexts too) after 2 batches: ${rss1:-?} kB, after 8: ${rss2:-?} kB"
check "session memory comes back (growth <= ${MEMORY_SLACK_KB}kB over 6 batches)" \
	$([ -n "$mem1" ] && [ -n "$mem2" ] && [ $((mem2 - mem1)) -le $((MEMORY_SLACK_KB * 1024)) ] && echo 0 || echo 1)
# RSS also counts shared buffers the session touches: a loose bound
check "session RSS comes back (growth <= ${RSS_SLACK_KB}kB over 6 batches)" \
	$([ -n "$rss1" ] && [ -n "$rss2" ] && [ $((rss2 - rss1)) -le "$RSS_SLACK_KB" ] && echo 0 || echo 1)
check "batch: only the intended errors" $([ "$unexpected" = 0 ] && echo 0 || echo 1) \
	"$(grep ERROR "$OUT/memory.err" | grep -vE "out of range|statement timeout" | head -3)"

# 3b. a backend that exits in the middle of a GpuJoin (pg_terminate_backend):
# the connection ends with FATAL, the server keeps running, the next GpuJoin works
#
# terminate_mid_join SETTINGS: a long nested-loop GpuJoin with SETTINGS in a
# session of its own, terminated once it runs; sets terminated (backends
# terminated) and leaves the session's stderr in $OUT/terminated.err
terminate_mid_join() {
	PGAPPNAME=gpujoin_load_terminated $PSQL -d $DB -c "SET enable_nestloop = off; SET enable_hashjoin = off;
		SET enable_mergejoin = off; SET gpujoin.enable_aggregate = off; SET gpujoin.algorithm = nestloop; $1
		SELECT count(*) /* terminate-me */ FROM lr x JOIN ls y ON x.a + 1 < y.b - 1;" \
		>"$OUT/terminated.out" 2>"$OUT/terminated.err" &
	local victim=$! i
	terminated=0
	for i in $(seq 50); do
		sleep 0.2
		terminated=$($PSQL -d $DB -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = 'gpujoin_load_terminated' AND state = 'active' AND query LIKE '%terminate-me%'")
		[ "${terminated:-0}" -gt 0 ] && break
	done
	wait $victim
}
terminate_mid_join ""
check "a backend terminated mid-join ends its connection" \
	$([ "${terminated:-0}" -gt 0 ] && grep -q "terminating connection due to administrator command" "$OUT/terminated.err" && echo 0 || echo 1) \
	"terminated ${terminated:-0}; $(head -2 "$OUT/terminated.err")"
after=$($PSQL -d $DB -c "SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
	SELECT 'after ' || count(*) FROM lr x JOIN ls y ON x.h = y.h;" 2>&1)
check "the server runs GpuJoin after a backend was terminated mid-join" \
	$(echo "$after" | grep -q "^after " && echo 0 || echo 1) "$after"

# 3c. where the GPU service runs: a client terminated in the middle of a join
# in the service, and after all the clients above, the service holds no
# staging memory and no join
if [ "$($PSQL -d $DB -c "SHOW gpujoin.service")" = on ]; then
	terminate_mid_join "SET max_parallel_workers_per_gather = 0; SET gpujoin.device = service;"
	status=""
	for i in $(seq 30); do
		status=$($PSQL -d $DB -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'")
		echo "$status" | grep -qE ', 0 bytes in use, 0 joins running, 0 queued, [1-9][0-9]* served; device memory: 0 bytes reserved \([^)]*\), 0 joins waiting$' && break
		sleep 0.2
	done
	echo "# service: $status"
	check "the service served the clients' joins, and after them and a client terminated mid-join it holds nothing" \
		$([ "${terminated:-0}" -gt 0 ] && echo "$status" | grep -qE ', 0 bytes in use, 0 joins running, 0 queued, [1-9][0-9]* served; device memory: 0 bytes reserved \([^)]*\), 0 joins waiting$' &&
			echo 0 || echo 1) "terminated ${terminated:-0}; $status"
fi

# 4. the server log
if [ -n "${CLUSTER_DIR:-}" ]; then
	tail -n +$((LOG_LINES_BEFORE + 1)) "$CLUSTER_DIR/server.log" >"$OUT/server.log"
	grep -E "terminated by signal|TRAP:|PANIC|server process .* exited" "$OUT/server.log" >"$OUT/crashes"
	check "server log: no crash, assertion failure or PANIC" $([ -s "$OUT/crashes" ] && echo 1 || echo 0) "$(head -3 "$OUT/crashes")"
fi

echo "load: $passed passed, $failed failed"
[ "$failed" = 0 ]
