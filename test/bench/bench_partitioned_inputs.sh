#!/bin/bash
# test/bench/bench_partitioned_inputs.sh: joins whose inputs are partitioned
# tables or UNION ALL of tables, an Append of Seq Scans under the join that
# the columnar heap reader reads a table at a time (src/host_chunking/
# heap_reader.c): the plan the planner picks, PostgreSQL's own, and GpuJoin
# forced, as a markdown table.
#
# Data (setseed(0.42)), sizes times SCALE:
#   d        100k rows, k the primary key, w float8, c int4 in [0, 100]
#   fp       1M rows in four range partitions by id; k over 1.2 x |d|, an
#            index on k
#   dp       d's rows in two hash partitions by k
#   small_p  500 rows in four hash partitions by k
#   ra       100k rows in two range partitions, t int4; sb 100k rows of t,
#            an index on sb.t (PostgreSQL's band join is an index nested loop)
#   fa, fb   fp's two halves as plain tables
#
# Per shape and mode (default: as configured; native: gpujoin.enabled =
# off; forced: PostgreSQL's join methods off) the top join node of the
# plan, and the median of RUNS runs after a warm-up, each mode in one psql
# session timed by \timing, every statement under statement_timeout =
# TIMEOUT_S; then the outer and inner input lines of the default plan's
# EXPLAIN ANALYZE where it is a GpuJoin.  A flag as bench_plan_quality.sh's:
# SLOWER, a default GpuJoin over 1.1 x native; MISSED, no GpuJoin by default
# where forced takes under 0.67 x both native and the default.
#
# Environment: PG_CONFIG; SCALE (default 1); RUNS (default 5); TIMEOUT_S
# (default 10); PARALLEL, max_parallel_workers_per_gather (default 2);
# GPUJOIN_CLUSTER_CONF, settings of the throwaway cluster (default
# "gpujoin.device = cpu").
#
#   SCALE=0.1 RUNS=1 test/bench/bench_partitioned_inputs.sh
set -u
cd "$(dirname "$0")/../.."

SCALE=${SCALE:-1}
RUNS=${RUNS:-5}
TIMEOUT_S=${TIMEOUT_S:-10}
PARALLEL=${PARALLEL:-2}
export GPUJOIN_CLUSTER_CONF="${GPUJOIN_CLUSTER_CONF:-gpujoin.device = cpu}
max_parallel_workers_per_gather = $PARALLEL"

. test/lib/cluster.sh
cluster_start >/dev/null || exit 1
trap cluster_stop EXIT

psql() { "$PG_BINDIR/psql" -X -q -d postgres "$@"; }
n() { awk -v x="$1" -v s="$SCALE" 'BEGIN { v = int(x * s); print (v < 1 ? 1 : v) }'; }
ND=$(n 100000) NF=$(n 1000000) NS=$(n 500) NR=$(n 100000)

psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || exit 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpujoin;
SELECT setseed(0.42);
CREATE TABLE d AS SELECT g AS k, random() AS w, (random() * 100)::int4 AS c FROM generate_series(1, $ND) g;
ALTER TABLE d ADD PRIMARY KEY (k);
CREATE TABLE fp (id int8, k int4, v float8, g int4) PARTITION BY RANGE (id);
CREATE TABLE fp1 PARTITION OF fp FOR VALUES FROM (MINVALUE) TO ($NF / 4 + 1);
CREATE TABLE fp2 PARTITION OF fp FOR VALUES FROM ($NF / 4 + 1) TO ($NF / 2 + 1);
CREATE TABLE fp3 PARTITION OF fp FOR VALUES FROM ($NF / 2 + 1) TO (3 * $NF / 4 + 1);
CREATE TABLE fp4 PARTITION OF fp DEFAULT;
INSERT INTO fp SELECT g, (random() * 1.2 * $ND)::int4, random(), (random() * 1000)::int4
FROM generate_series(1, $NF) g;
CREATE INDEX ON fp (k);
CREATE TABLE dp (k int4, w float8) PARTITION BY HASH (k);
CREATE TABLE dp0 PARTITION OF dp FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE dp1 PARTITION OF dp FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO dp SELECT k, w FROM d;
CREATE TABLE small_p (k int4, x int4) PARTITION BY HASH (k);
CREATE TABLE small_p0 PARTITION OF small_p FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE small_p1 PARTITION OF small_p FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE small_p2 PARTITION OF small_p FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE small_p3 PARTITION OF small_p FOR VALUES WITH (MODULUS 4, REMAINDER 3);
INSERT INTO small_p SELECT (random() * $ND)::int4, g FROM generate_series(1, $NS) g;
CREATE TABLE ra (t int4, a int4) PARTITION BY RANGE (a);
CREATE TABLE ra0 PARTITION OF ra FOR VALUES FROM (MINVALUE) TO ($NR / 2);
CREATE TABLE ra1 PARTITION OF ra DEFAULT;
INSERT INTO ra SELECT (random() * 100 * $NR)::int4, g FROM generate_series(1, $NR) g;
CREATE TABLE sb AS SELECT (random() * 100 * $NR)::int4 AS t FROM generate_series(1, $NR) g;
CREATE INDEX ON sb (t);
CREATE TABLE fa AS SELECT * FROM fp WHERE id <= $NF / 2;
CREATE TABLE fb AS SELECT * FROM fp WHERE id > $NF / 2;
VACUUM ANALYZE;
SQL

