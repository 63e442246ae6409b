#!/bin/bash
# test/load/service_devices.sh: the GPU service on several devices (issue
# 22; docs/architecture.md, section 8, phase E), in CI without a GPU.
#
# On a throwaway cluster of its own (test/lib/cluster.sh; the extension must
# be installed) with the service on the cpu backend and three simulated
# devices (gpujoin.service_simulated_devices = 3, a postmaster setting, so
# the main test cluster cannot have it):
#   - test/pgtap/service_devices.sql: joins and aggregates spread over the
#     devices equal the native plan's, EXPLAIN's "Devices:", the device rows
#     of gpujoin_devices(), a statement_timeout mid-join;
#   - concurrent sessions, each running a join on one device, go to
#     different devices (the least loaded one);
#   - a client terminated in the middle of a spread join leaves nothing on
#     any device once the service's sweep has run;
#   - restarted with gpujoin.devices = '0,2': the service uses those two;
#   - restarted with gpujoin.service_device_memory = 8MB: the budget is 8MB
#     on each device, a join's budget is capped at one device's share, and
#     it is reserved on one device with room, never over the devices' sum.
# Ends with "service_devices: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="gpujoin.service = on
gpujoin.service_backend = cpu
gpujoin.service_simulated_devices = 3" cluster_start || {
	echo "could not start a cluster"
	echo "service_devices: 0 passed, 1 failed"
	exit 1
}
OUT=$CLUSTER_DIR
PSQL="$PG_BINDIR/psql -X -q -At -v ON_ERROR_STOP=1"
. test/lib/check.sh
. test/lib/service.sh

# wait until the service is ready (up to 30 s)
service_ready() {
	local i
	for i in $(seq 150); do
		[ "$($PSQL -d gpujoin_tap -c "SELECT status LIKE 'ready%' FROM gpujoin_devices() WHERE backend = 'service'" 2>/dev/null)" = t ] && return 0
		sleep 0.2
	done
	return 1
}

$PSQL -d postgres -c "CREATE DATABASE gpujoin_tap" &&
	$PSQL -d gpujoin_tap -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION gpujoin" || {
	echo "could not prepare the pgTAP database"
	echo "service_devices: 0 passed, 1 failed"
	exit 1
}
service_ready
check "the service is ready with 3 simulated devices" \
	$([ "$($PSQL -d gpujoin_tap -c "SELECT count(*) FROM gpujoin_devices() WHERE backend = 'service device'")" = 3 ] && echo 0 || echo 1)

# the pgTAP file: each of its tests counts here
pg_prove --verbose -d gpujoin_tap test/pgtap/service_devices.sql >"$OUT/prove.log" 2>&1
prove_status=$?
sed 's/^/# /' "$OUT/prove.log" | grep -E '^# (not )?ok|^# Result|^# #' | head -60
t_ok=$(grep -cE '^ok [0-9]+' "$OUT/prove.log")
t_bad=$(grep -cE '^not ok [0-9]+' "$OUT/prove.log")
if [ "$prove_status" != 0 ] && [ "$t_bad" = 0 ]; then
	t_bad=1
fi
passed=$((passed + t_ok))
failed=$((failed + t_bad))

$PSQL -d gpujoin_tap <<'SQL'
CREATE TABLE cr AS SELECT g AS id, g % 1000 AS a FROM generate_series(1, 40000) g;
CREATE TABLE cs AS SELECT g AS id, g % 997 AS a FROM generate_series(1, 40000) g;
ANALYZE cr;
ANALYZE cs;
SQL
FORCE="SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off;
	SET max_parallel_workers_per_gather = 0; SET gpujoin.device = service; SET gpujoin.enable_aggregate = off;"
# devices with a join open now
devices_busy() {
	$PSQL -d gpujoin_tap -c "SELECT count(*) FROM gpujoin_devices() WHERE backend = 'service device' AND status !~ ' 0 joins open'"
}

# Concurrent sessions: three hash joins whose rows are consumed slowly (a
# sleep per row above the join), so each keeps its join open on a device
# for about two seconds.  The least loaded device takes each.
for s in 1 2 3; do
	$PSQL -d gpujoin_tap -c "$FORCE SET gpujoin.algorithm = hash;" \
		-c "SELECT count(pg_sleep(0.001)) FROM (SELECT cr.id FROM cr JOIN cs ON cr.a = cs.a AND cr.id < 50) j" \
		>"$OUT/concurrent$s.out" 2>&1 &
	eval "pid$s=\$!"
done
most=0
for i in $(seq 60); do
	n=$(devices_busy)
	[ "${n:-0}" -gt "$most" ] && most=$n
	[ "$most" = 3 ] && break
	sleep 0.1
done
wait $pid1 $pid2 $pid3
check "three concurrent sessions' joins run on three different devices at once" \
	$([ "$most" = 3 ] && echo 0 || echo 1) "at most $most devices had a join open at once"
check "and their answers are right" \
	$(native=$($PSQL -d gpujoin_tap -c "SET gpujoin.enabled = off" -c "SELECT count(*) FROM cr JOIN cs ON cr.a = cs.a AND cr.id < 50");
	[ "$(cat "$OUT"/concurrent[123].out | sort -u)" = "$native" ] && echo 0 || echo 1) \
	"$(cat "$OUT"/concurrent[123].out | tr '\n' ' ')"

# A client terminated in the middle of a join spread over the devices.
PGAPPNAME=gpujoin_devices_victim $PSQL -d gpujoin_tap -c "$FORCE SET gpujoin.algorithm = nestloop;" \
	-c "SELECT count(*) FROM cr x JOIN cs y ON x.a * 7 + y.a % 5 < x.id - y.id" >/dev/null 2>&1 &
