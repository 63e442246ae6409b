#!/bin/bash
# test/bench/bench_scaleout.sh: joins over three shards (postgres_fdw
# partitions, README "Across servers") against the same rows on one server,
# as a markdown table.
#
# What it measures, and why.  The coordinator and the three shards of
# test/scaleout/scaleout_lib.sh run on this one machine, so the shards share
# its cores (2 on the development machine) with each other and with the
# coordinator: three shards cannot be faster here for having three times the
# processors.  What the table shows is what the sharded plan costs and saves
# on the same hardware: the push-down (each shard joins a third of the rows,
# the three at once with async_capable), what crosses postgres_fdw (joined
# rows, groups, or whole tables for a join that is not pushed down), the
# planning round trips of use_remote_estimate, and where GpuJoin runs (on
# each shard, or on the coordinator over the rows the shards return).  On
# separate machines each shard's part would run on processors of its own;
# this was not measured.
#
# r has R_ROWS rows (default 2000000) over KEYS key values (500000), s has
# S_ROWS (1000000) over 1.2 x KEYS, hash-partitioned on k into three shards;
# one.r and one.s on the coordinator hold the same rows as plain tables (with
# a btree index on one.s (b), the native plan's best for the band join).
# Columns (each the median of RUNS runs, default 3, in one session after a
# warm-up run, timed by psql's \timing on the coordinator; the result of
# every column is checked against the native one):
#
#   three shards       r and s, default costs on every server (GpuJoin
#                      wherever the planners pick it: the plan column says
#                      where it ran)
#   shards, native     the same with gpujoin.enabled = off on the coordinator
#                      and the shards (not run for the band join: without
#                      GpuJoin the coordinator's plan is a nested loop over
#                      every pair, foreign tables having no index there)
#   one server GpuJoin one.r and one.s, GpuJoin forced (PostgreSQL's join
#                      methods off)
#   one server native  one.r and one.s, gpujoin.enabled = off
#
# Every cluster has max_parallel_workers_per_gather = 2 (test/lib/cluster.sh),
# so the native plans on one server may use two workers; the shards may too,
# on the same cores.  PG_CONFIG from the environment (the extension must be
# installed there); GPUJOIN_CLUSTER_CONF adds postgresql.conf lines on every
# cluster.  About 2 minutes on 2 cores.
#
#   RUNS=3 test/bench/bench_scaleout.sh
set -eu
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
R_ROWS=${R_ROWS:-2000000}
S_ROWS=${S_ROWS:-1000000}
KEYS=${KEYS:-500000}
for v in RUNS R_ROWS S_ROWS KEYS; do
	[[ ${!v} =~ ^[0-9]+$ ]] || { echo "$0: $v must be a whole number (got '${!v}')" >&2; exit 2; }
done
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
. test/scaleout/scaleout_lib.sh
trap scaleout_stop EXIT
scaleout_start "enable_partitionwise_join = on
enable_partitionwise_aggregate = on" ""
scaleout_schema "$R_ROWS" "$S_ROWS" "$KEYS"
coord_psql -c "CREATE INDEX ON one.s (b)" -c "VACUUM (FREEZE, ANALYZE) one.r" -c "VACUUM (FREEZE, ANALYZE) one.s"
for i in $(seq $SHARDS); do
	shard_psql "$i" -c "VACUUM (FREEZE, ANALYZE)"
done

SHARDED="SET search_path = public"
SHARDED_NATIVE="SET search_path = public; SET gpujoin.enabled = off"
ONE_GPU="SET search_path = one; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off"
ONE_NATIVE="SET search_path = one; SET gpujoin.enabled = off"

# time_session SETTINGS QUERY: "median-ms result" of RUNS runs in one
# coordinator session after a warm-up run (so postgres_fdw's connections to
# the shards are made before the timed runs, as in a pooled session; each
# run still plans, with use_remote_estimate's round trips)
time_session() {
	local args=(-c "$1" -c "$2" -c '\timing on') i out ms result
	for i in $(seq "$RUNS"); do
		args+=(-c "$2")
	done
	out=$("$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$COORD_DIR" -p "$COORD_PORT" -U postgres -d postgres "${args[@]}")
	result=$(echo "$out" | grep -v '^Time: ' | tail -1)
	ms=$(echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	echo "$ms $result"
}

# plan_name: the join of an EXPLAIN on stdin in a few words: its first join
# node, GpuJoin's algorithm and "+agg" where it computes the aggregates, an
# index scan under it
plan_name() {
	local plan node
	plan=$(cat)
	node=$(echo "$plan" | sed -nE '1s/^ *//p; s/^ *-> +//p' | grep -E 'Join|Nested Loop' | head -1 |
		sed -E 's/Custom Scan \(GpuJoin\)/GpuJoin/; s/ on .*//; s/  .*//')
	echo "$node$(echo "$plan" | grep -m1 -oE 'Algorithm: [a-z]+' | sed 's/Algorithm:/ /; s/  / /')$(
		echo "$plan" | grep -q 'GPU Aggregates' && echo ' +agg')$(
		echo "$plan" | grep -qE 'Index (Only )?Scan' && echo ' (index)')"
}