SHAPES=(
	"small_count|SELECT count(*) FROM small_p s JOIN d ON s.k = d.k"
	"part_pruned|SELECT count(*) FROM fp JOIN d ON fp.k = d.k WHERE fp.id < $NF / 10"
	"part_filter|SELECT count(*) FROM fp JOIN d ON fp.k = d.k WHERE fp.v < 0.05"
	"part_x_part|SELECT count(*) FROM fp JOIN dp ON fp.k = dp.k"
	"part_small|SELECT sum(dp.w) FROM dp JOIN small_p s ON s.k = dp.k"
	"union_all|SELECT count(*) FROM (SELECT k FROM fa UNION ALL SELECT k FROM fb) u JOIN d ON u.k = d.k"
	"part_rows|COPY (SELECT fp.id, d.w FROM fp JOIN d ON fp.k = d.k WHERE fp.g < 50) TO '/dev/null'"
	"band_part|SELECT count(*) FROM ra JOIN sb ON sb.t BETWEEN ra.t - 50 AND ra.t + 50"
	"part_index|SELECT count(*) FROM fp JOIN d ON fp.k = d.k WHERE d.k < 200"
	"part_group|SELECT d.c, count(*) FROM fp JOIN d ON fp.k = d.k GROUP BY d.c"
)

mode_settings() {
	local s="SET statement_timeout = '${TIMEOUT_S}s';"
	case $1 in
	native) s="$s SET gpujoin.enabled = off;" ;;
	forced) s="$s SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off;" ;;
	esac
	echo "$s"
}

# the query of a shape: its SELECT where the shape copies the rows out
query_of() {
	local q=${1#COPY (}
	echo "${q%) TO *}"
}

# the top join node of a plan: GpuJoin, Hash Join, Nested Loop, ...
plan_of() {
	psql -c "$1" -c "EXPLAIN (COSTS OFF) $(query_of "$2")" 2>/dev/null |
		grep -oE 'GpuJoin|Hash (Semi |Anti |Left |Right )?Join|Nested Loop|Merge Join' | head -1
}

# median ms of RUNS runs after a warm-up in one session; "timeout" when one fails
time_of() {
	local t
	t=$({ echo "$1"; echo "$2;"; echo '\timing on'; for _ in $(seq "$RUNS"); do echo "$2;"; done; } |
		psql 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
	[ "$(echo "$t" | grep -c .)" -lt "$RUNS" ] && { echo timeout; return; }
	echo "$t" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

echo "partitioned inputs: scale $SCALE (d $ND, fp $NF in 4, dp in 2, small_p $NS in 4, ra = sb $NR), runs $RUNS, parallel $PARALLEL"
echo
echo "| shape | default plan | default | native plan | native | forced | default/native | forced/native | flag | inputs (default) |"
echo "| --- | --- | --: | --- | --: | --: | --: | --: | --- | --- |"
slower=0 missed=0
for shape in "${SHAPES[@]}"; do
	name=${shape%%|*} sql=${shape#*|}
	declare -A plan ms
	for mode in default native forced; do
		plan[$mode]=$(plan_of "$(mode_settings $mode)" "$sql")
		ms[$mode]=$(time_of "$(mode_settings $mode)" "$sql")
	done
	flag=ok inputs=
	if [ "${plan[default]}" = GpuJoin ]; then
		inputs=$(psql -c "$(mode_settings default)" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $(query_of "$sql")" 2>/dev/null |
			grep -E '(Outer|Inner) Input' | sed 's/^ *//' | paste -sd ';' | sed 's/;/; /g')
		awk -v a="${ms[default]}" -v b="${ms[native]}" 'BEGIN { exit !(a == "timeout" || (b != "timeout" && a > 1.1 * b)) }' &&
			flag=SLOWER && slower=$((slower + 1))
	elif awk -v f="${ms[forced]}" -v n="${ms[native]}" -v d="${ms[default]}" \
		'BEGIN { exit !(f != "timeout" && (n == "timeout" || f < 0.67 * n) && (d == "timeout" || f < 0.67 * d)) }'; then
		flag=MISSED missed=$((missed + 1))
	fi
	echo "| $name | ${plan[default]} | ${ms[default]} | ${plan[native]} | ${ms[native]} | ${ms[forced]} |" \
		"$(ratio "${ms[default]}" "${ms[native]}") | $(ratio "${ms[forced]}" "${ms[native]}") | $flag | $inputs |"
done
echo
echo "slower = $slower, missed = $missed"
