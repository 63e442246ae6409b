#!/bin/bash
# test/bench/plot_speedup.sh TSV PNG [LABEL]: the speedup plot of a
# run_bench.sh results.tsv (GpuJoin against the native plan, against input
# rows, one line per query, log-log; extrapolated points as open circles;
# runs without GpuJoin left out).  run_bench.sh calls it; it also redraws the
# plot of a results file committed under docs/results.  Fails when gnuplot
# is missing or there is nothing to plot.
set -euo pipefail
TSV=$1
PNG=$2
LABEL=${3:-server device setting}
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot is not installed" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

awk -F'\t' '
NR == 1 { next }
{ key = $1 SUBSEP $2; if (!(key in seen)) { seen[key] = 1; order[++k] = key; q[key] = $1; inp[key] = $4 }
  st[key, $5] = $6; ms[key, $5] = $7; if ($5 == "gpujoin") gj[key] = ($8 ~ /GpuJoin/) }
END {
	for (i = 1; i <= k; i++) {
		key = order[i]
		if (!((st[key, "native"] == "ok" || st[key, "native"] == "extrapolated") &&
		      (st[key, "gpujoin"] == "ok" || st[key, "gpujoin"] == "extrapolated") && ms[key, "gpujoin"] > 0 && gj[key])) continue
		if (!(q[key] in blk)) { blk[q[key]] = ++nb; name[nb] = q[key] }
		b = blk[q[key]]
		line[b] = line[b] sprintf("%s %g %d\n", inp[key], ms[key, "native"] / ms[key, "gpujoin"],
			(st[key, "native"] != "ok" || st[key, "gpujoin"] != "ok"))
	}
	for (b = 1; b <= nb; b++) printf "\"%s\"\n%s\n\n", name[b], line[b]
}' "$TSV" >"$WORK/speedup.dat"
NBLOCKS=$(grep -c '^"' "$WORK/speedup.dat" || true)
[ "$NBLOCKS" -gt 0 ] || { echo "nothing to plot in $TSV" >&2; exit 1; }
cat >"$WORK/speedup.gp" <<GP
set terminal pngcairo size 1000,650 noenhanced
set output '$PNG'
set title 'GpuJoin speedup over the native plan ($LABEL)'
set logscale xy
set xlabel 'input rows (all tables)'
set ylabel 'native ms / GpuJoin ms'
set grid
set key outside right
f(x) = 1
plot for [i=0:$((NBLOCKS - 1))] '$WORK/speedup.dat' index i using 1:2 with linespoints lw 2 lc (i % 8 + 1) pt (i + 1) title columnheader(1), \\
     for [i=0:$((NBLOCKS - 1))] '$WORK/speedup.dat' index i using 1:(\$3 == 1 ? \$2 : 1/0) with points pt 6 ps 2 lc rgb 'black' title (i == 0 ? 'extrapolated' : ''), \\
     f(x) with lines dt 2 lc rgb 'gray' title 'break-even'
GP
gnuplot "$WORK/speedup.gp"
