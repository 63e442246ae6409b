#!/bin/bash
# test/scaleout/run_scaleout.sh: GpuJoin across servers, in the sharding that
# PostgreSQL itself ships (issue 38; README, "Across servers").
#
# Starts, on this machine, a coordinator and three shard clusters
# (test/scaleout/scaleout_lib.sh: gpujoin preloaded on each, each with its own
# port and its socket in its own directory), with r and s partitioned by hash
# on the join key k and each partition a postgres_fdw foreign table on one
# shard (async_capable, use_remote_estimate; enable_partitionwise_join and
# enable_partitionwise_aggregate on the coordinator), and checks:
#
#   - an equi-join on k (inner and left) and an aggregate grouped by k are
#     pushed down whole: each of the coordinator's Foreign Scans has the join
#     (and the GROUP BY) in its Remote SQL, and the coordinator joins nothing;
#     each shard plans that Remote SQL as a GpuJoin (the shard's own EXPLAIN
#     of it) and ran it as one (auto_explain's log of postgres_fdw's cursor
#     on the shard, with GpuJoin's counters); the rows equal those of one
#     server's native plan over the same rows;
#   - an aggregate over the whole join: the join is pushed down, the partial
#     aggregates stay on the coordinator (postgres_fdw in PostgreSQL 15 does
#     not push partial aggregates), equal to native;
#   - a band join and an inequality join, with no equality on k, are not
#     pushed down: they run as a GpuJoin on the coordinator over an Append of
#     async foreign scans on each side, equal to native;
#   - a shard stopped (pg_ctl -m immediate) while the coordinator's query
#     waits on it: the query ends with postgres_fdw's error, the coordinator
#     goes on, a query while the shard is down fails to connect to it, and
#     once it is back the same session's next query gives the native rows.
#
# "One server's native plan": one.r and one.s on the coordinator hold the same
# rows as plain tables; the same query text runs there with search_path = one
# and gpujoin.enabled = off, and the two results are compared as multisets
# (EXCEPT ALL both ways), NULLs and duplicates included.
#
# Prints "ok - ..." or "not ok - ..." per check and ends with "scaleout: N
# passed, N failed".  PG_CONFIG from the environment (the extension must be
# installed there); the clusters are stopped and removed on exit, also after
# a failure (KEEP_CLUSTER=1 keeps them).  About 10 s on 2 cores.
set -u
cd "$(dirname "$0")/../.." || exit 1
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
. test/lib/check.sh
. test/scaleout/scaleout_lib.sh

R_ROWS=${SCALEOUT_R_ROWS:-3000}
S_ROWS=${SCALEOUT_S_ROWS:-2000}
KEYS=${SCALEOUT_KEYS:-500}
WORK=$(mktemp -d /tmp/gpujoin_scaleout.XXXXXX)
chmod 755 "$WORK"

# on exit, however it comes: the background sessions of the fault check, the
# four clusters, the work directory
finish() {
	local pid
	for pid in ${BG_PIDS:-}; do
		kill "$pid" 2>/dev/null
	done
	scaleout_stop
	rm -rf "$WORK"
}
trap finish EXIT

scaleout_start "enable_partitionwise_join = on
enable_partitionwise_aggregate = on" "shared_buffers = 64MB" || {
	echo "could not start the coordinator and three shards"
	echo "scaleout: 0 passed, 1 failed"
	exit 1
}
scaleout_schema "$R_ROWS" "$S_ROWS" "$KEYS" || {
	echo "could not create the tables"
	echo "scaleout: 0 passed, 1 failed"
	exit 1
}

# The shards' tables are small (about 1000 rows a partition): at that size
# GpuJoin's fixed cost (gpujoin.cpu_startup_cost) leaves the shards' joins to
# PostgreSQL's hash join by default costs.  As the suite's other tests force
# GpuJoin (sql/setup.sql, gj_force), the shards' database disables
# PostgreSQL's join methods, so that the pushed-down joins run as GpuJoins
# wherever GpuJoin is offered; test/bench/bench_scaleout.sh keeps the default
# costs.  auto_explain logs every plan a shard runs (postgres_fdw's cursors
# among them) with EXPLAIN ANALYZE's counters.  These apply to new sessions:
# the coordinator's postgres_fdw connections are made after this.  On every
# cluster the cuda backend plans with the cpu backend's constants, as in the
# rest of the suite (cluster_pin_cuda_costs): with cuda's own fixed cost the
# shards' estimates of the pushed-down joins (use_remote_estimate) kept them
# on the coordinator on the GPU machine.
cluster_pin_cuda_costs -h "$COORD_DIR" -p "$COORD_PORT" -U postgres ||
	echo "could not pin the cuda cost constants on the coordinator"
