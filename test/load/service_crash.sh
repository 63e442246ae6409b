#!/bin/bash
# test/load/service_crash.sh: the GPU service killed with SIGKILL in the
# middle of a join (docs/architecture.md, section 8, "The service killed").
#
# On a throwaway cluster of its own (test/lib/cluster.sh; the extension must
# be installed) with the service on SERVICE_BACKEND (default cpu; cuda on a
# GPU machine): a session runs a long join in the service, the service gets
# SIGKILL, and then, as for any process attached to shared memory, the
# postmaster ends every session and reinitialises shared memory.  Checked:
# the session's query ends with an error (its connection is closed), the
# postmaster logs the crash and the reinitialisation, the server accepts
# connections again, the service comes back with a new pid, and a join runs
# in it with the native plan's rows.  Ends with "service_crash: N passed,
# N failed".
set -u
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="gpujoin.service = on
gpujoin.service_backend = ${SERVICE_BACKEND:-cpu}
restart_after_crash = on" cluster_start || {
	echo "could not start a cluster"
	echo "service_crash: 0 passed, 1 failed"
	exit 1
}
OUT=$CLUSTER_DIR
PSQL="$PG_BINDIR/psql -X -q -At -v ON_ERROR_STOP=1 -d postgres"
. test/lib/check.sh
# the service's pid once it is ready and not old_pid (waits up to 60 s:
# the server may still be recovering)
service_pid() {
	local old=${1:-0} i pid
	for i in $(seq 300); do
		pid=$($PSQL -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'gpujoin service'
			AND (SELECT status LIKE 'ready%' FROM gpujoin_devices() WHERE backend = 'service')" 2>/dev/null)
		if [ -n "$pid" ] && [ "$pid" != "$old" ]; then
			echo "$pid"
			return
		fi
		sleep 0.2
	done
}

$PSQL <<'SQL'
CREATE EXTENSION gpujoin;
CREATE TABLE cr AS SELECT g AS id, g % 1000 AS a FROM generate_series(1, 40000) g;
CREATE TABLE cs AS SELECT g AS id, g % 997 AS a FROM generate_series(1, 40000) g;
ANALYZE cr;
ANALYZE cs;
SQL
FORCE="SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off;
	SET max_parallel_workers_per_gather = 0; SET gpujoin.device = service; SET gpujoin.enable_aggregate = off;"
native=$($PSQL -c "SET gpujoin.enabled = off" -c "SELECT count(*) FROM cr JOIN cs ON cr.a = cs.a")
pid1=$(service_pid)
check "the service runs" $([ -n "$pid1" ] && echo 0 || echo 1)

# a join in the service that runs for a while: a nested loop over 1.6G pairs
PGAPPNAME=gpujoin_crash_victim $PSQL -c "$FORCE SET gpujoin.algorithm = nestloop;" \
	-c "SELECT count(*) /* kill-me */ FROM cr x JOIN cs y ON x.a * 7 + y.a % 5 < x.id - y.id" \
	>"$OUT/victim.out" 2>"$OUT/victim.err" &
victim=$!
running=""
for i in $(seq 50); do
	sleep 0.2
	running=$($PSQL -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'gpujoin_crash_victim'
		AND state = 'active' AND query LIKE '%kill-me%'")
	[ "${running:-0}" -gt 0 ] && break
done
sleep 0.5
[ -n "$pid1" ] && kill -KILL "$pid1"
wait $victim
victim_status=$?
check "the session whose join ran in the killed service ends with an error" \
	$([ "${running:-0}" -gt 0 ] && [ "$victim_status" != 0 ] && [ -s "$OUT/victim.err" ] && echo 0 || echo 1) \
	"running ${running:-0}, exit $victim_status: $(head -2 "$OUT/victim.err" | tr '\n' ' ')"
echo "# the session saw: $(head -3 "$OUT/victim.err" | tr '\n' ' ')"

pid2=$(service_pid "$pid1")
check "the server accepts connections again and the service is back, with a new pid" \
	$([ -n "$pid2" ] && echo 0 || echo 1) "pid before $pid1, after ${pid2:-none}"
grep -E "gpujoin service.*terminated by signal 9|terminating any other active server processes|all server processes terminated; reinitializing" \
	"$CLUSTER_DIR/server.log" | sed 's/^/# log: /' | head -4
check "the postmaster logged the crash and reinitialised shared memory" \
	$(grep -q "terminated by signal 9" "$CLUSTER_DIR/server.log" &&
		grep -q "all server processes terminated; reinitializing" "$CLUSTER_DIR/server.log" && echo 0 || echo 1)
after=$($PSQL -c "$FORCE" -c "SELECT count(*) FROM cr JOIN cs ON cr.a = cs.a" 2>&1)
check "a join in the restarted service gives the native plan's count" \
	$([ "$after" = "$native" ] && echo 0 || echo 1) "native $native, service $after"
explain=$($PSQL -c "$FORCE" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT cr.id FROM cr JOIN cs ON cr.a = cs.a" 2>&1)
check "EXPLAIN ANALYZE shows it ran in the service" \
	$(echo "$explain" | grep -qE 'Backend: (cpu|cuda) \(service\)' && echo 0 || echo 1) "$(echo "$explain" | grep Backend)"

echo "service_crash: $passed passed, $failed failed"
[ "$failed" = 0 ]