victim=$!
spread=0
for i in $(seq 50); do
	sleep 0.2
	spread=$(devices_busy)
	[ "${spread:-0}" = 3 ] && break
done
$PSQL -d gpujoin_tap -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gpujoin_devices_victim'" >/dev/null
wait $victim
clean=1
for i in $(seq 50); do
	if [ "$(devices_busy)" = 0 ] &&
		[ "$($PSQL -d gpujoin_tap -c "SELECT status ~ ', 0 bytes in use, 0 joins running,' FROM gpujoin_devices() WHERE backend = 'service'")" = t ]; then
		clean=0
		break
	fi
	sleep 0.1
done
check "a client terminated mid-join (its join open on all 3 devices) leaves nothing on any device" \
	$([ "$spread" = 3 ] && [ "$clean" = 0 ] && echo 0 || echo 1) \
	"devices busy before: $spread; after: $($PSQL -d gpujoin_tap -c "SELECT string_agg(status, '; ') FROM gpujoin_devices() WHERE backend LIKE 'service%'")"

# gpujoin.devices picks devices: restart with two of the three
echo "gpujoin.devices = '0,2'" >>"$CLUSTER_DIR/data/postgresql.conf"
as_owner "'$PG_BINDIR/pg_ctl' -D '$CLUSTER_DIR/data' -l '$CLUSTER_DIR/server.log' -w restart" >/dev/null
service_ready
check "gpujoin.devices = '0,2': the service uses devices 0 and 2" \
	$([ "$($PSQL -d gpujoin_tap -c "SELECT string_agg(substring(status from '^device [0-9]+'), ',' ORDER BY status) FROM gpujoin_devices() WHERE backend = 'service device'")" = "device 0,device 2" ] && echo 0 || echo 1)
explain=$($PSQL -d gpujoin_tap -c "$FORCE SET gpujoin.algorithm = nestloop;" \
	-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT count(*) FROM cr JOIN cs ON cr.a < cs.a AND cr.id < 100" 2>&1)
check "a nested loop then runs on those two" \
	$(echo "$explain" | grep -qE 'Devices: 2 \(steps [1-9][0-9]*, [1-9][0-9]*\)' && echo 0 || echo 1) \
	"$(echo "$explain" | grep -E 'Devices|Backend')"

# the device memory budget is per device: restart with 8MB on each of
# the two; a join's budget is capped at one device's share
echo "gpujoin.service_device_memory = '8MB'" >>"$CLUSTER_DIR/data/postgresql.conf"
as_owner "'$PG_BINDIR/pg_ctl' -D '$CLUSTER_DIR/data' -l '$CLUSTER_DIR/server.log' -w restart" >/dev/null
service_ready
status=$($PSQL -d gpujoin_tap -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'")
check "gpujoin.service_device_memory = 8MB on two devices: a budget of 16MB in all" \
	$(echo "$status" | grep -q '0 bytes reserved (of 16777216)' && echo 0 || echo 1) "$status"
explain=$($PSQL -d gpujoin_tap -c "$FORCE SET gpujoin.algorithm = hash; SET gpujoin.device_memory = '20MB';" \
	-c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) SELECT cr.id, cs.id FROM cr JOIN cs ON cr.a = cs.a" 2>&1)
check "a join that asks for more than one device's share gets that share" \
	$(echo "$explain" | grep -q 'Device Memory Budget: 8192 kB' && echo "$explain" | grep -q '(service)' && echo 0 || echo 1) \
	"$(echo "$explain" | grep -E 'Budget|Backend|NOTICE')"

# the reservation is per device: with 6MB of each device's 8MB held by a
# join, a join of 4MB gets the 2MB one device has left, not the 4MB the
# two have together (which would put one device past its share)
hold_join() {
	$PSQL -d gpujoin_tap >"$OUT/holder$1.out" 2>&1 <<SQL &
$FORCE
SET gpujoin.algorithm = nestloop;
SET gpujoin.service_spread_min_pairs = 2147483647;
SET gpujoin.device_memory = '6MB';
BEGIN;
DECLARE c CURSOR FOR SELECT cr.id, cs.id FROM cr JOIN cs ON cr.a < cs.a;
FETCH 1 FROM c;
SELECT pg_sleep(4);
COMMIT;
SQL
}
PSQL_TAP="$PSQL -d gpujoin_tap"
hold_join 1
holder1=$!
PSQL=$PSQL_TAP service_wait '6291456 bytes reserved'
hold_join 2
holder2=$!
PSQL=$PSQL_TAP service_wait '12582912 bytes reserved'
check "two joins of 6MB hold 6MB of each device's 8MB" $? "$(PSQL=$PSQL_TAP service_status)"
explain=$($PSQL -d gpujoin_tap -c "$FORCE SET gpujoin.algorithm = nestloop; SET gpujoin.device_memory = '4MB';" \
	-c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) SELECT cr.id, cs.id FROM cr JOIN cs ON cr.a < cs.a AND cr.id < 50" 2>&1)
check "a join of 4MB then gets the 2MB one device has left, not 4MB over two devices" \
	$(echo "$explain" | grep -q 'Device Memory Budget: 2048 kB' && echo "$explain" | grep -q '(service)' && echo 0 || echo 1) \
	"$(echo "$explain" | grep -E 'Budget|Backend|NOTICE|Queue')"
wait $holder1 $holder2
PSQL=$PSQL_TAP service_wait '; device memory: 0 bytes reserved'
check "and once the holders are done nothing stays reserved" $? "$(PSQL=$PSQL_TAP service_status)"

echo "service_devices: $passed passed, $failed failed"
[ "$failed" = 0 ]