for i in $(seq $SHARDS); do
	dir_var="SHARD${i}_DIR" port_var="SHARD${i}_PORT"
	cluster_pin_cuda_costs -h "${!dir_var}" -p "${!port_var}" -U postgres ||
		echo "could not pin the cuda cost constants on shard $i"
	shard_psql "$i" <<'SQL'
ALTER DATABASE postgres SET enable_hashjoin = off;
ALTER DATABASE postgres SET enable_mergejoin = off;
ALTER DATABASE postgres SET enable_nestloop = off;
ALTER DATABASE postgres SET session_preload_libraries = 'auto_explain';
ALTER DATABASE postgres SET auto_explain.log_min_duration = 0;
ALTER DATABASE postgres SET auto_explain.log_analyze = on;
SQL
done

# scaleout_diff(query): the query's rows over the shards (search_path public,
# GpuJoin as the planners choose) and over one.r and one.s with PostgreSQL's
# own plans, as multisets of their text forms: how many each, how many differ.
coord_psql <<'SQL'
CREATE FUNCTION scaleout_diff(query text, OUT sharded bigint, OUT one_server bigint, OUT differ bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('search_path', 'public', true);
    EXECUTE 'CREATE TEMP TABLE res_sharded AS SELECT q::text AS row FROM (' || query || ') q';
    PERFORM set_config('search_path', 'one', true);
    PERFORM set_config('gpujoin.enabled', 'off', true);
    EXECUTE 'CREATE TEMP TABLE res_one AS SELECT q::text AS row FROM (' || query || ') q';
    SELECT count(*) INTO sharded FROM res_sharded;
    SELECT count(*) INTO one_server FROM res_one;
    SELECT count(*) INTO differ FROM (
        (TABLE res_sharded EXCEPT ALL TABLE res_one)
        UNION ALL
        (TABLE res_one EXCEPT ALL TABLE res_sharded)) d;
    DROP TABLE res_sharded;
    DROP TABLE res_one;
END $$;
SQL

# check_equal NAME QUERY: the query's rows over the shards equal one
# server's native rows (and there are some)
check_equal() {
	local res
	res=$(echo "SELECT sharded || ' ' || one_server || ' ' || differ FROM scaleout_diff(:'q')" |
		coord_psql -v q="$2" 2>&1)
	set -- "$1" $res
	check "$1: the rows equal one server's native plan's" \
		$([ "${4:-x}" = 0 ] && [ "${2:-0}" = "${3:-x}" ] && [ "${2:-0}" -gt 0 ] && echo 0 || echo 1) \
		"${res:-no result} (sharded, one server, differing)"
	echo "#   $2 rows"
}

# the byte size of shard I's server log, and what was written after SIZE
log_size() {
	local dir_var="SHARD${1}_DIR"
	stat -c %s "${!dir_var}/server.log"
}
log_since() {
	local dir_var="SHARD${1}_DIR"
	tail -c +$(($2 + 1)) "${!dir_var}/server.log"
}

# plan_nodes: the node lines of an EXPLAIN on stdin (the first line, and
# each line that starts with "->"), without the arrows
plan_nodes() {
	sed -nE '1s/^ *//p; s/^ *-> +//p'
}

# cursor_plans: of a server log's text on stdin, the auto_explain entries of
# postgres_fdw's cursors (a log entry starts with the timestamp of
# log_line_prefix), one per record, records ended by a line "--"
cursor_plans() {
	perl -0777 -ne 'for (split /\n(?=\d{4}-\d\d-\d\d )/) { print "$_\n--\n" if /Query Text: DECLARE c\d+ CURSOR FOR/ }'
}

# check_pushed_down NAME QUERY [GROUPED]: the coordinator's plan of QUERY is
# an Append of one Foreign Scan per shard whose Remote SQL has the join (and
# with GROUPED the GROUP BY) and no join (or aggregate) of its own; each
# shard's EXPLAIN of its Remote SQL is a GpuJoin; running QUERY makes each
# shard run postgres_fdw's cursor over the join as a GpuJoin (auto_explain);
# and its rows equal one server's native plan's.
check_pushed_down() {
	local name=$1 query=$2 grouped=${3:-} plan remote n_remote i p sql shard_plan bad="" ran=0 marks=()
	plan=$(coord_psql -c "EXPLAIN (VERBOSE, COSTS OFF) $query" 2>&1)
	remote=$(echo "$plan" | sed -n 's/^ *Remote SQL: //p' | grep -E ' (INNER|LEFT) JOIN ')
	[ -n "$grouped" ] && remote=$(echo "$remote" | grep ' GROUP BY ')
	n_remote=$(echo "$remote" | grep -c .)
	local local_nodes='Join|Nested Loop|GpuJoin'
	[ -n "$grouped" ] && local_nodes="$local_nodes|Aggregate"
	check "$name: pushed down whole, the join${grouped:+ and the GROUP BY} in each shard's Remote SQL" \
		$([ "$n_remote" = "$SHARDS" ] && ! echo "$plan" | plan_nodes | grep -qE "$local_nodes" && echo 0 || echo 1) \
		"$(echo "$plan" | plan_nodes | head -5)"
	echo "$remote" | head -1 | sed 's/^/#   Remote SQL: /'

	# each Remote SQL on its shard (r_pI is on shard I+1)
	while IFS= read -r sql; do
		[ -n "$sql" ] || continue
		p=$(echo "$sql" | grep -oE 'public\.r_p[0-9]+' | head -1 | sed 's/.*r_p//')
		shard_plan=$(shard_psql $((p + 1)) -c "EXPLAIN (COSTS OFF) $sql" 2>&1)
		echo "$shard_plan" | grep -q 'Custom Scan (GpuJoin)' ||
			bad="$bad shard$((p + 1)): $(echo "$shard_plan" | head -3 | tr '\n' ' ')"
	done <<<"$remote"
	check "$name: each shard plans its Remote SQL as a GpuJoin" \
		$([ "$n_remote" = "$SHARDS" ] && [ -z "$bad" ] && echo 0 || echo 1) "$bad"

	# run it, and read what the shards logged meanwhile
	for i in $(seq $SHARDS); do
		marks[$i]=$(log_size "$i")
	done
	coord_psql -c "$query" >/dev/null 2>"$WORK/run.err"
	for i in $(seq $SHARDS); do
		if log_since "$i" "${marks[$i]}" | cursor_plans |
			perl -0777 -ne 'exit !(grep { /JOIN public\.s_p/ && /Custom Scan \(GpuJoin\)/ && /Outer Rows Drained/ } split /\n--\n/)'; then
			ran=$((ran + 1))
		fi
	done
	check "$name: each shard ran it as a GpuJoin (auto_explain of postgres_fdw's cursor)" \
		$([ "$ran" = "$SHARDS" ] && echo 0 || echo 1) "$ran of $SHARDS shards; $(head -2 "$WORK/run.err")"
	log_since 1 "${marks[1]}" | cursor_plans | grep -E 'Custom Scan|Rows Drained|Backend' | head -3 | sed 's/^\s*/#   shard1: /'

	check_equal "$name" "$query"
}

# --- the clusters ---
bad=""
for c in COORD SHARD1 SHARD2 SHARD3; do
	dir_var="${c}_DIR" port_var="${c}_PORT"
	spl=$("$PG_BINDIR/psql" -X -At -h "${!dir_var}" -p "${!port_var}" -U postgres -d postgres \
		-c "SHOW shared_preload_libraries" 2>&1)
	[ "$spl" = gpujoin ] || bad="$bad $c: $spl"
	echo "# $c: port ${!port_var}, socket directory ${!dir_var}"
done
check "a coordinator and $SHARDS shards run, gpujoin preloaded on each" $([ -z "$bad" ] && echo 0 || echo 1) "$bad"
counts=$(for i in $(seq $SHARDS); do shard_psql "$i" -c "SELECT count(*) FROM r_p$((i - 1))"; done | tr '\n' ' ')
total=$(coord_psql -c "SELECT count(*) FROM r")
check "r's rows are spread over the shards, as many as one.r's" \
	$([ "$total" = "$(coord_psql -c 'SELECT count(*) FROM one.r')" ] && [ "$(echo "$counts" | grep -c ' 0 ')" = 0 ] && echo 0 || echo 1) \
	"r: $total, shards: $counts"
echo "#   r: $total rows, on the shards: $counts"

# --- joins on the partition key: pushed down to the shards ---
check_pushed_down "equi-join on k" "SELECT r.k, r.a, r.v, s.b, s.w FROM r JOIN s ON r.k = s.k"
check_pushed_down "left join on k" "SELECT r.k, r.v, s.w FROM r LEFT JOIN s ON r.k = s.k AND s.b < r.a"
check_pushed_down "aggregates grouped by k" \
	"SELECT r.k, count(*), sum(r.a::bigint * s.b), min(s.w), max(r.v) FROM r JOIN s ON r.k = s.k GROUP BY r.k" grouped

# an aggregate over the whole join: PostgreSQL 15's postgres_fdw pushes the
# join down, but not a partial aggregate; the coordinator adds up the rows.
# Or, by cost, the coordinator's GpuJoin computes the aggregates over the
# shards' rows itself (the plan with the GPU service on cuda, and on the
# cpu backend from about 2M rows on): either way nothing is joined twice.
query="SELECT count(*), sum(r.a + s.b), count(s.b) FROM r JOIN s ON r.k = s.k"
plan=$(coord_psql -c "EXPLAIN (VERBOSE, COSTS OFF) $query" 2>&1)
check "aggregate over the whole join: the join pushed down to each shard and the partial aggregates on the coordinator, or a GpuJoin's aggregates on the coordinator" \
	$({ [ "$(echo "$plan" | grep -cE 'Remote SQL: .* INNER JOIN ')" = "$SHARDS" ] &&
		echo "$plan" | grep -q 'Partial Aggregate'; } ||
		{ echo "$plan" | grep -q 'GPU Aggregates: count' &&
		[ "$(echo "$plan" | grep -cE 'Remote SQL: .* JOIN ')" = 0 ]; } && echo 0 || echo 1) "$(echo "$plan" | head -6)"
check_equal "aggregate over the whole join" "$query"

# --- joins that cannot be pushed down: GpuJoin on the coordinator ---
# No equality on the partition key: every row of r may meet a row of s on
# another shard.  The coordinator's planner picks GpuJoin here by its default
# costs (the native plan would be a nested loop over the foreign scans).
band="SELECT r.v, s.w, r.a, s.b FROM r JOIN s ON s.b BETWEEN r.a - 2 AND r.a + 2"
plan=$(coord_psql -c "EXPLAIN (VERBOSE, COSTS OFF) $band" 2>&1)
nodes=$(echo "$plan" | plan_nodes)
check "band join: a GpuJoin on the coordinator over an Append of async foreign scans on each side, nothing joined on the shards" \
	$([ "$(echo "$nodes" | grep -E 'Join|Nested Loop')" = "Custom Scan (GpuJoin)" ] &&
		[ "$(echo "$nodes" | grep -c '^Append')" = 2 ] &&
		[ "$(echo "$nodes" | grep -c '^Async Foreign Scan')" = $((2 * SHARDS)) ] &&
		! echo "$plan" | grep -qE 'Remote SQL: .* JOIN ' && echo 0 || echo 1) "$(echo "$nodes" | head -6)"
analyze=$(coord_psql -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $band" 2>&1)
drained=$(echo "$analyze" | sed -nE 's/^ *(Outer|Inner) Rows Drained: ([0-9]+).*/\2/p' | awk '{ s += $1 } END { print s + 0 }')
check "band join: the coordinator's GpuJoin drained every row the shards returned" \
	$([ "${drained:-0}" = $((R_ROWS + S_ROWS)) ] && echo "$analyze" | grep -qE 'Backend: (cpu|cuda)' && echo 0 || echo 1) \
	"drained ${drained:-none} of $((R_ROWS + S_ROWS)); $(echo "$analyze" | grep -E 'Backend|Drained' | tr '\n' ' ')"
check_equal "band join" "$band"
ineq="SELECT count(*), sum(r.v::bigint * s.w) FROM r JOIN s ON r.a < s.b AND r.v > s.w"
plan=$(coord_psql -c "EXPLAIN (COSTS OFF) $ineq" 2>&1)
check "inequality join with count and sum: a GpuJoin on the coordinator" \
	$([ "$(echo "$plan" | plan_nodes | grep -E 'Join|Nested Loop|Aggregate')" = "Custom Scan (GpuJoin)" ] && echo 0 || echo 1) \
	"$(echo "$plan" | plan_nodes | head -4)"
check_equal "inequality join" "$ineq"

# --- a shard stopped in the middle of a query ---
# The coordinator's session prepares the band join (whose plan, once made,
# is reused: no remote estimate is asked for again), runs it once, and runs
# it again while another session on shard 2 holds an ACCESS EXCLUSIVE lock on
# r_p1: postgres_fdw's cursor on shard 2 then waits for the lock, the query
# is in the middle of its execution, and shard 2 is stopped with pg_ctl -m
# immediate.  The same session waits (psql's \!) until the shard is back and
# runs the query a third time: postgres_fdw must make a new connection.
band_count="SELECT count(*), sum(r.v::bigint * s.w) FROM r JOIN s ON s.b BETWEEN r.a - 2 AND r.a + 2"
native=$(coord_psql -c "SET search_path = one" -c "SET gpujoin.enabled = off" -c "$band_count")
cat >"$WORK/victim.sql" <<SQL
PREPARE q AS $band_count;
\\echo first
EXECUTE q;
\\! touch $WORK/ready; for i in \$(seq 600); do [ -e $WORK/locked ] && break; sleep 0.1; done
\\echo second
EXECUTE q;
\\! for i in \$(seq 600); do [ -e $WORK/restarted ] && break; sleep 0.1; done
\\echo third
EXECUTE q;
SQL
start_time=$(coord_psql -c "SELECT pg_postmaster_start_time()")
"$PG_BINDIR/psql" -X -q -At -h "$COORD_DIR" -p "$COORD_PORT" -U postgres -d postgres \
	-f "$WORK/victim.sql" >"$WORK/victim.out" 2>"$WORK/victim.err" &
victim=$!
BG_PIDS="$victim"
for i in $(seq 300); do
	[ -e "$WORK/ready" ] && break
	sleep 0.1
done
shard_psql 2 -c "BEGIN" -c "LOCK TABLE r_p1 IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
locker=$!
BG_PIDS="$BG_PIDS $locker"
# the lock is taken once the locker's session shows its pg_sleep
for i in $(seq 300); do
	[ "$(shard_psql 2 -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'")" = 1 ] && break
	sleep 0.1
done
touch "$WORK/locked"
waiting=0
for i in $(seq 300); do
	waiting=$(shard_psql 2 -c "SELECT count(*) FROM pg_stat_activity
		WHERE application_name = 'postgres_fdw' AND wait_event_type = 'Lock'")
	[ "${waiting:-0}" -gt 0 ] && break
	sleep 0.1
done
check "the coordinator's query is waiting on shard 2 (postgres_fdw's session there waits for the lock)" \
	$([ "${waiting:-0}" -gt 0 ] && echo 0 || echo 1)
shard_ctl 2 "-m immediate stop"
check "shard 2 stopped (pg_ctl -m immediate) in the middle of the query" $?
wait "$locker"
for i in $(seq 300); do
	grep -q '^third$' "$WORK/victim.out" && break
	grep -q 'ERROR' "$WORK/victim.err" && break
	sleep 0.1
done
sed 's/^/#   /' "$WORK/victim.err" | head -6
check "the query ends with postgres_fdw's error (the connection lost, the remote SQL command named)" \
	$(grep -qE 'ERROR: +(server closed the connection unexpectedly|could not receive data from server|.*terminating connection)' "$WORK/victim.err" &&
		grep -qE 'CONTEXT: +remote SQL command' "$WORK/victim.err" && echo 0 || echo 1)
down=$(coord_psql -c "SELECT count(*) FROM r JOIN s ON r.k = s.k" 2>&1)
echo "$down" | head -2 | sed 's/^/#   /'
check "while shard 2 is down, a query over it fails: could not connect to server \"shard2\"" \
	$(echo "$down" | grep -q 'could not connect to server "shard2"' && echo 0 || echo 1)
check "the coordinator goes on: the same postmaster, queries on its own tables work" \
	$([ "$(coord_psql -c "SELECT pg_postmaster_start_time()")" = "$start_time" ] &&
		[ "$(coord_psql -c "SELECT count(*) FROM one.r")" = "$R_ROWS" ] && echo 0 || echo 1)
shard_ctl 2 start
check "shard 2 starts again" $?
touch "$WORK/restarted"
wait "$victim"
BG_PIDS=""
sed -n '/^first$/{n;p}' "$WORK/victim.out" >"$WORK/first"
sed -n '/^third$/{n;p}' "$WORK/victim.out" >"$WORK/third"
check "before the stop, the coordinator's band join gave the native count and sum" \
	$([ "$(cat "$WORK/first")" = "$native" ] && echo 0 || echo 1) "native $native, got $(cat "$WORK/first")"
check "after the restart, the same session's next query reconnects and gives the native count and sum" \
	$([ "$(cat "$WORK/third")" = "$native" ] && echo 0 || echo 1) "native $native, got $(cat "$WORK/third")"
check_equal "after the restart, equi-join on k" "SELECT r.k, r.a, r.v, s.b, s.w FROM r JOIN s ON r.k = s.k"

echo "scaleout: $passed passed, $failed failed"
[ "$failed" = 0 ]