# where_joined SETTINGS QUERY: where the three-shard plan joins (as the
# planners pick now): "shards: PLAN" when the coordinator's Foreign Scans hold
# the join (the plan is the first shard's EXPLAIN of its Remote SQL), else
# "coordinator: PLAN"
where_joined() {
	local plan remote p
	plan=$(coord_psql -c "$1" -c "EXPLAIN (VERBOSE, COSTS OFF) $2")
	remote=$(echo "$plan" | sed -n 's/^ *Remote SQL: //p' | grep ' JOIN ' | head -1)
	if [ -n "$remote" ]; then
		p=$(echo "$remote" | grep -oE 'public\.r_p[0-9]+' | head -1 | sed 's/.*r_p//')
		echo "shards: $(shard_psql $((p + 1)) -c "EXPLAIN (COSTS OFF) $remote" | plan_name)$(
			echo "$plan" | grep -q 'Partial Aggregate' && echo ', partial aggregates on the coordinator')"
	else
		echo "coordinator: $(echo "$plan" | plan_name)"
	fi
}

# planning_ms SETTINGS QUERY: the coordinator's planning time of QUERY in a
# session whose postgres_fdw connections are made (use_remote_estimate asks
# the shards for their estimates while planning)
planning_ms() {
	coord_psql -c "$1" -c "$2" -c "EXPLAIN (SUMMARY) $2" >"$PLAN_OUT"
	sed -n 's/^Planning Time: \([0-9.]*\) ms/\1/p' "$PLAN_OUT"
}

# shards_gpujoin on|off: gpujoin.enabled on the shards, for the coordinator's
# next sessions (postgres_fdw's new connections read it)
shards_gpujoin() {
	local i
	for i in $(seq $SHARDS); do
		shard_psql "$i" -c "ALTER DATABASE postgres SET gpujoin.enabled = $1"
	done
}

declare -A QUERIES NOTES
NAMES=(grouped_sum join_count band_count)
QUERIES[grouped_sum]="SELECT count(*), sum(n), sum(t) FROM (SELECT r.k, count(*) AS n, sum(r.a::int8 * s.b) AS t FROM r JOIN s ON r.k = s.k GROUP BY r.k) q"
NOTES[grouped_sum]="equi-join on k, count and sum over groups by k (the aggregate pushed down whole)"
QUERIES[join_count]="SELECT count(*), sum(r.a::int8 * s.b) FROM r JOIN s ON r.k = s.k"
NOTES[join_count]="the same count and sum over the whole join, not grouped by k (PostgreSQL 15 pushes no partial aggregate down)"
QUERIES[band_count]="SELECT count(*), sum(r.v::int8 * s.w) FROM r JOIN s ON s.b BETWEEN r.a - 2 AND r.a + 2"
NOTES[band_count]="band join \`s.b BETWEEN r.a - 2 AND r.a + 2\`, count and sum (not pushed down: every row shipped)"
# the band join without GpuJoin on the coordinator is a nested loop over
# R_ROWS x S_ROWS pairs (a foreign table has no index there): not run
declare -A SKIP_SHARDED_NATIVE
SKIP_SHARDED_NATIVE[band_count]="not run (a nested loop over $R_ROWS x $S_ROWS pairs)"

echo "settings: R_ROWS=$R_ROWS S_ROWS=$S_ROWS KEYS=$KEYS RUNS=$RUNS $(nproc) cores," \
	"gpujoin.device=$(coord_psql -c 'SHOW gpujoin.device'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
PLAN_OUT=$COORD_DIR/plan.out
declare -A SH SHN G N PLAN SHNPLAN GPLAN NPLAN PLANNING
for name in "${NAMES[@]}"; do
	q=${QUERIES[$name]}
	PLAN[$name]=$(where_joined "$SHARDED" "$q")
	PLANNING[$name]=$(planning_ms "$SHARDED" "$q")
	GPLAN[$name]=$(coord_psql -c "$ONE_GPU" -c "EXPLAIN (COSTS OFF) $q" | plan_name)
	NPLAN[$name]=$(coord_psql -c "$ONE_NATIVE" -c "EXPLAIN (COSTS OFF) $q" | plan_name)
	SH[$name]=$(time_session "$SHARDED" "$q")
	G[$name]=$(time_session "$ONE_GPU" "$q")
	N[$name]=$(time_session "$ONE_NATIVE" "$q")
	echo "$name: three shards ${SH[$name]%% *} ms, one server GpuJoin ${G[$name]%% *} ms, native ${N[$name]%% *} ms" >&2
done
shards_gpujoin off
for name in "${NAMES[@]}"; do
	if [ -n "${SKIP_SHARDED_NATIVE[$name]:-}" ]; then
		SHN[$name]="${SKIP_SHARDED_NATIVE[$name]}"
		continue
	fi
	SHNPLAN[$name]=$(where_joined "$SHARDED_NATIVE" "${QUERIES[$name]}")
	SHN[$name]=$(time_session "$SHARDED_NATIVE" "${QUERIES[$name]}")
	echo "$name: three shards native ${SHN[$name]%% *} ms" >&2
done
shards_gpujoin on

echo
echo "| query | three shards: where it joins | three shards ms | of which planning | shards, native ms | one server GpuJoin ms | one server native ms | results |"
echo "| --- | --- | --: | --: | --: | --: | --: | --- |"
for name in "${NAMES[@]}"; do
	native_result=${N[$name]#* }
	same=equal
	for v in "${SH[$name]}" "${SHN[$name]}" "${G[$name]}"; do
		[ "${v#not run}" = "$v" ] || continue
		[ "${v#* }" = "$native_result" ] || same="DIFFER: ${v#* } vs $native_result"
	done
	shn="${SHN[$name]%% *} (${SHNPLAN[$name]:-})"
	[ "${SHN[$name]#not run}" = "${SHN[$name]}" ] || shn=${SHN[$name]}
	echo "| ${NOTES[$name]} | ${PLAN[$name]} | ${SH[$name]%% *} | ${PLANNING[$name]} | $shn | ${G[$name]%% *} (${GPLAN[$name]}) | ${N[$name]%% *} (${NPLAN[$name]}) | $same |"
done
