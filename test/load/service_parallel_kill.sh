#!/bin/bash
# test/load/service_parallel_kill.sh: processes of a parallel GpuJoin with a
# shared inner side (docs/architecture.md, section 8, "Parallel GpuJoin")
# terminated in the middle of the join.
#
# On a throwaway cluster of its own (test/lib/cluster.sh; the extension must
# be installed) with the service on SERVICE_BACKEND (default cpu; cuda on a
# GPU machine): a session runs a long parallel join in the service whose
# inner side one process drained and every process reads from the
# service's staging area; then
#   1. pg_terminate_backend of the Gather's leader: the session ends with an
#      error, and within a few seconds the service holds no join and no
#      staging memory (the leader's exit detaches it and drops the query's
#      hold; the workers end with it; the sweep takes whatever a process
#      that is gone left);
#   2. pg_terminate_backend of one parallel worker (perhaps the one that
#      drained the inner side, which the others still read): the leader's
#      query ends with that worker's error, and again nothing stays;
#   3. pg_terminate_backend of the service: the query ends with an error
#      naming it, and once the postmaster has started it again nothing of
#      the shared inner side stays in staging (the dead service handed its
#      chunk to the leader, which freed it at the end of its query);
#   4. a join whose inner side is drained in parallel (a partial path whose
#      filter sleeps, so the drain takes seconds): a worker, then the
#      leader, terminated while the processes drain and stage their shares;
#      the query ends with an error and nothing stays in the service;
# and after them the next parallel join shares its inner side and gives the
# native plan's rows.  Ends with "service_parallel_kill: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="gpujoin.service = on
gpujoin.service_backend = ${SERVICE_BACKEND:-cpu}
gpujoin.service_staging_memory = 64MB" cluster_start || {
	echo "could not start a cluster"
	echo "service_parallel_kill: 0 passed, 1 failed"
	exit 1
}
OUT=$CLUSTER_DIR
PSQL="$PG_BINDIR/psql -X -q -At -v ON_ERROR_STOP=1 -d postgres"
. test/lib/check.sh

$PSQL <<'SQL'
CREATE EXTENSION gpujoin;
-- big enough an outer side that the workers, which start later than the
-- leader, still find pages of it to read (a process with no outer rows
-- opens no join)
CREATE TABLE kf AS SELECT g AS id, (g::bigint * 7919) % 20011 AS k FROM generate_series(1, 1000000) g;
CREATE TABLE kd AS SELECT g AS k, g % 13 AS w, 'd' || g AS t FROM generate_series(1, 20000) g;
ANALYZE kf;
ANALYZE kd;
SQL
FORCE="SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off;
	SET gpujoin.device = service; SET gpujoin.enable_aggregate = off;
	SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0; SET gpujoin.algorithm = nestloop;"
# 2G pairs on a nested loop: seconds, in every process
# a GPU runs the 2G pairs of the cpu service's slow join in a blink: give
# it 20G, so that it is still running when a process is terminated
SLOW_INNER=${SLOW_INNER:-$([ "${SERVICE_BACKEND:-cpu}" = cuda ] && echo 20000 || echo 2000)}
SLOW="SELECT count(*) /* kill-me */ FROM kf JOIN kd ON kf.k * 3 + kd.k % 7 < kf.k - kd.k AND kd.k <= $SLOW_INNER"

. test/lib/service.sh
# wait (up to 10 s) until the service holds no join and no staging memory
idle() {
	service_wait ', 0 bytes in use, 0 joins running,'
}
# run the slow join in the background as application name $1; wait until
# the service runs at least $2 joins of it (its processes opened theirs)
start_victim() {
	local i n
	PGAPPNAME=$1 $PSQL -c "$FORCE" -c "$SLOW" >"$OUT/$1.out" 2>"$OUT/$1.err" &
	victim=$!
	for i in $(seq 200); do
		sleep 0.1
		n=$(service_status | sed -nE 's/.*, ([0-9]+) joins running,.*/\1/p')
		[ "${n:-0}" -ge "$2" ] && return 0
	done
	return 1
}

