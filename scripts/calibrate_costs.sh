#!/bin/bash
# scripts/calibrate_costs.sh: measure the planner's GpuJoin cost constants on
# this machine and print the SET lines that match them.
#
# gpujoin_costs.c costs a GpuJoin on backend B (cpu or cuda) as
#
#   B_startup_cost + R * B_row_cost + P * B_pair_cost (nestloop)
#   or S * B_sort_cost (sortmerge, hash) + kB * B_transfer_cost (cuda)
#   + E * B_output_cost
#   + the native parts: both input scans, E * (host quals + cpu_tuple_cost / 2)
#
# with R the rows drained from both inputs, E the rows the join returns, P
# the pairs of the nested loop (outer x inner; the calibration's quals have
# one operator), S the steps of sort-merge ((outer + inner) * 8 + outer *
# log2(inner)) and hash (outer * 2 + inner * 8) and kB what travels
# between host and GPU (8 bytes per key value and per match).  This script
# times count(*) over GpuJoins (forced, per algorithm) whose R, P/S and E vary
# independently, removes the native parts (their planner cost converted to ms
# with a native reference, see below) and the transfer time EXPLAIN ANALYZE
# reports, and fits the constants by least squares, per algorithm and over
# all algorithms of a backend (R, P, S and E as four columns).
# transfer_cost is the reported transfer time per kB.
#
# Cost units: the planner's unit is seq_page_cost = 1, and PostgreSQL's own
# plans buy different times with it.  The native parts of a GpuJoin (its
# input scans) are converted to ms at the rate of PostgreSQL's count(*) over a
# seq scan of REF_ROWS rows (pages + rows * (cpu_tuple_cost +
# cpu_operator_cost)).  GpuJoin's own times are converted back to units at
# the rate of the plans it competes with: with REF_PLAN=join (the default)
# PostgreSQL's hash join of REF_JOIN_ROWS rows (default 4M) with a tenth as
# many random keys,
# whose hash table is bigger than the caches as in the joins GpuJoin is for
# (issue 35: on the H200 such a join ran at 0.008 ms a unit where the seq
# scan ran at 0.0043); REF_PLAN=seqscan converts both ways at the seq scan's
# rate, as before.  A small hash join (1000 keys) and a nested loop are
# timed the same way to show how far PostgreSQL's own units disagree with
# each other here.  A hash join whose table stays in a core's cache runs at
# about the seq scan's rate, so against one the planner multiplies the cpu
# constants by the join reference's rate over the seq scan's
# (gpujoin.cpu_cached_join_factor, where the table fits in
# gpujoin.cpu_hash_cache_kb, this machine's L2 cache): both are printed with
# the settings (with REF_PLAN=seqscan the factor is 1).
#
# Environment: RUNS (median of, default 3), DEVICES (default "cpu cuda";
# cuda is skipped where a GpuJoin on it cannot run), SCALE (multiplies the
# row counts, default 1), REF_ROWS (default 1000000), REF_PLAN (join or
# seqscan, see above), REF_JOIN_ROWS (default 4000000), OUTDIR (default
# bench_out/calibrate-<date>).  Like test/bench/run_bench.sh it uses the server
# of PGHOST/PGPORT if set, else a throwaway cluster (GPUJOIN_CLUSTER_CONF).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
DEVICES=${DEVICES:-cpu cuda}
SCALE=${SCALE:-1}
REF_ROWS=${REF_ROWS:-1000000}
REF_PLAN=${REF_PLAN:-join}
REF_JOIN_ROWS=${REF_JOIN_ROWS:-4000000}
OUTDIR=${OUTDIR:-bench_out/calibrate-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
LOG=$OUTDIR/calibrate.log
: >"$LOG"

. test/lib/bench_server.sh
bench_server "${GPUJOIN_CLUSTER_CONF:-}"
psql_run -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS gpujoin" >/dev/null
PRELUDE="SET search_path = gpujoin_calib, public;"
psql_run -At -c "SHOW gpujoin.enabled" >/dev/null 2>&1 || PRELUDE="LOAD 'gpujoin';
$PRELUDE"
FORCE="SET gpujoin.enabled = on; SET gpujoin.enable_aggregate = off; SET enable_nestloop = off; SET enable_hashjoin = off; SET enable_mergejoin = off;"

sc() { echo $(($1 * SCALE)); }

# The grid: for each algorithm, outer sizes x inner sizes x matching inner
# rows.  Inner rows that match (a = 2e9, k in 0..999) and rows that cannot
# (a = -1, k < 0) set E without changing R or P: for the theta qual
# o.a < i.a, E = outer x matching rows; for o.k = i.k (outer k uniform in
# 0..999), E ~ outer x matching rows / 1000.
NL_OUTER="$(sc 20000) $(sc 100000)"
NL_INNER="200 2000"
NL_MATCH="0 20"
SM_OUTER="$(sc 50000) $(sc 200000)"
SM_INNER="1000 $(sc 100000)"
SM_MATCH="0 5 20"
HJ_OUTER="$(sc 50000) $(sc 200000)"
HJ_INNER="$(sc 10000) $(sc 100000)"
HJ_MATCH="0 100 1000"

outer_sizes=$(printf '%s\n' $NL_OUTER $SM_OUTER $HJ_OUTER | sort -nu)
inner_specs=$(
	for i in $NL_INNER; do for m in $NL_MATCH; do echo "${i}_$m"; done; done
	for i in $SM_INNER; do for m in $SM_MATCH; do echo "${i}_$m"; done; done
	for i in $HJ_INNER; do for m in $HJ_MATCH; do echo "${i}_$m"; done; done
)
inner_specs=$(echo "$inner_specs" | sort -u)

echo "generating data in schema gpujoin_calib"
{
	echo "SET client_min_messages = warning;"
	echo "DROP SCHEMA IF EXISTS gpujoin_calib CASCADE; CREATE SCHEMA gpujoin_calib; SET search_path = gpujoin_calib;"
	echo "SELECT setseed(0.17);"
	for o in $outer_sizes; do
		echo "CREATE TABLE o_$o AS SELECT g AS id, (random() * 1000000)::int AS a, (random() * 999)::int AS k FROM generate_series(1, $o) g;"
	done
	for spec in $inner_specs; do
		i=${spec%_*} m=${spec#*_}
		echo "CREATE TABLE i_$spec AS SELECT g AS id, CASE WHEN g <= $m THEN 2000000000 ELSE -1 END AS a,"
		echo "  CASE WHEN g <= $m THEN g % 1000 ELSE -g END AS k FROM generate_series(1, $i) g;"
	done
	echo "CREATE TABLE ref AS SELECT g AS id, g % 1000 AS k FROM generate_series(1, $REF_ROWS) g;"
	echo "CREATE TABLE ref_dim AS SELECT g AS k, g::float8 AS w FROM generate_series(0, 999) g;"
	echo "CREATE TABLE ref_join AS SELECT g AS id, (random() * ($REF_JOIN_ROWS / 10 - 1))::int AS k FROM generate_series(1, $REF_JOIN_ROWS) g;"
	echo "CREATE TABLE ref_join_dim AS SELECT g AS k, g::float8 AS w FROM generate_series(0, $REF_JOIN_ROWS / 10 - 1) g;"
	echo "CREATE TABLE ref_nl AS SELECT g AS id, (random() * 1000000)::int AS a FROM generate_series(1, 2000) g;"
	echo "CREATE TABLE o_10 AS SELECT g AS id, g AS a, g % 3 AS k FROM generate_series(1, 10) g;"
	echo "CREATE TABLE i_10_10 AS SELECT g AS id, g AS a, g % 3 AS k FROM generate_series(1, 10) g;"
	echo "VACUUM ANALYZE;"
} | psql_run -v ON_ERROR_STOP=1 >>"$LOG" 2>&1

# time_sql SETTINGS SQL: one session, a warm-up EXPLAIN (ANALYZE, TIMING OFF)
# whose text goes to $EXPLAIN_OUT, then RUNS runs; prints the median ms.
EXPLAIN_OUT=$OUTDIR/.explain
time_sql() {
	local out
	out=$({
		printf '%s\n%s\n' "$PRELUDE" "$1"
		echo "EXPLAIN (ANALYZE, TIMING OFF) $2;"
		echo '\echo @@runs'
		echo '\timing on'
		seq "$RUNS" | sed "s|.*|$2;|"
	} | psql_run -v ON_ERROR_STOP=1 2>&1) || {
		echo "$out" >>"$LOG"
		echo "failed: $2 (see $LOG)" >&2
		return 1
	}
	echo "$out" >>"$LOG"
	echo "$out" | sed '/^@@runs/,$d' >"$EXPLAIN_OUT"
	echo "$out" | sed -n '/^@@runs/,$p' | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -g |
		awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
# the total cost of a statement's plan
plan_cost() {
	printf '%s\n%s\nEXPLAIN %s;\n' "$PRELUDE" "${2:-}" "$1" | psql_run -At |
		sed -n '1s/.*cost=[0-9.]*\.\.\([0-9.]*\) .*/\1/p'
}
explain_field() { sed -n "s/^ *$1: *//p" "$EXPLAIN_OUT" | head -1; }

CPU_TUPLE_COST=$(psql_run -At -c "SHOW cpu_tuple_cost")
CPU_OPERATOR_COST=$(psql_run -At -c "SHOW cpu_operator_cost")

# --- the native reference: ms per cost unit
echo "timing the native references"
TRIVIAL_MS=$(time_sql "" "SELECT 1")
REF_Q="SELECT count(*) FROM ref"
REF_MS=$(time_sql "SET max_parallel_workers_per_gather = 0;" "$REF_Q")
REF_COST=$(plan_cost "$REF_Q" "SET max_parallel_workers_per_gather = 0;")
MS_PER_UNIT=$(awk -v t="$REF_MS" -v z="$TRIVIAL_MS" -v c="$REF_COST" 'BEGIN { printf "%.6g", (t - z) / c }')
REFS="| seq scan + count(*), $REF_ROWS rows (the reference) | $REF_MS | $REF_COST | $MS_PER_UNIT |"
JOIN_Q="SELECT sum(d.w) FROM ref_join r JOIN ref_join_dim d ON r.k = d.k"
JOIN_SET="SET max_parallel_workers_per_gather = 0; SET gpujoin.enabled = off;"
JOIN_MS=$(time_sql "$JOIN_SET" "$JOIN_Q")
JOIN_COST=$(plan_cost "$JOIN_Q" "$JOIN_SET")
JOIN_MS_PER_UNIT=$(awk -v t="$JOIN_MS" -v z="$TRIVIAL_MS" -v c="$JOIN_COST" 'BEGIN { printf "%.6g", (t - z) / c }')
REFS="$REFS
| hash join $REF_JOIN_ROWS x $((REF_JOIN_ROWS / 10)) random keys, sum (the join reference) | $JOIN_MS | $JOIN_COST | $JOIN_MS_PER_UNIT |"
# the rate GpuJoin's own times are converted to units with
FIT_MS_PER_UNIT=$MS_PER_UNIT
[ "$REF_PLAN" = join ] && FIT_MS_PER_UNIT=$JOIN_MS_PER_UNIT
for spec in "hash join $REF_ROWS x 1000, sum|SELECT sum(d.w) FROM ref r JOIN ref_dim d ON r.k = d.k" \
	"nested loop 2000 x 2000, r.a < s.a, count(*)|SELECT count(*) FROM ref_nl r JOIN ref_nl s ON r.a < s.a"; do
	name=${spec%%|*} q=${spec#*|}
	s="SET max_parallel_workers_per_gather = 0; SET gpujoin.enabled = off;"
	t=$(time_sql "$s" "$q")
	c=$(plan_cost "$q" "$s")
	REFS="$REFS
| $name | $t | $c | $(awk -v t="$t" -v z="$TRIVIAL_MS" -v c="$c" 'BEGIN { printf "%.6g", (t - z) / c }') |"
done

# --- the GpuJoin experiments
TSV=$OUTDIR/calibrate.tsv
printf 'device\talgorithm\tbackend\touter\tinner\tR\tP\tE\ttotal_ms\tnative_ms\tgpujoin_ms\tdrain_ms\tbackend_ms\ttransfer_ms\n' >"$TSV"
STARTUP_TSV=$OUTDIR/startup.tsv
head -1 "$TSV" >"$STARTUP_TSV"
run_point() {
	local dev=$1 algo=$2 o=$3 spec=$4 qual=$5 tsv=${6:-$TSV} q settings total e backend drain bms xfer r p nat
	q="SELECT count(*) FROM o_$o o JOIN i_$spec i ON $qual"
	settings="$FORCE SET gpujoin.algorithm = $algo; SET gpujoin.device = $dev;"
	total=$(time_sql "$settings" "$q") || return 0
	backend=$(explain_field Backend)
	e=$(explain_field "Device Matches")
	drain=$(explain_field "Drain Time" | sed 's/ ms//')
	bms=$(explain_field "Backend Time" | sed 's/ ms//')
	xfer=$(explain_field "Transfer Time" | sed 's/ ms//')
	grep -q "Algorithm: $algo" "$EXPLAIN_OUT" || {
		echo "  $algo not run for $q ($(explain_field Algorithm)): left out"
		return 0
	}
	local i=${spec%_*}
	r=$((o + i))
	p=$(awk -v a="$algo" -v o="$o" -v i="$i" -v e="$e" 'BEGIN {
		if (a == "nestloop") printf "%.0f", o * i
		else if (a == "hash") printf "%.0f", o * 2 + i * 8
		else printf "%.0f", (o + i) * 8 + o * log(i < 2 ? 2 : i) / log(2) }')
	# the native parts in ms: both seq scans, and per returned row the
	# planner's cpu_tuple_cost / 2 and count(*)'s cpu_operator_cost
	nat=$(awk -v so="$(plan_cost "SELECT * FROM o_$o")" -v si="$(plan_cost "SELECT * FROM i_$spec")" \
		-v e="$e" -v ct="$CPU_TUPLE_COST" -v co="$CPU_OPERATOR_COST" -v u="$MS_PER_UNIT" \
		'BEGIN { printf "%.3f", (so + si + e * (ct / 2 + co)) * u }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$dev" "$algo" "$backend" "$o" "$i" "$r" "$p" "$e" \
		"$total" "$nat" "$(awk -v t="$total" -v n="$nat" -v z="$TRIVIAL_MS" 'BEGIN { printf "%.3f", t - n - z }')" \
		"$drain" "$bms" "${xfer:-0}" >>"$tsv"
	printf '  %-5s %-9s %-28s O=%-7s I=%-7s E=%-9s %10s ms\n' "$dev" "$algo" "$backend" "$o" "$i" "$e" "$total"
}

for dev in $DEVICES; do
	if [ "$dev" != cpu ]; then
		b=$(printf '%s\n%s\nSET gpujoin.device = %s;\nEXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM ref_nl r JOIN ref_nl s ON r.a < s.a;\n' \
			"$PRELUDE" "$FORCE SET gpujoin.algorithm = nestloop;" "$dev" | psql_run 2>&1 | sed -n 's/^ *Backend: //p')
		case "$b" in
		"$dev"*) ;;
		*)
			echo "device $dev: no GpuJoin ran on it (${b:-error}), skipped"
			continue
			;;
		esac
	fi
	echo "device $dev"
	# startup: 10 x 10 rows, everything else negligible
	run_point "$dev" nestloop 10 10_10 "o.a < i.a" "$STARTUP_TSV"
	run_point "$dev" sortmerge 10 10_10 "o.a < i.a" "$STARTUP_TSV"
	run_point "$dev" hash 10 10_10 "o.k = i.k" "$STARTUP_TSV"
	for o in $NL_OUTER; do for i in $NL_INNER; do for m in $NL_MATCH; do
		run_point "$dev" nestloop "$o" "${i}_$m" "o.a < i.a"
	done; done; done
	for o in $SM_OUTER; do for i in $SM_INNER; do for m in $SM_MATCH; do
		run_point "$dev" sortmerge "$o" "${i}_$m" "o.a < i.a"
	done; done; done
	for o in $HJ_OUTER; do for i in $HJ_INNER; do for m in $HJ_MATCH; do
		run_point "$dev" hash "$o" "${i}_$m" "o.k = i.k"
	done; done; done
done

# --- the fit.  startup_cost is what a 10 x 10 join takes (per device and
# algorithm); the other constants are fitted to the rest by least squares,
# (GpuJoin ms - transfer ms - startup) = r R + p P + s S + e E, per (device,
# algorithm) and per device over all algorithms (P is 0 for sortmerge and
# hash, S for nestloop).  A coefficient that comes out negative (its term
# lost in the noise) is set to 0 and the others refitted.  Columns are scaled
# to their largest value before the normal equations are solved (Gaussian
# elimination with partial pivoting).  transfer_cost = all reported transfer
# time / all kB transferred (8 bytes per drained key value and per match).
FIT=$OUTDIR/calibrate.fit
awk -F'\t' -v u="$FIT_MS_PER_UNIT" '
function abs(v) { return v < 0 ? -v : v }
# least squares over the features i with on[i]; result in c[]
function solve(g,    i, j, k, m, piv, t, f, idx) {
	m = 0
	for (i = 1; i <= NX; i++) { c[i] = 0; if (on[i]) idx[++m] = i }
	for (i = 1; i <= m; i++) {
		b[i] = XY[g, idx[i]] / sc[g, idx[i]]
		for (j = 1; j <= m; j++) A[i, j] = XX[g, idx[i], idx[j]] / (sc[g, idx[i]] * sc[g, idx[j]])
	}
	for (k = 1; k <= m; k++) {
		piv = k
		for (i = k + 1; i <= m; i++) if (abs(A[i, k]) > abs(A[piv, k])) piv = i
		for (j = 1; j <= m; j++) { t = A[k, j]; A[k, j] = A[piv, j]; A[piv, j] = t }
		t = b[k]; b[k] = b[piv]; b[piv] = t
		if (abs(A[k, k]) < 1e-12) return 0
		for (i = k + 1; i <= m; i++) {
			f = A[i, k] / A[k, k]
			for (j = k; j <= m; j++) A[i, j] -= f * A[k, j]
			b[i] -= f * b[k]
		}
	}
	for (i = m; i >= 1; i--) {
		t = b[i]
		for (j = i + 1; j <= m; j++) t -= A[i, j] * z[j]
		z[i] = t / A[i, i]
	}
	for (i = 1; i <= m; i++) c[idx[i]] = z[i] / sc[g, idx[i]]
	return 1
}
function add(g, y,    i, j) {
	if (!(g in cnt)) order[++ng] = g
	cnt[g]++
	Y[g, cnt[g]] = y
	for (i = 1; i <= NX; i++) {
		XS[g, cnt[g], i] = x[i]
		if (x[i] > sc[g, i]) sc[g, i] = x[i]
		XY[g, i] += x[i] * y
		for (j = 1; j <= NX; j++) XX[g, i, j] += x[i] * x[j]
	}
}
BEGIN { NX = 4 }
FNR == 1 { next }
FILENAME == ARGV[1] {
	st[$1 "\t" $2] = $11; sst[$1] += $11; nst[$1]++
	next
}
{
	dev = $1
	if (!((dev "\t" $2) in st)) next
	x[1] = $6; x[2] = ($2 == "nestloop" ? $7 : 0); x[3] = ($2 == "nestloop" ? 0 : $7); x[4] = $8
	y = $11 - $14
	add(dev "\t" $2, y - st[dev "\t" $2])
	add(dev "\tall", y - sst[dev] / nst[dev])
	stg[dev "\tall"] = sst[dev] / nst[dev]
	xms[dev] += $14; xkb[dev] += ($6 + $8) * 8 / 1024
}
END {
	for (k in st) stg[k] = st[k]
	for (k = 1; k <= ng; k++) {
		g = order[k]
		split(g, gd, "\t")
		xc = (xkb[gd[1]] > 0 ? xms[gd[1]] / xkb[gd[1]] / u : 0)
		if (cnt[g] < 4) { printf "%s\t%d\t-\t-\t-\t-\t-\t-\t-\ttoo few points\n", g, cnt[g]; continue }
		for (i = 1; i <= NX; i++) { on[i] = (sc[g, i] > 0); if (!on[i]) sc[g, i] = 1 }
		note = ""
		while (1) {
			if (!solve(g)) { note = "singular"; break }
			worst = 0
			for (i = 1; i <= NX; i++) if (on[i] && c[i] < 0 && (worst == 0 || c[i] < c[worst])) worst = i
			if (worst == 0) break
			on[worst] = 0
			note = note (note == "" ? "" : ", ") substr("RPSE", worst, 1) " term negative, set to 0"
		}
		if (note == "singular") { printf "%s\t%d\t-\t-\t-\t-\t-\t-\t-\tsingular\n", g, cnt[g]; continue }
		m = 0; for (i = 1; i <= cnt[g]; i++) m += Y[g, i]; m /= cnt[g]
		ss = 0; sr = 0
		for (i = 1; i <= cnt[g]; i++) {
			pr = 0; for (j = 1; j <= NX; j++) pr += c[j] * XS[g, i, j]
			ss += (Y[g, i] - m) ^ 2; sr += (Y[g, i] - pr) ^ 2
		}
		# ms -> cost units; "-" where the group has no such term
		printf "%s\t%d\t%.4g\t%.4g\t%s\t%s\t%.4g\t%.4g\t%.3f\t%s\n", g, cnt[g], (stg[g] > 0 ? stg[g] : 0) / u,
			c[1] / u, (sc[g, 2] > 1 || c[2] != 0 ? sprintf("%.4g", c[2] / u) : "-"),
			(sc[g, 3] > 1 || c[3] != 0 ? sprintf("%.4g", c[3] / u) : "-"), xc, c[4] / u,
			(ss > 0 ? 1 - sr / ss : 1), note
	}
}' "$STARTUP_TSV" "$TSV" >"$FIT"

{
	echo "# GpuJoin cost calibration, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "- machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores"
	echo "- server: $(psql_run -At -c 'SELECT version()')"
	echo "- median of $RUNS runs; a trivial statement takes $TRIVIAL_MS ms (subtracted)"
	echo
	echo "## Native references (max_parallel_workers_per_gather = 0)"
	echo
	echo "| plan | ms | planner cost | ms per cost unit |"
	echo "| --- | --: | --: | --: |"
	echo "$REFS"
	echo
	echo "## Measurements"
	echo
	echo "R = rows drained, P = pairs as gpujoin_path.c counts them, E = rows returned; native ms ="
	echo "the scans and per-row native costs converted with $MS_PER_UNIT ms per unit; GpuJoin ms ="
	echo "total - native - trivial statement, converted to units with $FIT_MS_PER_UNIT ms per unit"
	echo "(REF_PLAN=$REF_PLAN)."
	echo
	echo "| device | algorithm | backend | outer | inner | R | P or S | E | total ms | native ms | GpuJoin ms | drain ms | backend ms | transfer ms |"
	echo "| --- | --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |"
	awk -F'\t' 'NR > 1 { s = "|"; for (i = 1; i <= NF; i++) s = s " " $i " |"; print s }' "$TSV"
	echo
	echo "Startup (10 x 10 rows):"
	echo
	echo "| device | algorithm | backend | total ms | native ms | GpuJoin ms |"
	echo "| --- | --- | --- | --: | --: | --: |"
	awk -F'\t' 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $9, $10, $11 }' "$STARTUP_TSV"
	echo
	echo "## Fit (cost units; GpuJoin ms - transfer ms = startup + R row + P pair + S sort + E output; R^2 of the fitted terms)"
	echo
	echo "| device | algorithm | points | startup_cost | row_cost | pair_cost | sort_cost | transfer_cost | output_cost | R^2 | note |"
	echo "| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --- |"
	awk -F'\t' '{ s = "|"; for (i = 1; i <= NF; i++) s = s " " $i " |"; print s }' "$FIT"
	echo
	echo "A term whose fitted value is negative (lost in the noise at these sizes) is set to 0 and"
	echo "the others are refitted without it."
	echo
	echo "## Suggested settings"
	echo
	echo "startup, row and output costs from the fit over all algorithms of a backend; pair_cost"
	echo "from its nestloop fit and sort_cost from its sortmerge fit (hash when that one is 0),"
	echo "since sorting a side costs in proportion to its rows and the fit over everything cannot"
	echo "tell row_cost and sort_cost apart; transfer_cost from the reported transfer time."
	echo
	awk -F'\t' '
	{ dev[$1] = 1; for (i = 4; i <= 9; i++) v[$1, $2, i] = $i }
	function pick(d, a, i) { return (((d, a, i) in v) && v[d, a, i] != "-" && v[d, a, i] > 0) ? v[d, a, i] : "" }
	END {
		for (d in dev) {
			if (pick(d, "all", 5) == "" && pick(d, "all", 4) == "") continue
			pair = pick(d, "nestloop", 6); if (pair == "") pair = pick(d, "all", 6)
			sort = pick(d, "sortmerge", 7); if (sort == "") sort = pick(d, "hash", 7)
			if (sort == "") sort = pick(d, "all", 7)
			printf "```\n"
			printf "SET gpujoin.%s_startup_cost = %.4g;\n", d, v[d, "all", 4]
			printf "SET gpujoin.%s_row_cost = %.4g;\n", d, v[d, "all", 5]
			printf "SET gpujoin.%s_pair_cost = %.4g;\n", d, pair
			printf "SET gpujoin.%s_sort_cost = %.4g;\n", d, sort
			if (d == "cuda") printf "SET gpujoin.cuda_transfer_cost = %.4g;\n", v[d, "all", 8]
			printf "SET gpujoin.%s_output_cost = %.4g;\n", d, v[d, "all", 9]
			printf "```\n"
		}
	}' "$FIT"
	# the cached-table factor and cache (gpujoin_costs_against_native): cpu
	# only, the cuda set keeps 1 until measured against its own constants
	if awk -F'\t' '$1 == "cpu" && $2 == "all" { found = 1 } END { exit !found }' "$FIT"; then
		echo
		echo "Against a hash join whose table fits in a core's L2 cache (it runs at about the"
		echo "seq scan's rate): the join reference's ms per unit over the seq scan's, and the cache."
		echo
		echo '```'
		awk -v j="$JOIN_MS_PER_UNIT" -v s="$MS_PER_UNIT" -v p="$REF_PLAN" \
			'BEGIN { printf "SET gpujoin.cpu_cached_join_factor = %.2g;\n", (p == "join" && s > 0 ? j / s : 1) }'
		for c in /sys/devices/system/cpu/cpu0/cache/index*; do
			[ "$(cat "$c/level" 2>/dev/null)" = 2 ] || continue
			awk '/^[0-9]+K$/ { print "SET gpujoin.cpu_hash_cache_kb = " $0 + 0 ";" }
				/^[0-9]+M$/ { print "SET gpujoin.cpu_hash_cache_kb = " ($0 + 0) * 1024 ";" }' "$c/size"
			break
		done
		echo '```'
	fi
} >"$OUTDIR/calibrate.md"
rm -f "$EXPLAIN_OUT"
psql_run -q -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS gpujoin_calib CASCADE" >/dev/null
echo
cat "$OUTDIR/calibrate.md"
