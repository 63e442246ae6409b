#!/bin/bash
# test/load/spill_cleanup.sh: a spilled GpuJoin's temporary files are gone
# however the join ends (issue 21, "spilling on the host": "no temp files
# left after errors, cancels and a killed backend").
#
# A GpuJoin whose inputs outgrow gpujoin.max_host_memory spills them to
# BufFiles (src/host_chunking/spill_files.c, src/host_chunking/spill.c)
# under base/pgsql_tmp.  The files belong to the resource owner of the query
# (a portal's for a cursor): the node's End closes them when the join ends,
# and the resource owner's release when the transaction or subtransaction
# aborts, whatever the reason; a process that exits closes what it still has
# open.  Nothing in the sql/ suite holds a join open while it is ended from
# outside, so this script does, on a throwaway cluster of its own
# (test/lib/cluster.sh; the extension must be installed) with the GPU
# service on SERVICE_BACKEND (default cpu; cuda on a GPU machine), tables
# of 200k rows and gpujoin.max_host_memory = 64kB.  After each check the
# files must be gone, counted both in $CLUSTER_DIR/data/base/pgsql_tmp and
# with pg_ls_tmpdir() (polled for up to 10 s: a terminated backend removes
# its files as it exits, after its client has seen the connection close).
# Checks 0 to 6 run with gpujoin.device = cpu (the join in the backend) and
# gpujoin.device = service (the chunk pairs joined in the GPU service; the
# files are still the backend's, which drains and spills):
#   0. control: a cursor over a spilled join, FETCH 1: the session's files
#      are there (so the checks below look where the files are), and CLOSE
#      removes them;
#   1. a spilled hash join (partitioned) and a spilled band join finish
#      (EXPLAIN ANALYZE shows the chunks) with the native plan's rows;
#   2. statement_timeout ends a spilled join mid-way (57014), and the
#      session's next join gives the native plan's rows;
#   3. pg_cancel_backend of a session in a long spilled join (57014);
#   4. an ERROR mid-join: a division by zero on the join's rows (22012), one
#      in the scan of s, at its 150000th row, while the join drains it (the
#      planner makes s the outer side then: r is spilled by then, and most
#      of s), and an injected step failure (gpujoin.debug_fault =
#      step_error, 38000); and one caught in a PL/pgSQL exception block
#      whose cursor had spilled (the files go with the block's
#      subtransaction, in the transaction that goes on);
#   5. a cursor over a spilled join still open at COMMIT, whose
#      transaction rolls back, whose savepoint rolls back, whose session
#      closes with the transaction open; a WITH HOLD cursor, whose join
#      runs to its end at COMMIT; and a cursor first fetched after a
#      savepoint that then rolls back (its files are its portal's: they stay
#      and it reads on to its end, and to the native count);
#   6. pg_terminate_backend of a session in a long spilled join;
# then, with gpujoin.device = cpu:
#   7. the backend of a session in a long spilled join killed with SIGKILL.
#      PostgreSQL takes the death of a backend by a signal for a crash: the
#      postmaster sends SIGQUIT to every other process (all sessions end:
#      "terminating connection because of crash of another server
#      process"), waits for them to exit, and then, with
#      remove_temp_files_after_crash = on (the default since PostgreSQL 14),
#      removes every temporary file (RemovePgTempFiles) before it
#      reinitialises shared memory, runs crash recovery and accepts
#      connections again; the GPU service is restarted with the rest.  With
#      the setting off the files would stay (for debugging) until the
#      server is next started, which always removes them.  So
#      here: once the server accepts connections the files are gone, and the
#      next spilled join, in the backend and in the service, gives the
#      native plan's rows;
# and with both devices:
#   8. a parallel plan.  The planner offers no partial GpuJoin whose inputs
#      it expects past gpujoin.max_host_memory (every process would spill
#      the whole inner side; gpujoin_path.c, host_memory_fits), but the
#      executor spills in every process when the estimate was wrong.  A
#      statement prepared under 64MB and executed under 64kB keeps its
#      parallel plan (Gather over a Parallel Custom Scan (GpuJoin)) and
#      spills in the leader and the workers (with the service, the inner
#      side drained in parallel is not shared, being spilled, and each
#      process drains it whole again): it finishes with the native plan's
#      rows, and a cancel while the workers have files leaves none.
# Last, the server log has no "temporary file leak" WARNING (a file still
# open when its resource owner was released).  The long joins are band
# joins on the nested loop algorithm, 40G pairs (minutes on the cpu
# backend), whose every 500th row sleeps 10 ms (24 s, a GPU's speed
# notwithstanding), and are always ended before they finish.  Ends with
# "spill_cleanup: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
# at the end: the psql sessions of ours still running (this shell's jobs),
# then the cluster
cleanup() {
	local pid
	exec 7>&- 2>/dev/null
	for pid in $(jobs -p); do
		kill "$pid" 2>/dev/null
	done
	cluster_stop
}
trap cleanup EXIT
GPUJOIN_CLUSTER_CONF="gpujoin.service = on
gpujoin.service_backend = ${SERVICE_BACKEND:-cpu}
restart_after_crash = on
log_temp_files = 0" cluster_start || {
	echo "could not start a cluster"
	echo "spill_cleanup: 0 passed, 1 failed"
	exit 1
}
OUT=$CLUSTER_DIR
TMPDIR_PG=$CLUSTER_DIR/data/base/pgsql_tmp
PSQL="$PG_BINDIR/psql -X -q -At -v ON_ERROR_STOP=1 -d postgres"
# goes on after an error, and prints the SQLSTATE with it
PSQL_E="$PG_BINDIR/psql -X -q -At -v VERBOSITY=verbose -d postgres"
. test/lib/check.sh
. test/lib/service.sh

