#!/bin/bash
# test/bench/bench_ab.sh: two builds of gpujoin.so timed on the same machine,
# the same data and the same cluster, in turns.
#
# What it measures: the equi-join queries of bench_equi.sh (f of F_N rows
# joined to d of D_N rows on f.k = d.k: count(*), sum(f.v * d.w), and the
# same grouped by d.k % 100), and with B_N set its band count (rb x sb of
# B_N int8 rows each, s.t BETWEEN r.t - 12 AND r.t + 12), each as the
# planner chooses by default, with
# library A and library B installed in turn: ROUNDS rounds of (B, A), each
# after a restart of the cluster (the library is preloaded), RUNS timed runs
# per query after a warm-up.  Prints one table: median and best of all the
# runs of each library, and B's median over A's.  The answers of the two
# libraries must be equal (a line says so where one differs).
#
# Why: a change's effect is smaller than the difference between two lent
# machines of the same kind; timing both builds in one call on one machine
# is the comparison a change's note reports.
#
# How to build A: check the older commit out into a worktree (git worktree
# add /tmp/old COMMIT), build it with the same PG_CONFIG, and pass its
# gpujoin.so; B is usually the working tree's.  Both must come from trees
# whose SQL objects match the installed extension's (the script copies
# only the shared library).
#
# Environment:
#   LIB_A, LIB_B  the two gpujoin.so files (required)
#   F_N, D_N      table sizes                      default 10000000, 1000000
#   B_N           rows of rb and sb for the band query (default: no band)
#   ROUNDS        rounds of (B, A)                 default 2
#   RUNS          timed runs per query per round   default 5
#   ONLY          extended regexp over the query names (count, sum, group)
#   GPUJOIN_CLUSTER_CONF  extra postgresql.conf lines of the throwaway
#                 cluster (test/lib/cluster.sh; PG_CONFIG from the
#                 environment), e.g. shared_buffers, workers, gpujoin.device
#   OUTDIR        where ab.tsv and run.log go      default bench_out/ab-<date>
#   HUGE_PAGES    1: the cluster's shared memory in huge pages
#                 (test/lib/cluster.sh reserves them as root)
set -u
cd "$(dirname "$0")/../.."

