#!/bin/bash
# test/check_layers.sh: calls only go down (issue 34).
#
# The source is in rooms, top to bottom:
#
#   planner_hook      src/planner_hook.c: the hooks and the GUCs
#   agg               src/custom_scan/agg/: the aggregate node
#   exec              src/custom_scan/exec/: the join node's execution
#   plan              src/custom_scan/plan/: paths, costs, plans
#   host_chunking     src/host_chunking/: the staging of a join's inputs
#   devices           src/devices.c: the backend a join runs on
#   service           src/service/: the GPU service and its clients
#   kernels           src/kernels/ (cpu/, cuda/, shared/): the backends
#
# A function is called only from a room above the one that defines it, or
# from its own room; and the files of one room call each other without a
# cycle, so that each room, and each file of it, can be read, tested and
# replaced from the bottom up.  Data (the GUC variables, the service's
# shared memory pointer, the CustomScanMethods tables) may be referenced
# from anywhere: only function symbols count.  Two checks, one test each:
#
#   down      every undefined symbol of an object that another object
#             defines as a function (nm type T) is defined in the same room
#             or in a lower one;
#   acyclic   within each room, the graph of such calls between files has
#             no cycle.
#
# Run after the build (test/run_tests.sh does); prints a TAP line per
# check, the offending edges under a failed one, and ends with
# "layers: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. test/lib/check.sh

objects=$(make -s --no-print-directory PG_CONFIG="${PG_CONFIG:-pg_config}" print-objs)
missing=""
for o in $objects; do
	[ -f "$o" ] || missing="$missing $o"
done
if [ -n "$missing" ]; then
	echo "not ok - the objects are built"
	echo "#   missing:$missing"
	echo "layers: 0 passed, 1 failed"
	exit 1
fi

# one line per call between objects: "caller callee symbol"
# shellcheck disable=SC2086
edges=$(
	{
		nm --defined-only -A $objects | awk '$(NF-1) == "T" {sub(/:.*/, "", $1); print "T", $1, $NF}'
		nm -u -A $objects | awk '{sub(/:.*/, "", $1); print "U", $1, $NF}'
	} | awk '
		$1 == "T" { def[$3] = $2; next }
		$1 == "U" && ($3 in def) && def[$3] != $2 { print $2, def[$3], $3 }'
)

# room NAME RANK of an object, by its path
room_of() {
	case "$1" in
		src/planner_hook.o) echo "planner_hook 0" ;;
		src/custom_scan/agg/*) echo "agg 1" ;;
		src/custom_scan/exec/*) echo "exec 2" ;;
		src/custom_scan/plan/*) echo "plan 3" ;;
		src/host_chunking/*) echo "host_chunking 4" ;;
		src/devices.o) echo "devices 5" ;;
		src/service/*) echo "service 6" ;;
		src/kernels/*) echo "kernels 7" ;;
		*) echo "unknown -1" ;;
	esac
}
rooms=""
for o in $objects; do
	rooms="$rooms$o $(room_of "$o")"$'\n'
done
unplaced=$(echo "$rooms" | awk '$2 == "unknown" {print "no room: " $1}')

# "caller callee symbol callerroom callerrank calleeroom calleerank"
placed=$(
	{
		echo "$rooms" | sed '/^$/d; s/^/R /'
		echo "$edges" | sed '/^$/d; s/^/E /'
	} | awk '
		$1 == "R" { room[$2] = $3; rank[$2] = $4; next }
		$1 == "E" { print $2, $3, $4, room[$2], rank[$2], room[$3], rank[$3] }'
)

up=$(echo "$placed" | awk 'NF == 7 && $5 > $7 {
		printf "%s (%s) -> %s (%s): %s\n", $1, $4, $2, $6, $3 }' | sort)
report "$([ -z "$up$unplaced" ] && echo 1 || echo 0)" \
	"calls only go down between rooms" "$(echo "$unplaced$up" | sed '/^$/d')"

# the edges between files of one room that lie on a cycle: a -> b where b
# reaches a (transitive closure of a small graph)
cyclic=$(echo "$placed" | awk '
	NF == 7 && $4 == $6 {
		e[$1 SUBSEP $2] = 1; sym[$1 SUBSEP $2] = sym[$1 SUBSEP $2] " " $3
		node[$1] = 1; node[$2] = 1
	}
	END {
		for (a in node) for (b in node) r[a, b] = ((a, b) in e)
		for (k in node) for (a in node) if (r[a, k]) for (b in node) if (r[k, b]) r[a, b] = 1
		for (ab in e) {
			split(ab, p, SUBSEP)
			if (r[p[2], p[1]]) printf "%s -> %s:%s\n", p[1], p[2], sym[ab]
		}
	}' | sort)
report "$([ -z "$cyclic" ] && echo 1 || echo 0)" \
	"no cycle between files of a room" "$cyclic"

echo "layers: $passed passed, $failed failed"
[ "$failed" = 0 ]