$PSQL <<'SQL'
CREATE EXTENSION gpujoin;
CREATE TABLE r AS SELECT g AS id, g % 50000 AS k, (g * 7) % 100000 AS t FROM generate_series(1, 200000) g;
CREATE TABLE s AS SELECT g AS id, (g * 3) % 50000 AS k, (g * 11) % 100000 AS t FROM generate_series(1, 200000) g;
-- the native plan of the band join: an index nested loop
CREATE INDEX ON s (t);
ANALYZE r, s;
SQL
for i in $(seq 100); do
	service_status | grep -q '^ready' && break
	sleep 0.1
done

FORCE="SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off;
	SET max_parallel_workers_per_gather = 0; SET gpujoin.enable_aggregate = off;
	SET gpujoin.max_host_memory = '64kB';"
PARALLEL="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	SET min_parallel_table_scan_size = 0;"
# the rows of a join, as a multiset: their number and a sum of their hashes
HASHQ="SELECT count(*), sum(hashint8(r.id::int8 * 1000003 + s.id)) FROM r JOIN s ON r.k = s.k"
BANDQ="SELECT count(*), sum(hashint8(r.id::int8 * 1000003 + s.id)) FROM r JOIN s
	ON s.t BETWEEN r.t - 1 AND r.t + 1 WHERE r.id <= 20000"
# 40G pairs on the nested loop algorithm, and 10 ms more for every 500th of
# its 1.2M rows (a GPU runs the pairs in a blink): always ended before its end
LONG="SET gpujoin.algorithm = nestloop;"
LONGQ="SELECT count(*) FILTER (WHERE (r.id + s.id) % 500 = 0 AND pg_sleep(0.01) IS NOT NULL) /* long-join */
	FROM r JOIN s ON s.t BETWEEN r.t - 1 AND r.t + 1"
CURSORQ="SELECT r.id, s.id FROM r JOIN s ON r.k = s.k"
native_hash=$($PSQL -c "SET gpujoin.enabled = off" -c "$HASHQ")
native_band=$($PSQL -c "SET gpujoin.enabled = off" -c "$BANDQ")

