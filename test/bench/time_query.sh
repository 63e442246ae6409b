# test/bench/time_query.sh: sourced by the benchmark scripts.
#
# time_query SETTINGS QUERY -> median milliseconds of RUNS runs, timed with
# psql's \timing (no per-node instrumentation); the caller defines psql()
# (its server and options) and RUNS.
time_query() {
	local settings=$1 query=$2 i t times=()
	for i in $(seq "$RUNS"); do
		t=$(psql -c "$settings" -c '\timing on' -c "$query" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
		times+=("$t")
	done
	printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