explain=$($PSQL -c "$FORCE" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${SLOW/kd.k <= 2000/kd.k <= 2}" 2>&1)
check "the slow join (on less input) is a parallel GpuJoin with a shared inner side" \
	$(echo "$explain" | grep -q 'Workers Launched: [1-9]' && echo "$explain" | grep -q 'Inner Side: shared' && echo 0 || echo 1) \
	"$(echo "$explain" | grep -E 'Workers|Inner|Backend' | tr '\n' ' ')"

# 1. the leader terminated
start_victim gj_kill_leader 1
running=$?
leader=$($PSQL -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'gj_kill_leader' AND backend_type = 'client backend' AND query LIKE '%kill-me%'")
workers=$($PSQL -c "SELECT count(*) FROM pg_stat_activity WHERE leader_pid = ${leader:-0} AND backend_type = 'parallel worker'")
echo "# leader ${leader:-none}, ${workers:-0} workers, service: $(service_status)"
[ -n "$leader" ] && $PSQL -c "SELECT pg_terminate_backend($leader)" >/dev/null
wait $victim
victim_status=$?
check "the leader of a parallel join in the service, terminated mid-join, ends its session with an error" \
	$([ "$running" = 0 ] && [ -n "$leader" ] && [ "$victim_status" != 0 ] && echo 0 || echo 1) \
	"running $running, leader ${leader:-none}, exit $victim_status: $(head -2 "$OUT/gj_kill_leader.err" | tr '\n' ' ')"
idle
check "after the leader's end the service holds no join and no staging memory" $? "$(service_status)"

# 2. a worker terminated
start_victim gj_kill_worker 2
running=$?
leader=$($PSQL -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'gj_kill_worker' AND backend_type = 'client backend' AND query LIKE '%kill-me%'")
worker=$($PSQL -c "SELECT pid FROM pg_stat_activity WHERE leader_pid = ${leader:-0} AND backend_type = 'parallel worker' AND state = 'active' LIMIT 1")
echo "# leader ${leader:-none}, worker ${worker:-none}, service: $(service_status)"
[ -n "$worker" ] && $PSQL -c "SELECT pg_terminate_backend($worker)" >/dev/null
wait $victim
victim_status=$?
check "a parallel worker terminated mid-join ends the leader's query with an error" \
	$([ "$running" = 0 ] && [ -n "$worker" ] && [ "$victim_status" != 0 ] && echo 0 || echo 1) \
	"running $running, worker ${worker:-none}, exit $victim_status: $(head -2 "$OUT/gj_kill_worker.err" | tr '\n' ' ')"
idle
check "after the worker's end the service holds no join and no staging memory" $? "$(service_status)"

# 3. the service terminated (SIGTERM: an orderly exit; the postmaster starts
# it again): the shared inner side's chunk goes to the Gather's leader,
# which frees it when its query ends, so nothing of it stays in staging
start_victim gj_kill_service 1
running=$?
service=$($PSQL -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'gpujoin service'")
[ -n "$service" ] && $PSQL -c "SELECT pg_terminate_backend($service)" >/dev/null
wait $victim
victim_status=$?
check "a parallel join whose service is terminated mid-join ends with an error" \
	$([ "$running" = 0 ] && [ -n "$service" ] && [ "$victim_status" != 0 ] && echo 0 || echo 1) \
	"running $running, service ${service:-none}, exit $victim_status: $(head -2 "$OUT/gj_kill_service.err" | tr '\n' ' ')"
idle
check "after the service's restart it holds no join and no staging memory" $? "$(service_status)"

# 4. terminated while the processes drain their shares of the inner side
$PSQL <<'SQL'
CREATE FUNCTION slow_true(int) RETURNS bool LANGUAGE plpgsql PARALLEL SAFE AS $$
BEGIN
    PERFORM pg_sleep(0.001);
    RETURN true;
END $$;
SQL
SLOW_DRAIN="SELECT count(*) /* drain-me */ FROM kf JOIN kd ON kf.k = kd.k AND slow_true(kd.k)"
explain=$($PSQL -c "$FORCE SET gpujoin.algorithm = auto;" -c "EXPLAIN (COSTS OFF) $SLOW_DRAIN" 2>&1)
check "the slow drain is a parallel GpuJoin whose inner side is drained in parallel" \
	$(echo "$explain" | grep -q 'Parallel Seq Scan on kd' && echo 0 || echo 1) "$(echo "$explain" | tr '\n' ' ')"
# run the slow drain as application name $1 and terminate its $2 (worker or
# leader) a second after the workers started: 20000 rows at 1 ms each take
# the processes seconds to drain
kill_in_drain() {
	local i leader="" workers=0 target="" status
	PGAPPNAME=$1 $PSQL -c "$FORCE SET gpujoin.algorithm = auto;" -c "$SLOW_DRAIN" >"$OUT/$1.out" 2>"$OUT/$1.err" &
	victim=$!
	for i in $(seq 100); do
		sleep 0.1
		leader=$($PSQL -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$1' AND backend_type = 'client backend' AND query LIKE '%drain-me%'")
		[ -n "$leader" ] && workers=$($PSQL -c "SELECT count(*) FROM pg_stat_activity WHERE leader_pid = $leader AND backend_type = 'parallel worker'")
		[ "${workers:-0}" -ge 1 ] && break
	done
	sleep 1
	status=$(service_status)
	if [ "$2" = worker ] && [ -n "$leader" ]; then
		target=$($PSQL -c "SELECT pid FROM pg_stat_activity WHERE leader_pid = $leader AND backend_type = 'parallel worker' LIMIT 1")
	else
		target=$leader
	fi
	echo "# $2 ${target:-none} of leader ${leader:-none} (${workers:-0} workers), service: $status"
	[ -n "$target" ] && $PSQL -c "SELECT pg_terminate_backend($target)" >/dev/null
	wait $victim
	victim_status=$?
	check "a $2 terminated while the processes drain the inner side's shares ends the query with an error" \
		$([ -n "$target" ] && [ "$victim_status" != 0 ] && echo "$status" | grep -q ', 0 joins running,' && echo 0 || echo 1) \
		"target ${target:-none}, exit $victim_status, service then: $status: $(head -2 "$OUT/$1.err" | tr '\n' ' ')"
	idle
	check "after the $2's end mid-drain the service holds no join and no staging memory" $? "$(service_status)"
}
kill_in_drain gj_kill_drain_worker worker
kill_in_drain gj_kill_drain_leader leader

# the next parallel join
Q="SELECT kf.id, kd.w, kd.t FROM kf JOIN kd ON kf.k = kd.k"
DIGEST="SELECT count(*) || ' ' || md5(string_agg(t::text, ',' ORDER BY t::text)) FROM ($Q) t"
native=$($PSQL -c "SET gpujoin.enabled = off; SET max_parallel_workers_per_gather = 0;" -c "$DIGEST")
after=$($PSQL -c "$FORCE SET gpujoin.algorithm = auto;" -c "$DIGEST" 2>&1)
check "the next parallel join gives the native plan's rows" \
	$([ "$after" = "$native" ] && echo 0 || echo 1) "native $native, parallel $after"
explain=$($PSQL -c "$FORCE SET gpujoin.algorithm = auto;" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $Q" 2>&1)
check "... draining its inner side once, shared" \
	$(echo "$explain" | grep -q 'Inner Rows Drained: 20000$' && echo "$explain" | grep -q 'Inner Side: shared' && echo 0 || echo 1) \
	"$(echo "$explain" | grep -E 'Workers|Inner' | tr '\n' ' ')"
idle
check "and the service is idle after it" $? "$(service_status)"
! grep -E "PANIC|terminated by signal|server process .* was terminated" "$CLUSTER_DIR/server.log" | head -3 | sed 's/^/# log: /' | grep -q .
check "no process crashed (the server log)" $?

echo "service_parallel_kill: $passed passed, $failed failed"
[ "$failed" = 0 ]