tmp_count() {
	find "$TMPDIR_PG" -mindepth 1 2>/dev/null | wc -l
}
# no_temp_files WHAT [SPILLED]: checks that base/pgsql_tmp is empty and
# pg_ls_tmpdir() lists nothing (waits up to 10 s for that); with a second
# argument, that it is not empty either (what wait_spilled printed: the
# join had files before)
no_temp_files() {
	if [ $# = 2 ] && [ -z "$2" ]; then
		check "$1: no temporary file left" 1 "the join never had temporary files to leave"
		return
	fi
	local i fs sql
	for i in $(seq 50); do
		fs=$(tmp_count)
		sql=$($PSQL -c "SELECT count(*) FROM pg_ls_tmpdir()" 2>&1)
		[ "$fs" = 0 ] && [ "$sql" = 0 ] && break
		sleep 0.2
	done
	check "$1: no temporary file left" $([ "$fs" = 0 ] && [ "$sql" = 0 ] && echo 0 || echo 1) \
		"$fs in base/pgsql_tmp, pg_ls_tmpdir $sql: $(ls "$TMPDIR_PG" 2>/dev/null | head -5 | tr '\n' ' ')"
}
# wait_spilled NAME [WORKERS]: waits (up to 30 s) until the session with
# application_name NAME has temporary files, in WORKERS of its parallel
# workers too (default 0), and their size has stopped growing (the drain
# is over, the join goes on); then prints the session's pid, the number of
# files and their size (nothing if that never happened; the last pid,
# files, bytes and workers seen are in $OUT/spilled.last)
wait_spilled() {
	local i now prev=""
	for i in $(seq 150); do
		now=$($PSQL -c "WITH l AS (SELECT pid FROM pg_stat_activity
				WHERE application_name = '$1' AND backend_type = 'client backend'),
			p AS (SELECT pid FROM l UNION SELECT w.pid FROM pg_stat_activity w JOIN l ON w.leader_pid = l.pid),
			t AS (SELECT substring(name FROM '^pgsql_tmp([0-9]+)[.]')::int AS pid, size FROM pg_ls_tmpdir())
			SELECT (SELECT pid FROM l), count(*), coalesce(sum(size), 0),
				count(DISTINCT pid) FILTER (WHERE pid NOT IN (SELECT pid FROM l))
			FROM t WHERE pid IN (SELECT pid FROM p)" 2>/dev/null | tr '|' ' ')
		set -- "$1" "${2:-0}" $now
		if [ $# = 6 ] && [ "$4" -gt 0 ] && [ "$6" -ge "$2" ] && [ "$now" = "$prev" ]; then
			echo "$3 $4 $5"
			return
		fi
		prev=$now
		echo "$now" >"$OUT/spilled.last"
		sleep 0.2
	done
}
# start NAME ARGS: psql (PSQL_E) with application_name NAME and ARGS in the
# background; its output in $OUT/NAME.out, its pid in $bg
# next_join_native DEV OUTPUT: the session's spilled join after the one
# that ended (OUTPUT's last line) gives the native plan's rows
next_join_native() {
	local last
	last=$(echo "$2" | tail -1)
	check "$1: and the session's next spilled join gives the native plan's rows" \
		$([ "$last" = "$native_hash" ] && echo 0 || echo 1) "native $native_hash, got $last"
}

start() {
	local name=$1
	shift
	PGAPPNAME=$name $PSQL_E "$@" >"$OUT/$name.out" 2>&1 &
	bg=$!
}
# stop NAME HOW: where wait_spilled saw its files ($got), HOW (cancel:
# pg_cancel_backend, terminate: pg_terminate_backend, kill: kill -KILL) the
# backend of the session with application_name NAME; one that never got
# there is terminated, not left running; then waits for its psql ($bg)
stop() {
	local pid
	pid=$($PSQL -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$1' AND backend_type = 'client backend'")
	if [ -n "$got" ] && [ -n "$pid" ]; then
		case $2 in
		cancel) $PSQL -c "SELECT pg_cancel_backend($pid)" >/dev/null ;;
		terminate) $PSQL -c "SELECT pg_terminate_backend($pid)" >/dev/null ;;
		kill) kill -KILL "$pid" ;;
		esac
	elif [ -n "$pid" ]; then
		$PSQL -c "SELECT pg_terminate_backend($pid)" >/dev/null
	fi
	wait $bg
}
# session_start NAME: a session fed line by line (session_send) through a
# fifo on fd 7, to hold a cursor open; session_end closes it
session_start() {
	rm -f "$OUT/fifo"
	mkfifo "$OUT/fifo"
	PGAPPNAME=$1 $PSQL_E -f "$OUT/fifo" >"$OUT/$1.out" 2>&1 &
	session=$!
	exec 7>"$OUT/fifo"
}
session_send() {
	# (a session that has gone away must not end the script with SIGPIPE)
	(
		trap '' PIPE
		echo "$*" >&7
	) 2>/dev/null
}
session_end() {
	exec 7>&-
	wait "$session"
}
# pid_files PID: how many temporary files of that process pg_ls_tmpdir() lists
pid_files() {
	$PSQL -c "SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp${1:-0}.%'"
}

