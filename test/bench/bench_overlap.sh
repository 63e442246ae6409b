#!/bin/bash
# test/bench/bench_overlap.sh: what step overlap (gpujoin.overlap_steps) saves,
# as a table.
#
# With overlap a join's next step runs on a helper thread while the executor
# returns the rows of the current one, so the saving is at most the smaller
# of the backend's time and the time spent emitting rows.  Each query runs
# with overlap on and off, RUNS times each (median), under
# EXPLAIN (ANALYZE, TIMING OFF): the rows are formed and discarded, nothing
# goes to the client, so what remains is the join.  Starts a throwaway
# cluster (test/lib/cluster.sh; the extension must be installed);
# GPUJOIN_CLUSTER_CONF picks the backend, e.g. "gpujoin.device = cuda".
# N sets the side sizes (default 200000).
#
#   band      r x s, s.t BETWEEN r.t - 20 AND r.t + 20 (sort-merge, ~8N rows)
#   theta     nested loop over an expression the interpreter evaluates,
#             N/2 x N/2 rows, ~N/20 rows out
#   equi      r x s on a key with 10 rows a value (hash, ~10N rows)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
N=${N:-200000}
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
trap cluster_stop EXIT
GPUJOIN_CLUSTER_CONF="${GPUJOIN_CLUSTER_CONF:-}
max_parallel_workers_per_gather = 0
jit = off" cluster_start

psql() { "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }

Q=$((N / 2))
psql <<SQL
CREATE EXTENSION IF NOT EXISTS gpujoin;
CREATE TABLE r AS SELECT g AS id, (g::int8 * 7919 % $N)::int AS t, g % $((N / 10)) AS k
  FROM generate_series(1, $N) g;
CREATE TABLE s AS SELECT g AS id, (g::int8 * 104729 % $N)::int AS t, g % $((N / 10)) AS k
  FROM generate_series(1, $N) g;
CREATE TABLE rq AS SELECT * FROM r WHERE id <= $Q;
CREATE TABLE sq AS SELECT * FROM s WHERE id <= $Q;
VACUUM ANALYZE;
SQL

GPU="SET gpujoin.enabled = on; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off; SET gpujoin.enable_aggregate = off"
BAND="SELECT r.id, s.id FROM r JOIN s ON s.t BETWEEN r.t - 20 AND r.t + 20"
THETA="SELECT r.id, s.id FROM rq r JOIN sq s ON (r.t + s.t) % 5000 = 0 AND r.t <> s.t"
EQUI="SELECT r.id, s.id FROM r JOIN s ON r.k = s.k"

# run SETTINGS QUERY -> "execution backend wait steps overlapped" (ms, ms, ms)
run() {
	psql -c "$1" -c "EXPLAIN (ANALYZE, TIMING OFF) $2" | awk '
		/Execution Time/ { e = $3 }
		/Backend Time/ { b = $3 }
		/Overlap Wait Time/ { w = $4 }
		/ Steps: / { st = $2 }
		/Steps Overlapped/ { o = $3 }
		/actual rows=/ && !rows { match($0, /actual rows=[0-9]+/); rows = substr($0, RSTART + 12, RLENGTH - 12) }
		END { printf "%s %s %s %s %s %s\n", e, b, (w == "" ? 0 : w), st, (o == "" ? 0 : o), rows }'
}
# median over RUNS of each field
median_run() {
	local i
	for i in $(seq "$RUNS"); do run "$1" "$2"; done |
		sort -g -k1 | awk '{l[NR] = $0} END {print l[int((NR + 1) / 2)]}'
}

echo "backend: $(psql -At -c "SELECT backend || ' ' || coalesce(name, '') FROM gpujoin_devices() WHERE selected")"
echo
echo "| query | rows | steps | overlap off: ms (backend ms) | overlap on: ms (backend ms, waited ms) | saved |"
echo "| --- | --: | --: | --: | --: | --: |"
for name in band theta equi; do
	case $name in
		band) q=$BAND ;;
		theta) q=$THETA ;;
		*) q=$EQUI ;;
	esac
	read -r e_off b_off _ steps _ rows <<<"$(median_run "$GPU; SET gpujoin.overlap_steps = off" "$q")"
	read -r e_on b_on w_on _ _ _ <<<"$(median_run "$GPU; SET gpujoin.overlap_steps = on" "$q")"
	echo "| $name | $rows | $steps | $e_off ($b_off) | $e_on ($b_on, $w_on) | $(awk -v a="$e_off" -v b="$e_on" 'BEGIN {printf "%.0f%%", 100 * (a - b) / a}') |"
done