: "${LIB_A:?set LIB_A and LIB_B to the two gpujoin.so files}"
: "${LIB_B:?set LIB_A and LIB_B to the two gpujoin.so files}"
F_N=${F_N:-10000000}
D_N=${D_N:-1000000}
B_N=${B_N:-}
ROUNDS=${ROUNDS:-2}
RUNS=${RUNS:-5}
ONLY=${ONLY:-}
OUTDIR=${OUTDIR:-bench_out/ab-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUTDIR"
LOG=$OUTDIR/run.log
TSV=$OUTDIR/ab.tsv

export PG_CONFIG=${PG_CONFIG:-pg_config}
PKGLIB=$("$PG_CONFIG" --pkglibdir)
for lib in "$LIB_A" "$LIB_B"; do
	[ -r "$lib" ] || { echo "cannot read $lib" >&2; exit 1; }
done
[ -w "$PKGLIB" ] || { echo "cannot write $PKGLIB (the library is installed there in turn)" >&2; exit 1; }
# the libraries are copied aside first: LIB_B may be the installed one
WORK=$(mktemp -d)
cp "$LIB_A" "$WORK/a.so" && cp "$LIB_B" "$WORK/b.so" || exit 1
cp "$PKGLIB/gpujoin.so" "$WORK/installed.so" 2>/dev/null

. test/lib/cluster.sh
. test/lib/bench_tables.sh
finish() {
	cluster_stop
	[ -f "$WORK/installed.so" ] && cp "$WORK/installed.so" "$PKGLIB/gpujoin.so"
	rm -rf "$WORK"
}
trap finish EXIT
cluster_start || exit 1
PSQL="$PG_BINDIR/psql -X -q -d postgres"

# install LIB (a or b) and restart: the library is preloaded
use_lib() {
	as_owner "'$PG_BINDIR/pg_ctl' -D '$CLUSTER_DIR/data' -m fast -w stop" >>"$LOG" 2>&1
	cp "$WORK/$1.so" "$PKGLIB/gpujoin.so" || exit 1
	as_owner "'$PG_BINDIR/pg_ctl' -D '$CLUSTER_DIR/data' -l '$CLUSTER_DIR/server.log' -w -t 120 start" >>"$LOG" 2>&1 || {
		echo "the cluster did not start with library $1" >&2
		tail -5 "$CLUSTER_DIR/server.log" >&2
		exit 1
	}
}

use_lib b
echo "generating f $F_N x d $D_N"
$PSQL -v ON_ERROR_STOP=1 >>"$LOG" 2>&1 <<SQL || { echo "data generation failed (see $LOG)" >&2; exit 1; }
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpujoin;
DROP SCHEMA IF EXISTS gpujoin_ab CASCADE;
CREATE SCHEMA gpujoin_ab;
SET search_path = gpujoin_ab;
SELECT setseed(0.42);
$(equi_tables_sql "$F_N" "$D_N")
$([ -n "$B_N" ] && band_tables_sql "$B_N")
SQL
# all-visible pages, as bench_equi.sh's bench_settle makes them
$PSQL -c "CHECKPOINT" -c "VACUUM (FREEZE, ANALYZE)" >>"$LOG" 2>&1

QUERIES="count|SELECT count(*) FROM f JOIN d ON f.k = d.k
sum|SELECT sum(f.v * d.w) FROM f JOIN d ON f.k = d.k
group|SELECT d.k % 100 AS g, count(*), sum(f.v * d.w) FROM f JOIN d ON f.k = d.k GROUP BY 1 ORDER BY 1"
[ -n "$B_N" ] && QUERIES="band|SELECT count(*) FROM rb r JOIN sb s ON s.t BETWEEN r.t - 12 AND r.t + 12
$QUERIES"

printf 'round\tlib\tquery\tms\n' >"$TSV"
for r in $(seq "$ROUNDS"); do
	for lib in b a; do
		use_lib $lib
		while IFS='|' read -r name sql; do
			[ -z "$ONLY" ] || echo "$name" | grep -Eq -- "$ONLY" || continue
			out=$({
				echo "SET search_path = gpujoin_ab;"
				echo "EXPLAIN (COSTS OFF) $sql;"
				echo "$sql;"
				echo '\timing on'
				for _ in $(seq "$RUNS"); do echo "$sql;"; done
				echo '\timing off'
				echo '\echo @@answer'
				echo "$sql;"
			} | $PSQL -At 2>&1)
			printf '== round %s library %s %s\n%s\n' "$r" "$lib" "$name" "$out" >>"$LOG"
			printf '%s\n' "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' |
				awk -v r="$r" -v l="$lib" -v q="$name" '{ printf "%s\t%s\t%s\t%s\n", r, l, q, $1 }' >>"$TSV"
			printf '%s\n' "$out" | sed -n '/^@@answer/,$p' >"$WORK/answer_${lib}_$name"
		done <<<"$QUERIES"
	done
done

echo "| query | B: median (best) | A: median (best) | B / A |"
echo "| --- | --: | --: | --: |"
awk -F'\t' 'NR > 1 { t[$3, $2] = t[$3, $2] " " $4; if (!seen[$3]++) order[++n] = $3 }
function med(s,   a, k, i, j, x) {
	k = split(s, a, " ")
	for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x }
	best = a[1]
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	for (i = 1; i <= n; i++) {
		q = order[i]
		mb = med(t[q, "b"]); bb = best; ma = med(t[q, "a"]); ba = best
		printf "| %s | %.1f (%.1f) | %.1f (%.1f) | %.2f |\n", q, mb, bb, ma, ba, mb / ma
	}
}' "$TSV"
for f in "$WORK"/answer_b_*; do
	name=${f##*answer_b_}
	if ! cmp -s "$f" "$WORK/answer_a_$name"; then
		echo "answers differ for $name (see $LOG)"
	fi
done
echo "A: $LIB_A; B: $LIB_B; $(nproc) cores$(nvidia-smi -L 2>/dev/null | head -1 | sed 's/^/, /'); results in $OUTDIR"
