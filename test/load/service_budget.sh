#!/bin/bash
# test/load/service_budget.sh: the GPU service's device memory budget
# (gpujoin.service_device_memory; src/service/service_budget.c).
#
# On a throwaway cluster of its own (the setting is a postmaster one) with
# the service on SERVICE_BACKEND (default cpu; cuda on a GPU machine) and a
# total of 64MB for all its joins (on one device: the budget is per device,
# and a machine with two GPUs would double it): a session holds a join open in a cursor,
# and the joins of other sessions, which ask for more than is left, wait
# for it and then finish, or run at once with smaller tiles when a quarter
# of their budget is free, or run on the cpu backend after waiting 10 s;
# a cancel and a terminated client end their waits and reservations.  The
# service's row in gpujoin_devices() shows the budget, what is reserved and
# the joins waiting.  Ends with "service_budget: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="gpujoin.service = on
gpujoin.service_backend = ${SERVICE_BACKEND:-cpu}
gpujoin.devices = '0'
gpujoin.service_device_memory = 64MB" cluster_start || {
	echo "could not start a cluster"
	echo "service_budget: 0 passed, 1 failed"
	exit 1
}
OUT=$CLUSTER_DIR
PSQL="$PG_BINDIR/psql -X -q -At -v ON_ERROR_STOP=1 -d postgres"
. test/lib/check.sh

. test/lib/service.sh

$PSQL <<'SQL'
CREATE EXTENSION gpujoin;
CREATE TABLE br AS SELECT g AS id, g % 100 AS a FROM generate_series(1, 20000) g;
CREATE TABLE bs AS SELECT g AS id, g % 100 AS a FROM generate_series(1, 20000) g;
ANALYZE br;
ANALYZE bs;
SQL
for i in $(seq 100); do
	service_status | grep -q '^ready' && break
	sleep 0.1
done
FORCE="SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off;
	SET max_parallel_workers_per_gather = 0; SET gpujoin.device = service; SET gpujoin.enable_aggregate = off;"
QUERY="SELECT count(*) FROM br JOIN bs ON br.a = bs.a"
native=$($PSQL -c "SET gpujoin.enabled = off" -c "$QUERY")

check "the service's status shows the budget, nothing reserved and no join waiting" \
	$(service_status | grep -qE '; device memory: 0 bytes reserved \(of 67108864\), 0 joins waiting$' && echo 0 || echo 1) "$(service_status)"

# hold_join SECONDS BUDGET: a session whose join (4M rows, many steps) is
# open in a cursor, with a reservation of BUDGET, for SECONDS
hold_join() {
	$PSQL >"$OUT/holder.out" 2>&1 <<SQL &
$FORCE
SET gpujoin.device_memory = '$2';
BEGIN;
DECLARE c CURSOR FOR SELECT br.id, bs.id FROM br JOIN bs ON br.a = bs.a;
FETCH 1 FROM c;
SELECT pg_sleep($1);
COMMIT;
SQL
	holder=$!
}

# 1. a join that finds the whole budget reserved waits, then finishes
hold_join 3 64MB
service_wait '67108864 bytes reserved'
check "a join held open reserves its budget" $? "$(service_status)"
$PSQL -c "$FORCE SET gpujoin.device_memory = '64MB';" \
	-c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) SELECT br.id FROM br JOIN bs ON br.a = bs.a" \
	>"$OUT/waiter.out" 2>&1 &
waiter=$!
service_wait ', 1 joins waiting$'
check "a join that does not fit waits, and the status counts it" $? "$(service_status)"
wait $waiter
waiter_status=$?
wait $holder
queued=$(grep -oE 'Service Queue Time: [0-9.]+' "$OUT/waiter.out" | grep -oE '[0-9.]+$')
check "once the held join closes, the waiting one runs in the service with its whole budget" \
	$([ "$waiter_status" = 0 ] && grep -q 'Backend: cpu (service)\|Backend: cuda (service)' "$OUT/waiter.out" &&
		grep -q 'Device Memory Budget: 65536 kB' "$OUT/waiter.out" && echo 0 || echo 1) \
	"$(grep -E 'Backend|Budget|ERROR' "$OUT/waiter.out" | tr '\n' ' ')"
check "EXPLAIN ANALYZE shows the time it waited" \
	$(awk -v q="${queued:-0}" 'BEGIN { exit !(q >= 1000) }' && echo 0 || echo 1) "Service Queue Time ${queued:-none}"

# 2. a quarter of its budget free: it runs at once, with smaller tiles
hold_join 3 48MB
service_wait '50331648 bytes reserved'
out=$($PSQL -c "$FORCE SET gpujoin.device_memory = '64MB';" \
	-c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) SELECT br.id FROM br JOIN bs ON br.a = bs.a" 2>&1)
check "with a quarter of its budget free a join runs at once with what is free" \
	$(echo "$out" | grep -q 'Device Memory Budget: 16384 kB' && echo "$out" | grep -q '(service)' && echo 0 || echo 1) \
	"$(echo "$out" | grep -E 'Backend|Budget|Queue|ERROR' | tr '\n' ' ')"
result=$($PSQL -c "$FORCE SET gpujoin.device_memory = '64MB';" -c "$QUERY" 2>&1)
check "and gives the native plan's count" $([ "$result" = "$native" ] && echo 0 || echo 1) "native $native, got $result"
wait $holder

# 3. a cancel (statement_timeout) ends the wait; nothing stays counted
hold_join 3 64MB
service_wait '67108864 bytes reserved'
out=$($PSQL -c "$FORCE SET gpujoin.device_memory = '64MB'; SET statement_timeout = '1s';" -c "$QUERY" 2>&1)
check "a statement_timeout ends a join's wait for device memory with its ERROR" \
	$(echo "$out" | grep -q 'canceling statement due to statement timeout' && echo 0 || echo 1) "$out"
check "and it no longer counts as waiting" $(service_status | grep -qE ', 0 joins waiting$' && echo 0 || echo 1) "$(service_status)"
wait $holder

# 4. past the bound (10 s) the join runs on the cpu backend in the backend
hold_join 13 64MB
service_wait '67108864 bytes reserved'
out=$($PSQL -c "$FORCE SET gpujoin.device_memory = '64MB';" \
	-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT br.id FROM br JOIN bs ON br.a = bs.a" 2>&1)
check "a join that waited 10 s for device memory runs on the cpu backend, with a NOTICE" \
	$(echo "$out" | grep -q 'NOTICE:  GpuJoin is running on the cpu backend' &&
		echo "$out" | grep -q 'Backend: cpu (device memory busy' && echo 0 || echo 1) \
	"$(echo "$out" | grep -E 'NOTICE|DETAIL|Backend' | tr '\n' ' ')"
wait $holder

# 5. a client terminated while its join is open gives its reservation back
PGAPPNAME=gpujoin_budget_victim hold_join 30 64MB
service_wait '67108864 bytes reserved'
$PSQL -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gpujoin_budget_victim'" >/dev/null
wait $holder
service_wait '; device memory: 0 bytes reserved \(of 67108864\), 0 joins waiting$'
check "a client terminated with its join open leaves nothing reserved" $? "$(service_status)"
result=$($PSQL -c "$FORCE SET gpujoin.device_memory = '64MB';" -c "$QUERY" 2>&1)
check "and the next join runs with the native plan's count" $([ "$result" = "$native" ] && echo 0 || echo 1) \
	"native $native, got $result"

echo "service_budget: $passed passed, $failed failed"
[ "$failed" = 0 ]