for dev in cpu service; do
	F="$FORCE SET gpujoin.device = $dev;"
	echo "# gpujoin.device = $dev"

	# 0. control: a cursor over a spilled join has its files in pgsql_tmp
	plan=$($PSQL -c "$F" -c "EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR $CURSORQ" 2>&1)
	session_start "gj_spill_cursor_$dev"
	session_send "$F BEGIN; DECLARE c CURSOR FOR $CURSORQ; FETCH 1 FROM c;"
	got=$(wait_spilled "gj_spill_cursor_$dev")
	set -- $got
	check "$dev: a cursor over a spilled GpuJoin, FETCH 1: its backend's files are in base/pgsql_tmp" \
		$(echo "$plan" | grep -q 'Custom Scan (GpuJoin)' && [ $# = 3 ] && [ "$(tmp_count)" -ge "$2" ] &&
			[ "$(pid_files "$1")" = "$2" ] && echo 0 || echo 1) \
		"spilled: ${got:-nothing}, base/pgsql_tmp $(tmp_count), plan $(echo "$plan" | head -1)"
	echo "# $dev: pid, files, bytes of the open cursor: ${got:-none}"
	session_send "FETCH 1 FROM c; CLOSE c; COMMIT;"
	no_temp_files "$dev: the cursor closed"
	session_send "SELECT 'alive';"
	session_end
	check "$dev: the session went on after CLOSE" \
		$(grep -qx alive "$OUT/gj_spill_cursor_$dev.out" && ! grep -q ERROR "$OUT/gj_spill_cursor_$dev.out" &&
			echo 0 || echo 1) "$(tr '\n' ' ' <"$OUT/gj_spill_cursor_$dev.out")"

	# 1. spilled joins that finish
	for q in hash band; do
		[ $q = hash ] && { query=$HASHQ; native=$native_hash; } || { query=$BANDQ; native=$native_band; }
		out=$($PSQL -c "$F" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $query" 2>&1)
		result=$($PSQL -c "$F" -c "$query" 2>&1)
		check "$dev: a spilled $q join finishes with the native plan's rows" \
			$(echo "$out" | grep -q 'Custom Scan (GpuJoin)' && echo "$out" | grep -qE 'Outer Chunks Spilled: [1-9]' &&
				echo "$out" | grep -qE 'Inner Chunks Spilled: [1-9]' && [ "$result" = "$native" ] && echo 0 || echo 1) \
			"native $native, got $result; $(echo "$out" | grep -E 'Algorithm|Spill|Chunk|ERROR' | tr -s ' \n' ' ')"
		no_temp_files "$dev: a spilled $q join finished"
	done

	# 2. statement_timeout mid-join; the session's next join works
	start "gj_spill_timeout_$dev" -c "$F $LONG SET statement_timeout = '4s';" -c "$LONGQ" \
		-c "RESET statement_timeout; RESET gpujoin.algorithm;" -c "$HASHQ"
	got=$(wait_spilled "gj_spill_timeout_$dev")
	wait $bg
	check "$dev: statement_timeout ends a spilled join mid-way with 57014" \
		$([ -n "$got" ] && grep -q 'ERROR:  57014: canceling statement due to statement timeout' \
			"$OUT/gj_spill_timeout_$dev.out" && echo 0 || echo 1) \
		"spilled: ${got:-never}; $(head -2 "$OUT/gj_spill_timeout_$dev.out" | tr '\n' ' ')"
	no_temp_files "$dev: statement_timeout"
	next_join_native "$dev" "$(cat "$OUT/gj_spill_timeout_$dev.out")"

	# 3. pg_cancel_backend mid-join
	start "gj_spill_cancel_$dev" -c "$F $LONG" -c "$LONGQ" -c "RESET gpujoin.algorithm;" -c "$HASHQ"
	got=$(wait_spilled "gj_spill_cancel_$dev")
	stop "gj_spill_cancel_$dev" cancel
	check "$dev: pg_cancel_backend ends a spilled join mid-way with 57014" \
		$([ -n "$got" ] && grep -q 'ERROR:  57014: canceling statement due to user request' \
			"$OUT/gj_spill_cancel_$dev.out" && echo 0 || echo 1) \
		"spilled: ${got:-never}; $(head -2 "$OUT/gj_spill_cancel_$dev.out" | tr '\n' ' ')"
	no_temp_files "$dev: pg_cancel_backend"
	next_join_native "$dev" "$(cat "$OUT/gj_spill_cancel_$dev.out")"

	# 4. an ERROR mid-join: in an expression on the join's rows, and from
	# the backend (injected on the second step of a chunk pair: 2kB tiles
	# give a pair several steps)
	out=$($PSQL_E -c "$F" -c "SELECT sum(r.id / (s.id - 150000)) FROM r JOIN s ON r.k = s.k" -c "$HASHQ" 2>&1)
	check "$dev: a division by zero on a spilled join's rows ends it with 22012" \
		$(echo "$out" | grep -q 'ERROR:  22012: division by zero' && echo 0 || echo 1) "$(echo "$out" | head -2 | tr '\n' ' ')"
	no_temp_files "$dev: division by zero"
	next_join_native "$dev" "$out"
	out=$($PSQL_E -c "$F" -c "SELECT count(*) FROM r JOIN s ON r.k = s.k WHERE 1 / (s.id - 150000) > -10" \
		-c "$HASHQ" 2>&1)
	check "$dev: a division by zero in a side's scan, while the join drains it, ends the join with 22012" \
		$(echo "$out" | grep -q 'ERROR:  22012: division by zero' && echo 0 || echo 1) "$(echo "$out" | head -2 | tr '\n' ' ')"
	no_temp_files "$dev: division by zero in the drain"
	next_join_native "$dev" "$out"
	out=$($PSQL_E -c "$F SET gpujoin.debug_fault = step_error; SET gpujoin.device_memory = '2kB';" -c "$HASHQ" \
		-c "RESET gpujoin.debug_fault; RESET gpujoin.device_memory;" -c "$HASHQ" 2>&1)
	check "$dev: a failed step (gpujoin.debug_fault = step_error) ends a spilled join with 38000" \
		$(echo "$out" | grep -q 'ERROR:  38000: GpuJoin failed' && echo "$out" | grep -q 'injected by gpujoin.debug_fault' &&
			echo 0 || echo 1) "$(echo "$out" | head -2 | tr '\n' ' ')"
	no_temp_files "$dev: a failed step"
	next_join_native "$dev" "$out"

	# an ERROR caught in PL/pgSQL: the block's subtransaction, which opened
	# a cursor over a spilled join, rolls back while the transaction goes on
	out=$($PSQL_E -c "$F" -c "DO \$\$
		DECLARE c refcursor; x record; n_open int; n_after int;
		BEGIN
			BEGIN
				OPEN c FOR $CURSORQ;
				FETCH c INTO x;
				SELECT count(*) INTO n_open FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp' || pg_backend_pid() || '.%';
				PERFORM 1 / 0;
			EXCEPTION WHEN division_by_zero THEN
				SELECT count(*) INTO n_after FROM pg_ls_tmpdir();
			END;
			RAISE NOTICE 'files open %, after the exception %', n_open, n_after;
		END \$\$" 2>&1)
	n=$(echo "$out" | sed -nE 's/.*files open ([0-9]+), after the exception ([0-9]+).*/\1 \2/p')
	check "$dev: an exception block whose cursor had spilled: its files go with the block, the transaction goes on" \
		$(set -- $n && [ $# = 2 ] && [ "$1" -gt 0 ] && [ "$2" = 0 ] && echo 0 || echo 1) "$(echo "$out" | head -3 | tr '\n' ' ')"
	no_temp_files "$dev: an exception block"

	# 5. cursors whose transaction, savepoint or session ends
	for how in commit rollback savepoint disconnect hold; do
		session_start "gj_spill_${how}_$dev"
		case $how in
		savepoint) session_send "$F BEGIN; SAVEPOINT a; DECLARE c CURSOR FOR $CURSORQ; FETCH 1 FROM c;" ;;
		hold) session_send "$F BEGIN; DECLARE c CURSOR WITH HOLD FOR $CURSORQ WHERE r.id <= 50000; FETCH 1 FROM c;" ;;
		*) session_send "$F BEGIN; DECLARE c CURSOR FOR $CURSORQ; FETCH 1 FROM c;" ;;
		esac
		got=$(wait_spilled "gj_spill_${how}_$dev")
		case $how in
		commit)
			session_send "COMMIT;"
			what="a cursor over a spilled join still open at COMMIT"
			;;
		rollback)
			session_send "ROLLBACK;"
			what="a cursor over a spilled join rolled back"
			;;
		savepoint)
			session_send "ROLLBACK TO SAVEPOINT a;"
			what="a cursor over a spilled join rolled back to a savepoint"
			;;
		disconnect)
			session_end
			what="a cursor over a spilled join whose session closed with its transaction open"
			;;
		hold)
			session_send "COMMIT;"
			what="a WITH HOLD cursor over a spilled join committed"
			;;
		esac
		no_temp_files "$dev: $what" "$got"
		if [ $how != disconnect ]; then
			# the held cursor is still there, the others are gone
			[ $how = hold ] && session_send "FETCH 1 FROM c; CLOSE c;"
			[ $how = savepoint ] && session_send "COMMIT;"
			session_send "SELECT 'alive';"
			session_end
			check "$dev: and its session goes on" \
				$(grep -qx alive "$OUT/gj_spill_${how}_$dev.out" && echo 0 || echo 1) \
				"$(tr '\n' ' ' <"$OUT/gj_spill_${how}_$dev.out")"
		fi
	done

	# a cursor declared before a savepoint and first fetched after it: its
	# files are its portal's, not the savepoint's, so rolling the savepoint
	# back leaves them, and the cursor reads on to its end
	session_start "gj_spill_subfetch_$dev"
	session_send "$F BEGIN; DECLARE c CURSOR FOR $CURSORQ; SAVEPOINT a; FETCH 1 FROM c;"
	got=$(wait_spilled "gj_spill_subfetch_$dev")
	session_send "ROLLBACK TO SAVEPOINT a; SELECT 'rolled back';"
	for i in $(seq 50); do
		grep -qx 'rolled back' "$OUT/gj_spill_subfetch_$dev.out" && break
		sleep 0.2
	done
	set -- $got
	kept=$(pid_files "${1:-0}")
	session_send "MOVE FORWARD ALL IN c;"
	session_send '\echo moved :ROW_COUNT'
	session_send "COMMIT;"
	no_temp_files "$dev: a cursor fetched after a savepoint, which rolled back, then read to its end and committed" "$got"
	session_send "SELECT 'alive';"
	session_end
	moved=$(sed -n 's/^moved //p' "$OUT/gj_spill_subfetch_$dev.out")
	check "$dev: and the savepoint's rollback kept the cursor's files, which it read to its end with the native count" \
		$([ $# = 3 ] && [ "$kept" = "$2" ] && [ "$((${moved:-0} + 1))" = "${native_hash%%|*}" ] &&
			grep -qx alive "$OUT/gj_spill_subfetch_$dev.out" && ! grep -q ERROR "$OUT/gj_spill_subfetch_$dev.out" &&
			echo 0 || echo 1) \
		"files ${2:-none} before, $kept after the rollback; 1 + ${moved:-nothing} rows, native ${native_hash%%|*}; $(grep ERROR "$OUT/gj_spill_subfetch_$dev.out" | head -2 | tr '\n' ' ')"

	# 6. pg_terminate_backend mid-join
	start "gj_spill_terminate_$dev" -c "$F $LONG" -c "$LONGQ"
	got=$(wait_spilled "gj_spill_terminate_$dev")
	stop "gj_spill_terminate_$dev" terminate
	check "$dev: pg_terminate_backend ends a session in a spilled join" \
		$([ -n "$got" ] && grep -q 'terminating connection due to administrator command' \
			"$OUT/gj_spill_terminate_$dev.out" && echo 0 || echo 1) \
		"spilled: ${got:-never}; $(head -2 "$OUT/gj_spill_terminate_$dev.out" | tr '\n' ' ')"
	no_temp_files "$dev: pg_terminate_backend"
done

# 7. SIGKILL of a backend mid-join: the postmaster's crash restart
check "remove_temp_files_after_crash is on" \
	$([ "$($PSQL -c 'SHOW remove_temp_files_after_crash')" = on ] && echo 0 || echo 1)
start gj_spill_sigkill -c "$FORCE SET gpujoin.device = cpu; $LONG" -c "$LONGQ"
got=$(wait_spilled gj_spill_sigkill)
echo "# the backend killed: pid, files, bytes: ${got:-none}"
stop gj_spill_sigkill kill
up=""
for i in $(seq 300); do
	up=$($PSQL -c "SELECT 'up'" 2>/dev/null) && [ "$up" = up ] && break
	sleep 0.2
done
check "SIGKILL of a backend in a spilled join: the postmaster restarts, the server accepts connections" \
	$([ -n "$got" ] && [ "$up" = up ] && grep -q 'was terminated by signal 9' "$OUT/server.log" &&
		grep -q 'all server processes terminated; reinitializing' "$OUT/server.log" && echo 0 || echo 1) \
	"spilled: ${got:-never}, server ${up:-down}; $(grep -E 'signal 9|reinitializing' "$OUT/server.log" | tr '\n' ' ')"
no_temp_files "SIGKILL and crash restart"
for i in $(seq 100); do
	service_status 2>/dev/null | grep -q '^ready' && break
	sleep 0.2
done
for dev in cpu service; do
	result=$($PSQL -c "$FORCE SET gpujoin.device = $dev;" -c "$HASHQ" 2>&1)
	check "after the restart a spilled join ($dev) gives the native plan's rows" \
		$([ "$result" = "$native_hash" ] && echo 0 || echo 1) "native $native_hash, got $result"
done
no_temp_files "after the restart's joins"

# 8. parallel plans, planned under 64MB and executed under 64kB
for dev in cpu service; do
	P="$FORCE $PARALLEL SET gpujoin.device = $dev; SET gpujoin.max_host_memory = '64MB';"
	out=$($PSQL -c "$P" -c "PREPARE q AS $HASHQ" -c "EXPLAIN (COSTS OFF) EXECUTE q" -c "SET gpujoin.max_host_memory = '64kB'" \
		-c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE q" -c "EXECUTE q" 2>&1)
	result=$(echo "$out" | tail -1)
	check "$dev: a parallel GpuJoin (a generic plan made under 64MB) spills under 64kB with the native plan's rows" \
		$(echo "$out" | grep -q 'Parallel Custom Scan (GpuJoin)' && echo "$out" | grep -qE 'Workers Launched: [1-9]' &&
			echo "$out" | grep -qE 'Outer Chunks Spilled: [1-9]' && [ "$result" = "$native_hash" ] && echo 0 || echo 1) \
		"native $native_hash, got $result; $(echo "$out" | grep -E 'GpuJoin|Launched|Spilled|Inner Side|ERROR' | tr -s ' \n' ' ')"
	echo "# $dev: $(echo "$out" | grep -E 'Inner Side|Spilled' | tr -s ' \n' ' ')"
	no_temp_files "$dev: a parallel spilled join finished"
	# (the leader does not join: on a loaded machine it could read every
	# outer page before a worker starts, and a worker with no outer rows
	# spills nothing)
	start "gj_spill_parallel_$dev" -c "$P $LONG SET parallel_leader_participation = off;" \
		-c "PREPARE q AS $LONGQ" -c "EXPLAIN (COSTS OFF) EXECUTE q" \
		-c "SET gpujoin.max_host_memory = '64kB'" -c "EXECUTE q"
	got=$(wait_spilled "gj_spill_parallel_$dev" 1)
	echo "# $dev: the parallel join cancelled: leader pid, files, bytes: ${got:-none}"
	stop "gj_spill_parallel_$dev" cancel
	check "$dev: pg_cancel_backend ends a parallel join while its workers have files" \
		$([ -n "$got" ] && grep -q 'Parallel Custom Scan (GpuJoin)' "$OUT/gj_spill_parallel_$dev.out" && grep -q 'ERROR:  57014: canceling statement due to user request' \
			"$OUT/gj_spill_parallel_$dev.out" && echo 0 || echo 1) \
		"spilled: ${got:-never in a worker: $(cat "$OUT/spilled.last")}; $(head -2 "$OUT/gj_spill_parallel_$dev.out" | tr '\n' ' ')"
	no_temp_files "$dev: a parallel spilled join cancelled"
done

check "the server log has no \"temporary file leak\" WARNING" \
	$(grep -q 'temporary file leak' "$OUT/server.log" && echo 1 || echo 0) \
	"$(grep 'temporary file leak' "$OUT/server.log" | head -3 | tr '\n' ' ')"
echo "# temporary files the server logged as removed (log_temp_files = 0): $(grep -c 'LOG:  temporary file: path' "$OUT/server.log")"

echo "spill_cleanup: $passed passed, $failed failed"
[ "$failed" = 0 ]
