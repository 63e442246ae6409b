#!/usr/bin/perl
#
# test/fuzz/fuzz.pl: randomized differential test of gpujoin.
#
# Each round makes two random tables r and s (in one round of four r is
# partitioned in three by id, an Append under the join; every column type the device
# knows, numeric, interval and timetz among them, plus text; NULL rates,
# duplicates, hot keys, skew, NaN, +-Infinity, -0.0, the extremes of each
# type, intervals and numerics no int64 holds; 0 to FUZZ_MAX_ROWS rows) and
# runs FUZZ_QUERIES_PER_ROUND random queries on them: joins of every type
# (INNER, LEFT, RIGHT, FULL, EXISTS, NOT EXISTS, three-way, in a rescanned
# subquery, with LIMIT, with aggregates: of either side, of arguments over
# both sides (r.x * s.y, s.d - r.d), grouped by a column or by an expression
# of one side (r.i4 % 7, s.d + 1) or of each side) whose conditions mix what the device
# evaluates (=, <, BETWEEN, bands, abs(), arithmetic that can overflow,
# AND/OR/NOT, IS NULL) with what it does not (text, numeric arithmetic,
# functions, subqueries).  Each query runs once natively (gpujoin.enabled = off) and
# twice with GpuJoin made to win (native join methods off, or GpuJoin's
# costs zero), with a random gpujoin.algorithm and a large or tiny
# gpujoin.device_memory.  The results are compared as multisets (see
# fuzz_run in fuzz_setup.sql); an error must be the native plan's error.
#
# PostgreSQL's own plans raise different errors for one query (a hash join
# never evaluates a qual on pairs whose keys differ, a nested loop does), so
# when the outcomes differ the query also runs natively with only nested
# loop, only hash join and only merge join allowed; GpuJoin's outcome must be
# one of them.  GpuJoin returning rows where every native plan raises an
# error is counted and reported as "tolerated", not failed, unless
# FUZZ_STRICT_ERRORS=1: a sortmerge or hash GpuJoin evaluates quals only on
# the pairs its keys admit (README), GpuJoin may join in another order, and
# a host qual is evaluated only on pairs the device quals pass
# (test/fuzz/found/host_qual_error_skipped.sql).  Both raising errors,
# different ones, also pass (the first pair to fail depends on the order of
# the pairs) unless FUZZ_STRICT_ERRORS=1.  Different rows, an error where
# PostgreSQL returns rows, and a crash always fail.
#
# A FULL JOIN with no equality in its condition (shape full_theta) has no
# native plan: PostgreSQL raises "FULL JOIN is only supported with
# merge-joinable or hash-joinable join conditions".  Its native settings run
# the same rows written out by hand instead (the LEFT JOIN, plus each s row no
# r row matches with r's columns NULL), which GpuJoin must return where it
# offers the join; where it does not (nothing device-evaluable links the
# sides), PostgreSQL's error is its outcome, counted as "FULL joins declined".
#
# Every failure (different rows, different error, a crash) is printed as a
# self-contained SQL script (tables, query, settings) and written to
# FUZZ_OUT; the fuzzer then shrinks the tables and the condition while the
# failure persists and writes the smaller script too.
#
# Connection: the usual PG* variables (PGHOST, PGPORT, PGUSER); PSQL names
# psql.  Environment: FUZZ_SEED, FUZZ_CASES, FUZZ_MAX_ROWS, FUZZ_MAX_PAIRS,
# FUZZ_QUERIES_PER_ROUND, FUZZ_DB, FUZZ_OUT, FUZZ_TIMEOUT,
# FUZZ_STRICT_ERRORS, FUZZ_VERBOSE, FUZZ_MAX_HOST_MEMORY (gpujoin.max_host_memory
# of every round, e.g. 64kB: the inputs spill).  The last line is
# "fuzz: N passed, N failed" (one test per query).
#
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Path qw(make_path);
use File::Temp qw(tempdir);

my $dir = dirname(__FILE__);
my $seed = $ENV{FUZZ_SEED} // 20261123;
my $n_cases = $ENV{FUZZ_CASES} // 1000;
my $max_rows = $ENV{FUZZ_MAX_ROWS} // 2000;
my $max_pairs = $ENV{FUZZ_MAX_PAIRS} // 250000;
my $per_round = $ENV{FUZZ_QUERIES_PER_ROUND} // 10;
my $db = $ENV{FUZZ_DB} // 'gpujoin_fuzz';
my $out_dir = $ENV{FUZZ_OUT} // "$dir/out";
my $timeout = $ENV{FUZZ_TIMEOUT} // '60s';
my $strict_errors = $ENV{FUZZ_STRICT_ERRORS} // 0;
my $verbose = $ENV{FUZZ_VERBOSE} // 0;
my $max_host_memory = $ENV{FUZZ_MAX_HOST_MEMORY} // '';
my $psql = $ENV{PSQL} // 'psql';
my $tmp = tempdir(CLEANUP => !$ENV{FUZZ_KEEP_TMP});

srand($seed);

# ---------------------------------------------------------------- random

sub rnd { int(rand($_[0])) }
sub pick { $_[ rnd(scalar @_) ] }
sub chance { rand() < $_[0] }

# wpick([weight, value], ...)
sub wpick
{
	my $total = 0;
	$total += $_->[0] for @_;
	my $x = rand($total);
	for (@_)
	{
		return $_->[1] if ($x -= $_->[0]) < 0;
	}
	return $_[-1][1];
}

# ---------------------------------------------------------------- tables

# column name => [type, family]
my %COL = (
	i2 => [ 'int2', 'INT' ],
	i4 => [ 'int4', 'INT' ],
	j4 => [ 'int4', 'INT' ],
	i8 => [ 'int8', 'INT' ],
	f4 => [ 'float4', 'FLT' ],
	f8 => [ 'float8', 'FLT' ],
	n => [ 'numeric', 'NUM' ],
	d => [ 'date', 'DATE' ],
	ts => [ 'timestamp', 'TS' ],
	iv => [ 'interval', 'IV' ],
	tz => [ 'timetz', 'TTZ' ],
	t => [ 'text', 'TEXT' ],);
my @COLS = qw(i2 i4 j4 i8 f4 f8 n d ts iv tz t);
my %FAMILY_COLS;
push @{ $FAMILY_COLS{ $COL{$_}[1] } }, $_ for @COLS;

my %SPECIALS = (
	int2 => [ map { "'$_'" } qw(32767 -32768 0 -1 1) ],
	int4 => [ map { "'$_'" } qw(2147483647 -2147483648 0 -1) ],
	int8 => [ map { "'$_'" } qw(9223372036854775807 -9223372036854775808 0 -1) ],
	float4 => [ "'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "'0'", "'3e38'", "'-3e38'", "'1e-38'" ],
	float8 => [ "'NaN'", "'Infinity'", "'-Infinity'", "'-0'", "'0'", "'1e308'", "'-1e308'", "'1e-308'" ],
	numeric => [ "'NaN'", "'Infinity'", "'-Infinity'", "'0'", "'1e20'", "'-0.000001'" ],
	date => [ "'infinity'", "'-infinity'", "'4713-01-01 BC'", "'5874897-12-31'" ],
	timestamp => [ "'infinity'", "'-infinity'", "'4713-01-01 00:00 BC'", "'294276-12-31 23:59:59'" ],
	interval => [ "'178000000 years'", "'-178000000 years'", "'0'", "'1 mon'", "'30 days'",
		"'-1 day +24 hours'" ],
	timetz => [ "'00:00+15:59'", "'24:00-15:59'", "'10:00+02'", "'08:00+00'", "'09:00+01'" ],
	text => [ "''", "' '", "'Z'", "'k-1'" ],);

# fz_h(g, salt): a deterministic pseudo-random non-negative int8 per row, so
# that a table is a compact, reproducible CREATE TABLE ... generate_series.
my $HASH_FUNC =
  "CREATE OR REPLACE FUNCTION fz_h(g int8, salt int8) RETURNS int8 IMMUTABLE LANGUAGE sql\n"
  . "    AS 'SELECT abs(hashint8(g * 1000 + salt)::int8)';";

# The value domain of one round, shared by r and s so that keys meet.
sub new_domain
{
	my $dom = pick(1, 3, 10, 10, 30, 50, 200, 1000, 100000);
	return {
		size => $dom,
		lo => pick(0, 0, -int($dom / 2), 1000),
		m4 => pick(1, 1, 1, 1000),
		m8 => pick(1, 1, 1000000000),
		fdiv => pick(1, 2, 3, 10),
		unit => pick("'1 hour'", "'1 day'", "'1 minute'"),
		hot => { map { $_ => rnd($dom) } @COLS },
	};
}

# SQL mapping the int8 expression $v to a value of column $c
sub map_value
{
	my ($dom, $c, $v) = @_;
	my $type = $COL{$c}[0];
	my $x = "($dom->{lo}::int8 + $v)";
	return "($x % 32000)::int2" if $type eq 'int2';
	return "($x * $dom->{m4})::int4" if $type eq 'int4';
	return "($x * $dom->{m8})::int8" if $type eq 'int8';
	return "(${x}::float8 / $dom->{fdiv})::float4" if $type eq 'float4';
	return "${x}::float8 / $dom->{fdiv}" if $type eq 'float8';
	return "${x}::numeric / $dom->{fdiv}" if $type eq 'numeric';
	return "date '2000-01-01' + ${x}::int4" if $type eq 'date';
	return "timestamp '2000-01-01' + $x * interval $dom->{unit}" if $type eq 'timestamp';
	# months and days: 2k and 2k + 1 are k months and 30k days, equal spans
	return "CASE WHEN $x % 2 = 0 THEN ($x / 2) * interval '1 mon' ELSE ($x / 2) * interval '30 days' END"
	  . " + ($x % 5) * interval $dom->{unit}" if $type eq 'interval';
	# one GMT time in several zones
	return "((time '00:00' + ($x % 1440) * interval '1 minute')::text || "
	  . "(ARRAY['+00', '+01', '-01'])[1 + abs($x) % 3])::timetz" if $type eq 'timetz';
	return "'k' || $x" if $type eq 'text';
	die "no type $type";
}

sub new_table
{
	my ($name, $rows, $dom, $parts) = @_;
	my $salt0 = rnd(900) * 10;
	my @cols;
	my $k = 0;
	for my $c (@COLS)
	{
		my $type = $COL{$c}[0];
		my $salt = $salt0 + $k++;
		my $h = "fz_h(g, $salt)";
		my $null_pct = wpick([ 5, 0 ], [ 3, 5 ], [ 2, 30 ], [ 0.3, 100 ]);
		my $hot_pct = wpick([ 6, 0 ], [ 2, 20 ], [ 1, 70 ]);
		my $spec_pct = wpick([ 4, 0 ], [ 3, 3 ], [ 1, 20 ]);
		my $skew = chance(0.25);
		my $v = $skew
		  ? "(fz_h(g, $salt + 500) % $dom->{size}) * (fz_h(g, $salt + 500) % $dom->{size}) / $dom->{size}"
		  : "fz_h(g, $salt + 500) % $dom->{size}";
		my @specials = @{ $SPECIALS{$type} };
		my $expr = "CASE";
		$expr .= " WHEN $h % 100 < $null_pct THEN NULL" if $null_pct;
		$expr .= " WHEN $h / 100 % 100 < $hot_pct THEN " . map_value($dom, $c, $dom->{hot}{$c}) if $hot_pct;
		$expr .=
		    " WHEN $h / 10000 % 100 < $spec_pct THEN (ARRAY["
		  . join(', ', map { "${_}::$type" } @specials)
		  . "])[1 + $h / 1000000 % "
		  . scalar(@specials) . "]"
		  if $spec_pct;
		$expr .= " ELSE " . map_value($dom, $c, $v) . " END";
		$expr = map_value($dom, $c, $v) if $expr eq "CASE ELSE " . map_value($dom, $c, $v) . " END";
		push @cols, "       ($expr)::$type AS $c";
	}
	my $select = "SELECT g::int4 AS id,\n" . join(",\n", @cols) . "\nFROM generate_series(1, $rows) g;";
	return "CREATE TABLE $name AS\n$select" unless $parts;
	# a partitioned table: three partitions by id, the last one the default
	my $b1 = int($rows / 3) + 1;
	my $b2 = 2 * $b1;
	return "CREATE TABLE ${name}_rows AS\n$select\n"
	  . "CREATE TABLE $name (LIKE ${name}_rows) PARTITION BY RANGE (id);\n"
	  . "CREATE TABLE ${name}_p1 PARTITION OF $name FOR VALUES FROM (MINVALUE) TO ($b1);\n"
	  . "CREATE TABLE ${name}_p2 PARTITION OF $name FOR VALUES FROM ($b1) TO ($b2);\n"
	  . "CREATE TABLE ${name}_p3 PARTITION OF $name DEFAULT;\n"
	  . "INSERT INTO $name SELECT * FROM ${name}_rows;\nDROP TABLE ${name}_rows;";
}

sub pick_rows
{
	return wpick([ 2, 0 ], [ 2, 1 ], [ 4, 2 + rnd(9) ], [ 6, 10 + rnd(90) ],
		[ 6, 100 + rnd($max_rows > 100 ? $max_rows - 99 : 1) ]);
}

# ---------------------------------------------------------------- conditions

my $dom;    # the current round's domain

# a constant of a family, sometimes one that makes arithmetic overflow
sub const_of
{
	my ($fam) = @_;
	my $small = pick(0, 1, 2, 5, 10, int($dom->{size} / 10) + 1);
	return pick($small, $small, $small, 100, 2147483647, 32767) if $fam eq 'INT';
	return pick($small, $small, 0.5, 2.25, "1e308", "'NaN'::float8", "'Infinity'::float8") if $fam eq 'FLT';
	return pick($small, $small, 0.5) if $fam eq 'NUM';
	return pick($small, $small, 3, 2147483647) if $fam eq 'DATE';
	return "interval " . pick("'1 hour'", "'3 days'", "'90 minutes'") if $fam eq 'TS' || $fam eq 'TTZ';
	return "interval " . pick("'1 hour'", "'1 mon'", "'30 days'", "'0'") if $fam eq 'IV';
	return pick("'k1'", "'k5'", "''");
}

# two columns that compare: [x, y, family of x]
sub comparable
{
	my $kind = wpick([ 8, 'INT' ], [ 3, 'INTX' ], [ 4, 'FLT' ], [ 2, 'INTFLT' ], [ 3, 'DATE' ],
		[ 2, 'TS' ], [ 1, 'DATETS' ], [ 1, 'NUM' ], [ 1, 'IV' ], [ 1, 'TTZ' ], [ 1, 'TEXT' ]);
	my $same = sub { my $c = pick(@{ $FAMILY_COLS{ $_[0] } }); ($c, chance(0.7) ? $c : pick(@{ $FAMILY_COLS{ $_[0] } })) };
	if ($kind eq 'INT' || $kind eq 'FLT' || $kind eq 'DATE' || $kind eq 'TS' || $kind eq 'TEXT' ||
		$kind eq 'IV' || $kind eq 'TTZ')
	{
		my ($x, $y) = $same->($kind);
		return ($x, $y, $kind);
	}
	return (pick(@{ $FAMILY_COLS{INT} }), pick(@{ $FAMILY_COLS{INT} }), 'INT') if $kind eq 'INTX';
	return (pick(@{ $FAMILY_COLS{INT} }), pick(@{ $FAMILY_COLS{FLT} }), 'INT') if $kind eq 'INTFLT';
	return (pick('d', 'ts'), pick('d', 'ts'), 'DATE') if $kind eq 'DATETS';
	return ('n', pick('n', 'i4', 'f8', 'i8'), 'NUM');
}

sub cmp_op { pick('<', '<=', '>', '>=', '<>', '=') }

# one atom of a join condition between aliases $a and $b
sub atom
{
	my ($a, $b) = @_;
	($a, $b) = ($b, $a) if chance(0.5);
	my ($x, $y, $fam) = comparable();
	my $numeric = $fam eq 'INT' || $fam eq 'FLT' || $fam eq 'NUM';
	my $kind = wpick([ 20, 'eq' ], [ 15, 'cmp' ], [ 6, 'between' ], [ 10, 'band' ], [ 4, 'abs' ],
		[ 12, 'arith' ], [ 4, 'null' ], [ 9, 'host' ], [ 4, 'side' ], [ 0.5, 'const' ]);
	if ($kind eq 'eq')
	{
		return "$a.$x = $b.$y";
	}
	if ($kind eq 'cmp')
	{
		return "$a.$x " . cmp_op() . " $b.$y";
	}
	if ($kind eq 'between')
	{
		my $z = pick(@{ $FAMILY_COLS{ $COL{$x}[1] } });
		my $between = wpick([ 6, 'BETWEEN' ], [ 1, 'NOT BETWEEN' ], [ 1, 'BETWEEN SYMMETRIC' ]);
		return "$b.$y $between $a.$x AND $a.$z";
	}
	if ($kind eq 'band' && $fam ne 'TEXT' && $fam ne 'NUM')
	{
		my $c = const_of($COL{$x}[1]);
		my $c2 = chance(0.7) ? $c : const_of($COL{$x}[1]);
		return pick("$b.$y BETWEEN $a.$x - $c AND $a.$x + $c2",
			"$b.$y >= $a.$x - $c AND $b.$y <= $a.$x + $c2",
			"$b.$y BETWEEN $a.$x AND $a.$x + $c2",
			"$a.$x - $c < $b.$y AND $b.$y < $a.$x + $c2");
	}
	if ($kind eq 'abs' && ($numeric || $fam eq 'DATE') && $fam ne 'NUM')
	{
		($x, $y) = ('d', 'd') if $fam eq 'DATE';
		return "abs($a.$x - $b.$y) <= " . const_of($COL{$x}[1]);
	}
	if ($kind eq 'arith' && $numeric)
	{
		my $c = const_of($COL{$x}[1]);
		my $op = cmp_op();
		my @forms = (
			"$a.$x + $c $op $b.$y",
			"$a.$x * " . pick(2, -1, 3, 1000000, 2147483647, 0.5) . " $op $b.$y",
			"$a.$x - $b.$y $op $c",
			"$a.$x / $b.$y $op $c",
			"-$a.$x $op $b.$y",
			"$a.${x}::float4 $op $b.$y",
			"($a.$x + $b.$y) * 2 $op $c",
			"$a.$x - $c $op $b.$y + $c");
		push @forms, "$a.$x % $b.$y $op $c", "$a.${x}::int2 $op $b.$y", "$a.${x}::int4 $op $b.$y"
		  if $fam eq 'INT' && $COL{$y}[1] eq 'INT';
		return pick(@forms);
	}
	if ($kind eq 'arith' && $fam eq 'DATE')
	{
		my $c = const_of('DATE');
		my $op = cmp_op();
		return pick("$a.d + $c $op $b.d", "$a.d - $b.d $op $c", "$a.d - $c $op $b.d",
			"$a.d $op $b.ts", "$a.d + $c $op $b.ts");
	}
	if ($kind eq 'arith' && $fam eq 'TS')
	{
		return "$a.ts + " . const_of('TS') . " " . cmp_op() . " $b.ts";
	}
	if ($kind eq 'null')
	{
		return pick("$a.$x IS NULL AND $b.$y IS NOT NULL",
			"($a.$x IS NULL) = ($b.$y IS NULL)",
			"$a.$x IS NOT DISTINCT FROM $b.$y",
			"$a.$x IS DISTINCT FROM $b.$y",
			"($a.$x = $b.$y) IS NOT TRUE",
			"($a.$x < $b.$y) IS NULL");
	}
	if ($kind eq 'host')
	{
		return pick(
			"$a.t < $b.t", "$a.t = $b.t", "upper($a.t) = $b.t",
			"length($a.t) " . cmp_op() . " $b.i4",
			"$a.i4::text = $b.i4::text",
			"$a.n " . cmp_op() . " $b.n",
			"$a.n + 1 " . cmp_op() . " $b.f8",
			"round($a.f8) = $b.f8",
			"greatest($a.i4, $b.j4) " . cmp_op() . " " . const_of('INT'),
			"coalesce($a.i4, 0) = $b.i4",
			"CASE WHEN $a.i4 > 0 THEN $a.i4 ELSE $b.j4 END < $b.i4",
			"to_char($a.d, 'YYYY') = to_char($b.d, 'YYYY')",
			"date_trunc('day', $a.ts) = $b.ts",
			"$a.d < $b.d + (current_date - current_date)",
			"$a.i4 < (SELECT max(i4) FROM s s3)",
			"$b.i4 IN (SELECT j4 FROM r r3 WHERE r3.id < 5)",
			"EXISTS (SELECT 1 FROM s s3 WHERE s3.i4 = $a.i4) OR $a.$x = $b.$y",
			"$a.$x = $b.$y AND $a.t::text < $b.t");
	}
	if ($kind eq 'side')
	{
		return pick("$a.$x > " . const_of($COL{$x}[1]), "$b.$y IS NOT NULL", "$a.$x IS NULL",
			"$a.i4 % 3 = 0");
	}
	if ($kind eq 'const')
	{
		return pick('true', 'false', 'NULL::boolean');
	}
	return "$a.$x " . cmp_op() . " $b.$y";
}

sub condition
{
	my ($a, $b, $depth) = @_;
	my $x = rand();
	return atom($a, $b) if $depth >= 2 || $x < 0.65;
	return "(" . condition($a, $b, $depth + 1) . " AND " . condition($a, $b, $depth + 1) . ")" if $x < 0.78;
	return "(" . condition($a, $b, $depth + 1) . " OR " . condition($a, $b, $depth + 1) . ")" if $x < 0.92;
	return "NOT (" . condition($a, $b, $depth + 1) . ")";
}

# the conjuncts of a join condition (the shrinker drops them one by one)
sub conjuncts
{
	my ($a, $b) = @_;
	return [ map { condition($a, $b, 0) } 1 .. wpick([ 6, 1 ], [ 3, 2 ], [ 1, 3 ]) ];
}

# ---------------------------------------------------------------- aggregates

# An aggregate whose argument reads a column of each side (r.x op s.y),
# computed once per joined pair; an overflow there is an error only on a
# pair that joins.  Float sums and averages are left out: GpuJoin sums in
# another order (README), so their last bits may differ.  Float minima and
# maxima print as x + 0: which of -0 and 0 a tie returns may differ.
sub pair_agg
{
	my $kind = wpick([ 6, 'INT' ], [ 2, 'FLT' ], [ 1, 'INTFLT' ], [ 2, 'DATE' ]);
	my ($a, $b) = chance(0.5) ? ('r', 's') : ('s', 'r');
	if ($kind eq 'INT')
	{
		my ($x, $y) = (pick(@{ $FAMILY_COLS{INT} }), pick(@{ $FAMILY_COLS{INT} }));
		my $arg = pick("$a.$x + $b.$y", "$a.$x - $b.$y", "$a.$x * $b.$y", "$a.$x * 2 + $b.$y",
			"$a.$x + $b.$y * " . pick(3, 1000, 65536), "$a.$x % $b.$y", "-$a.$x + $b.$y");
		return pick('sum', 'sum', 'avg', 'min', 'max', 'count') . "($arg)";
	}
	if ($kind eq 'FLT' || $kind eq 'INTFLT')
	{
		my $x = pick(@{ $FAMILY_COLS{FLT} });
		my $y = pick(@{ $FAMILY_COLS{ $kind eq 'FLT' ? 'FLT' : 'INT' } });
		my $arg = "$a.$x " . pick('+', '-', '*') . " $b.$y";
		my $agg = pick('min', 'max', 'count');
		return $agg eq 'count' ? "count($arg)" : "$agg($arg) + 0";
	}
	# date - date is an integer (an error on an infinite date), date +
	# integer a date (out of range past the ends)
	return pick('sum', 'avg', 'min', 'max', 'count') . "($a.d - $b.d)" if chance(0.5);
	return pick('min', 'max', 'count') . "($a.d " . pick('+', '-') . " $b." . pick('i2', 'i4', 'j4') . ")";
}

# A grouping expression of one side and the expression to select it by:
# [group, shown].  Float groups are shown as x + 0 (-0 and 0 are one group).
sub group_expr
{
	my ($side) = @_;
	my $g = pick("$side.i4 % " . pick(2, 3, 7, 1000), "$side.i2 + 1", "$side.i8 * 2",
		"$side.j4 / " . pick(3, 100), "$side.i4 + $side.j4", "abs($side.i2)", "-$side.i8",
		"$side.d + 1", "$side.d - " . pick(1, 30), "$side.f8 * 2", "-$side.f4", "$side.f8 + $side.f4");
	return [ $g, $g =~ /\bf[48]\b/ ? "($g) + 0" : $g ];
}

# ---------------------------------------------------------------- queries

# A query is a template with ON marking the place of the condition, and the
# list of conjuncts, so that it can be rebuilt with fewer of them.
sub render
{
	my ($q) = @_;
	my $on = join(' AND ', @{ $q->{conj} });
	$on = 'true' if $on eq '';
	my $sql = $q->{tmpl};
	$sql =~ s/\bON_COND\b/$on/;
	return $sql;
}

# The query the native settings run: render()'s, or where PostgreSQL cannot
# plan that one (full_theta), its hand-written equivalent.
sub render_native
{
	my ($q) = @_;
	return render($q) unless defined $q->{native_tmpl};
	my $on = join(' AND ', @{ $q->{conj} });
	$on = 'true' if $on eq '';
	return $q->{native_tmpl} =~ s/\bON_COND\b/$on/gr;
}

# The arguments of fuzz_run() that name the query: the query, and the native
# settings' query where it differs.
sub run_args
{
	my ($sql, $native_sql) = @_;
	return dq($sql) . (defined $native_sql && $native_sql ne $sql ? ', ' . dq($native_sql) : '');
}

sub new_query
{
	my ($nr, $ns) = @_;
	my $small3 = $nr * $nr * $ns <= 40 * $max_pairs;
	my $shape = wpick([ 30, 'inner' ], [ 4, 'comma' ], [ 8, 'left' ], [ 5, 'right' ], [ 6, 'full' ],
		[ 6, 'semi' ], [ 6, 'anti' ], [ 10, 'agg' ], [ 6, 'group' ], [ 10, 'pair_agg' ],
		[ 6, 'group_expr' ], [ 6, 'group_both' ], [ 5, 'limit' ],
		[ $small3 ? 5 : 0, 'three' ], [ $small3 ? 3 : 0, 'rescan' ]);
	my $cols = pick('r.id, s.id', 'r.id, s.id', 'r.*, s.*', 'r.id, s.id, r.f8, s.d, r.t, s.i8');
	my $where = chance(0.2) ? " WHERE " . pick('r.i4 > 0', 's.f8 IS NOT NULL', 'r.id % 2 = 0', 'r.d > s.d') : '';
	my %q = (shape => $shape, conj => conjuncts('r', 's'));
	if ($shape eq 'inner')
	{
		$q{tmpl} = "SELECT $cols FROM r JOIN s ON ON_COND$where";
	}
	elsif ($shape eq 'comma')
	{
		$q{tmpl} = "SELECT $cols FROM r, s WHERE ON_COND";
	}
	elsif ($shape eq 'left' || $shape eq 'right' || $shape eq 'full')
	{
		my $jt = uc($shape);
		my $filter = chance(0.3) ? pick('s.id IS NULL', 'r.id IS NULL', 'r.id IS NOT NULL') : undef;
		$where = defined $filter ? " WHERE $filter" : '';
		$q{tmpl} = "SELECT $cols FROM r $jt JOIN s ON ON_COND$where";
		# PostgreSQL plans a FULL JOIN only with a hashable or mergeable
		# condition; without one, the native settings run it by hand
		if ($shape eq 'full' && chance(0.5))
		{
			my $c = pick(@COLS);
			unshift @{ $q{conj} }, "r.$c = s.$c";
		}
		elsif ($shape eq 'full')
		{
			$q{shape} = 'full_theta';
			$q{native_tmpl} = "SELECT $cols FROM r LEFT JOIN s ON ON_COND$where UNION ALL "
			  . "SELECT $cols FROM s LEFT JOIN r ON false "
			  . "WHERE NOT EXISTS (SELECT 1 FROM r WHERE ON_COND)" . (defined $filter ? " AND $filter" : '');
		}
	}
	elsif ($shape eq 'semi' || $shape eq 'anti')
	{
		my $not = $shape eq 'anti' ? 'NOT ' : '';
		$q{tmpl} = "SELECT r.* FROM r WHERE ${not}EXISTS (SELECT 1 FROM s WHERE ON_COND)";
	}
	elsif ($shape eq 'agg')
	{
		my $aggs = pick('count(*)', 'count(*), sum(r.i4), min(s.f8), max(r.d)',
			'count(s.id), sum(s.i8), avg(r.i2), max(s.t)', 'count(DISTINCT s.i2), sum(r.n), min(r.ts)',
			'bool_and(r.i4 < s.i4), count(*) FILTER (WHERE r.f4 > s.f4)');
		my $jt = pick('JOIN', 'JOIN', 'LEFT JOIN');
		$q{tmpl} = "SELECT $aggs FROM r $jt s ON ON_COND$where";
	}
	elsif ($shape eq 'group')
	{
		my $g = pick('r.i2', 's.d', 'r.t', 'r.f4');
		# -0 and 0 are one group, shown by the value of whichever row of it
		# comes first, which depends on the plan (PostgreSQL's own too):
		# + 0 shows both as 0
		my $shown = $g eq 'r.f4' ? 'r.f4 + 0' : $g;
		$q{tmpl} = "SELECT $shown, count(*), max(s.ts), sum(s.j4) FROM r JOIN s ON ON_COND GROUP BY $g";
	}
	elsif ($shape eq 'pair_agg')
	{
		# arguments over both sides, with one-side ones and count(*)
		my @aggs = map { pair_agg() } 1 .. wpick([ 3, 1 ], [ 2, 2 ], [ 1, 3 ]);
		push @aggs, pick('count(*)', 'sum(r.i4)', 'min(s.d)', 'max(r.i8)') if chance(0.5);
		my $jt = wpick([ 9, 'JOIN' ], [ 1, 'LEFT JOIN' ]);
		my $having = chance(0.15) ? ' HAVING count(*) > ' . pick(0, 1, 10) : '';
		$q{tmpl} = "SELECT " . join(', ', @aggs) . " FROM r $jt s ON ON_COND$where$having";
	}
	elsif ($shape eq 'group_expr')
	{
		# GROUP BY expressions of one side (with a column of it, sometimes),
		# aggregates of either side and of both
		my $side = pick('r', 's');
		my @groups = (group_expr($side));
		push @groups, chance(0.5) ? group_expr($side) : [ "$side.i2", "$side.i2" ] if chance(0.3);
		my @aggs = ('count(*)', map { chance(0.6) ? pair_agg() : pick('sum(s.j4)', 'max(s.ts)', 'min(r.d)', 'avg(r.i2)') }
			  1 .. wpick([ 2, 1 ], [ 2, 2 ]));
		my $having = chance(0.2) ? ' HAVING count(*) > ' . pick(1, 5) : '';
		$q{tmpl} = "SELECT " . join(', ', (map { $_->[1] } @groups), @aggs) . " FROM r JOIN s ON ON_COND$where"
		  . " GROUP BY " . join(', ', map { $_->[0] } @groups) . $having;
	}
	elsif ($shape eq 'group_both')
	{
		# GROUP BY columns or expressions of both sides (each side's groups
		# numbered on their own), aggregates of either side and of both; the
		# round's gpujoin.max_dense_groups sometimes keeps the groups in the
		# host's hash table
		my @groups = (chance(0.5) ? group_expr('r') : [ 'r.i2', 'r.i2' ],
			chance(0.5) ? group_expr('s') : map { [ $_, $_ ] } pick('s.i2', 's.d', 's.t', 's.i4'));
		push @groups, group_expr(pick('r', 's')) if chance(0.2);
		my @aggs = ('count(*)', map { chance(0.5) ? pair_agg() : pick('sum(s.j4)', 'max(s.ts)', 'min(r.d)', 'avg(r.i2)') }
			  1 .. wpick([ 2, 1 ], [ 2, 2 ]));
		my $having = chance(0.2) ? ' HAVING count(*) > ' . pick(1, 5) : '';
		$q{tmpl} = "SELECT " . join(', ', (map { $_->[1] } @groups), @aggs) . " FROM r JOIN s ON ON_COND$where"
		  . " GROUP BY " . join(', ', map { $_->[0] } @groups) . $having;
	}
	elsif ($shape eq 'limit')
	{
		$q{tmpl} = "SELECT r.id, s.id FROM r JOIN s ON ON_COND ORDER BY r.id, s.id LIMIT " . pick(1, 5, 50);
	}
	elsif ($shape eq 'three')
	{
		my $c2 = join(' AND ', @{ conjuncts('s', 'r2') });
		$q{tmpl} = "SELECT r.id, s.id, r2.id FROM r JOIN s ON ON_COND "
		  . pick('JOIN', 'JOIN', 'LEFT JOIN') . " r r2 ON $c2";
	}
	elsif ($shape eq 'rescan')
	{
		# the join below is rescanned once per row of r (a parameter changes)
		my $c2 = join(' AND ', @{ conjuncts('s', 'r2') });
		$q{conj} = [];
		$q{tmpl} = "SELECT r.id, l.c FROM r, LATERAL (SELECT count(*) AS c, max(r2.id) AS m FROM s JOIN r r2 "
		  . "ON $c2 WHERE s.i4 <= r.i4) l WHERE ON_COND";
	}
	return \%q;
}

# ---------------------------------------------------------------- running

my %stat = (cases => 0, passed => 0, failed => 0, tolerated => 0, plan_dependent => 0,
	timeout => 0, used => 0, invalid => 0, native_error => 0, crashes => 0, full_declined => 0);
my %alg_count;
my %shape_used;
my %shape_count;
my %shape_gpu_agg;

sub psql_run
{
	my ($script, $tag) = @_;
	my $file = "$tmp/$tag.sql";
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh "SET client_min_messages = warning;\nSET statement_timeout = '$timeout';\n$script\n";
	close($fh);
	my $rc = system("$psql -X -q -A -t -v ON_ERROR_STOP=0 -d $db -f $file >$tmp/$tag.out 2>$tmp/$tag.err");
	local $/;
	open(my $o, '<', "$tmp/$tag.out");
	my $out = <$o> // '';
	open(my $e, '<', "$tmp/$tag.err");
	my $err = <$e> // '';
	return ($rc >> 8, $out, $err);
}

sub server_ready
{
	for (1 .. 120)
	{
		return 1 if system("$psql -X -q -A -t -d $db -c 'SELECT 1' >/dev/null 2>&1") == 0;
		sleep 1;
	}
	return 0;
}

sub dq { my ($s) = @_; return "\$fz\$$s\$fz\$" }

# session settings of the current round (gpujoin.columnar_input,
# gpujoin.max_dense_groups), for its scripts and reproducers
our $round_settings = '';

# settings of a variant as SQL, for the reproducer
sub settings_sql
{
	my ($v) = @_;
	my ($mode, $alg, $mem) = @$v;
	return "SET gpujoin.enabled = off;" if $mode eq 'native';
	my $s = "SET gpujoin.enabled = on;\n";
	if ($mode eq 'force')
	{
		$s .= "SET enable_nestloop = off;\nSET enable_hashjoin = off;\nSET enable_mergejoin = off;\n";
	}
	elsif ($mode eq 'cheap')
	{
		foreach my $backend ('cpu', 'cuda')
		{
			$s .= "SET gpujoin.${backend}_$_ = 0;\n"
			  foreach qw(startup_cost row_cost pair_cost sort_cost output_cost);
		}
	}
	else
	{
		my %only = (nl => 'nestloop', hj => 'hashjoin', mj => 'mergejoin');
		$s = "SET gpujoin.enabled = off;\n";
		$s .= "SET enable_$_ = " . ($_ eq $only{$mode} ? 'on' : 'off') . ";\n" for qw(nestloop hashjoin mergejoin);
		return $s;
	}
	$s .= "SET gpujoin.algorithm = $alg;\nSET gpujoin.device_memory = '$mem';";
	return $s;
}

sub reproducer
{
	my ($why, $tables, $sql, $v, $details, $native_sql) = @_;
	my $q = "SELECT q::text AS r FROM ($sql) q";
	my $nq = "SELECT q::text AS r FROM (" . ($native_sql // $sql) . ") q";
	return "-- gpujoin fuzz failure: $why\n"
	  . "-- seed $seed; rerun: FUZZ_SEED=$seed FUZZ_CASES=$n_cases FUZZ_MAX_ROWS=$max_rows "
	  . "FUZZ_MAX_PAIRS=$max_pairs FUZZ_QUERIES_PER_ROUND=$per_round test/fuzz/run_fuzz.sh\n"
	  . join('', map { "-- $_\n" } @$details)
	  . "$round_settings$HASH_FUNC\nDROP TABLE IF EXISTS r, s, fz_native, fz_gpujoin;\n$tables\nANALYZE r, s;\n\n"
	  . "-- the native plan\nSET gpujoin.enabled = off;\n"
	  . "CREATE TEMP TABLE fz_native AS $nq;\n"
	  . "-- GpuJoin\n"
	  . settings_sql($v) . "\n"
	  . "EXPLAIN (COSTS OFF) $sql;\n"
	  . "CREATE TEMP TABLE fz_gpujoin AS $q;\n"
	  . "-- the rows that differ: none when the results agree\n"
	  . "(TABLE fz_gpujoin EXCEPT ALL TABLE fz_native) UNION ALL (TABLE fz_native EXCEPT ALL TABLE fz_gpujoin);\n"
	  . "RESET ALL;\n";
}

# run one query under the native setting and the given variants; returns
# the outcome lines, undef for those it did not get, and whether it crashed
sub run_query
{
	my ($tables, $sql, $variants, $tag, $native_sql) = @_;
	my $script = "$round_settings$HASH_FUNC\nDROP TABLE IF EXISTS r, s;\n$tables\nANALYZE r, s;\n";
	for my $i (0 .. $#$variants)
	{
		my ($mode, $alg, $mem) = @{ $variants->[$i] };
		$script .= "SELECT 'R|$i|' || fuzz_run('$mode', '$alg', '$mem', " . run_args($sql, $native_sql) . ");\n";
	}
	my ($rc, $out, $err) = psql_run($script, $tag);
	my @res;
	for (split /\n/, $out)
	{
		$res[$1] = [ $2, $3 ] if /^R\|(\d+)\|([^|]*)\|(.*)$/;
	}
	my $crashed = $err =~ /server closed the connection|connection to server was lost|terminating connection/;
	return (\@res, $crashed, $err);
}

# does GpuJoin's outcome $g pass against the native outcomes?  Returns
# 'pass', 'plan_dependent', 'tolerated' or 'fail'
sub judge
{
	my ($native, $g, $plan, $more) = @_;
	return 'pass' if $g eq $native;
	return 'timeout' if $g =~ /^error 57014/ || $native =~ /^error 57014/;
	return 'plan_dependent' if grep { defined $_ && $_->[1] eq $g } @$more;
	# both fail: which error comes first depends on the order of the pairs,
	# which differs between plans (PostgreSQL's own too)
	return 'plan_dependent' if $g =~ /^error / && $native =~ /^error / && !$strict_errors;
	my $all_native_error = !grep { $_->[1] !~ /^error / } grep { defined } @$more;
	return 'tolerated' if !$strict_errors && $g =~ /^ok / && $native =~ /^error / && $all_native_error;
	return 'fail';
}

# Shrink a failure: fewer rows in each table, fewer conjuncts, while the
# same variant still fails.  Returns the smaller (tables, sql).
sub shrink
{
	my ($t, $q, $v) = @_;
	my @nat = ([ 'native', 'auto', '0' ], [ 'nl', 'auto', '0' ], [ 'hj', 'auto', '0' ], [ 'mj', 'auto', '0' ]);
	my $still_fails = sub {
		my ($tables, $sql) = @_;
		my ($res, $crashed) = run_query($tables, $sql, [ @nat, $v ], 'shrink', render_native($q));
		server_ready() if $crashed;
		return 1 if $crashed && !defined $res->[4];
		return 0 if grep { !defined } @$res[ 0 .. 4 ];
		return judge($res->[0][1], $res->[4][1], $res->[4][0], [ @$res[ 1 .. 3 ] ]) eq 'fail';
	};
	my %rows = %{ $t->{rows} };
	my $tables_of = sub { join("\n", map { $t->{def}{$_} =~ s/generate_series\(1, \d+\)/generate_series(1, $rows{$_})/r } qw(r s)) };
	my $budget = 40;
	for my $name (qw(r s r s))
	{
		while ($rows{$name} > 1 && $budget-- > 0)
		{
			my $old = $rows{$name};
			# keep a prefix of the table: its rows do not depend on its size
			$rows{$name} = int($old / 2);
			next if $still_fails->($tables_of->(), render($q));
			$rows{$name} = $old - int(($old + 3) / 4);
			next if $rows{$name} < $old && $still_fails->($tables_of->(), render($q));
			$rows{$name} = $old;
			last;
		}
	}
	for (my $i = 0; $i < @{ $q->{conj} } && @{ $q->{conj} } > 1 && $budget-- > 0; $i++)
	{
		my @keep = @{ $q->{conj} };
		splice(@{ $q->{conj} }, $i, 1);
		if ($still_fails->($tables_of->(), render($q)))
		{
			$i--;
		}
		else
		{
			$q->{conj} = \@keep;
		}
	}
	return ($tables_of->(), render($q));
}

sub report_failure
{
	my ($case, $why, $t, $q, $v, $details) = @_;
	$stat{failed}++;
	make_path($out_dir);
	my $sql = render($q);
	my $file = "$out_dir/seed$seed-case$case.sql";
	my $text = reproducer("case $case: $why", $t->{sql}, $sql, $v, $details, render_native($q));
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh $text;
	close($fh);
	print "not ok $case - $why\n";
	print "# reproducer ($file):\n", map { "#   $_\n" } split(/\n/, $text);
	my %copy = (%$q, conj => [ @{ $q->{conj} } ]);
	my ($st, $ssql) = shrink($t, \%copy, $v);
	my $snative = render_native(\%copy);
	if ($ssql ne $sql || $st ne $t->{sql})
	{
		my $small = "$out_dir/seed$seed-case$case-small.sql";
		open($fh, '>', $small) or die "$small: $!";
		print $fh reproducer("case $case (shrunk): $why", $st, $ssql, $v, [], $snative);
		close($fh);
		print "# shrunk reproducer: $small\n#   $ssql\n";
	}
}

# ---------------------------------------------------------------- main

my $setup_sql = do { local (@ARGV, $/) = ("$dir/fuzz_setup.sql"); <> };
if (system("$psql -X -q -d $db -c 'SELECT 1' >/dev/null 2>&1") != 0)
{
	system("$psql -X -q -d postgres -c 'CREATE DATABASE $db' >/dev/null") == 0 or die "cannot create database $db\n";
}
my ($rc, $out, $err) = psql_run("SET client_min_messages = warning;\nCREATE EXTENSION IF NOT EXISTS gpujoin;\n$setup_sql", 'setup');
die "fuzz setup failed: $err\n" if $rc != 0 || $err =~ /ERROR/;

print "# fuzz: seed $seed, $n_cases cases, up to $max_rows rows and $max_pairs pairs per join\n";
my $start = time;
my $case = 0;
my $rounds = 0;
while ($case < $n_cases)
{
	$dom = new_domain();
	my ($nr, $ns) = (pick_rows(), pick_rows());
	if ($nr * $ns > $max_pairs)
	{
		($nr > $ns ? $nr : $ns) = int($max_pairs / ($nr < $ns ? $nr : $ns));
	}
	my %t = (rows => { r => $nr, s => $ns });
	# by the round's number, so that the other rounds' random choices stay
	$t{def}{r} = new_table('r', $nr, $dom, $rounds++ % 4 == 3);
	$t{def}{s} = new_table('s', $ns, $dom);
	$t{sql} = "$t{def}{r}\n$t{def}{s}";
	my @queries;
	while (@queries < $per_round && $case + @queries < $n_cases)
	{
		push @queries, new_query($nr, $ns);
	}
	# one psql per round: the tables, then each query's variants
	my @variants_of;
	# the columnar heap reader on in most rounds, off in the others; the
	# joins of one round in three in the GPU service where it runs (on a
	# machine without a GPU it runs only with gpujoin.service_backend = cpu,
	# as test/run_tests.sh starts it)
	$round_settings = "SET gpujoin.columnar_input = " . pick('on', 'on', 'off') . ";\n"
	  . "SET gpujoin.max_dense_groups = " . pick(4194304, 4194304, 1) . ";\n"
	  . pick('', '', "DO \$\$ BEGIN IF EXISTS (SELECT 1 FROM gpujoin_devices() "
		  . "WHERE backend = 'service' AND status LIKE 'ready%') THEN "
		  . "PERFORM set_config('gpujoin.device', 'service', false); END IF; END \$\$;\n")
	  . ($max_host_memory ne '' ? "SET gpujoin.max_host_memory = '$max_host_memory';\n" : '');
	my $script = "$round_settings$HASH_FUNC\nDROP TABLE IF EXISTS r, s;\n$t{sql}\nANALYZE r, s;\n";
	for my $k (0 .. $#queries)
	{
		my @v = ([ 'native', 'auto', '0' ],
			[ 'force', pick('auto', 'nestloop', 'sortmerge', 'hash'), '0' ],
			[ pick('force', 'force', 'cheap'), pick('auto', 'nestloop', 'sortmerge', 'hash'),
				pick('1kB', '2kB', '4kB', '64kB') ]);
		$variants_of[$k] = \@v;
		my $args = run_args(render($queries[$k]), render_native($queries[$k]));
		for my $i (0 .. $#v)
		{
			$script .= "SELECT 'R|$k|$i|' || fuzz_run('$v[$i][0]', '$v[$i][1]', '$v[$i][2]', $args);\n";
		}
	}
	my ($rc, $out, $err) = psql_run($script, 'round');
	my %res;
	for (split /\n/, $out)
	{
		$res{$1}[$2] = [ $3, $4 ] if /^R\|(\d+)\|(\d+)\|([^|]*)\|(.*)$/;
	}
	my $crashed = $err =~ /server closed the connection|connection to server was lost|terminating connection/;
	if (!$crashed && $err =~ /ERROR/)
	{
		# the tables could not be made: a bug of the fuzzer itself
		print "# fuzzer error: $err";
		$stat{failed}++;
	}
	server_ready() if $crashed;
	my $crash_blamed = 0;
	for my $k (0 .. $#queries)
	{
		$case++;
		$stat{cases}++;
		my $q = $queries[$k];
		my $sql = render($q);
		my $native_sql = render_native($q);
		my $v = $variants_of[$k];
		$shape_count{ $q->{shape} }++;
		my $r = $res{$k};
		if (!$r || grep { !defined $r->[$_] } 0 .. $#$v)
		{
			if ($crashed && !$crash_blamed)
			{
				# the first query without all its results was running when the
				# server went down: check it alone, then count it
				my ($res2, $crashed2, $err2) = run_query($t{sql}, $sql, $v, 'recheck', $native_sql);
				server_ready() if $crashed2;
				if ($crashed2)
				{
					$crash_blamed = 1;
					$stat{crashes}++;
					my ($i) = grep { !defined $res2->[$_] } 0 .. $#$v;
					report_failure($case, "server crash", \%t, $q, $v->[$i // 1],
						[ "the server crashed running this query", split(/\n/, $err2) ]);
					next;
				}
				$r = $res2;
			}
			elsif ($crashed)
			{
				# after the crash: rerun alone
				my ($res2, $crashed2) = run_query($t{sql}, $sql, $v, 'rerun', $native_sql);
				server_ready() if $crashed2;
				$r = $res2;
			}
			if (!$r || grep { !defined $r->[$_] } 0 .. $#$v)
			{
				report_failure($case, "no result from the fuzzer", \%t, $q, $v->[1], [ split(/\n/, $err) ]);
				next;
			}
		}
		my $native = $r->[0][1];
		$stat{invalid}++ if $native =~ /^error 42/;
		print "# invalid query $case: $sql\n#   $native\n" if $verbose && $native =~ /^error 42/;
		$stat{native_error}++ if $native =~ /^error /;
		my $used = 0;
		my $gpu_agg = 0;
		my $verdict = 'pass';
		my $declined = 0;
		my ($bad_v, $bad_res, $more);
		for my $i (1 .. $#$v)
		{
			my ($plan, $g) = @{ $r->[$i] };
			# a FULL JOIN with no native plan that GpuJoin does not offer
			if (defined $q->{native_tmpl} && $plan eq '-' &&
				$g =~ /^error 0A000 FULL JOIN is only supported with merge-joinable or hash-joinable/)
			{
				$declined = 1;
				next;
			}
			if ($plan ne '-')
			{
				$used = 1;
				$gpu_agg = 1 if $plan =~ /:agg/;
				$alg_count{$_}++ for split /,/, $plan;
			}
			my $j = judge($native, $g, $plan, []);
			if ($j eq 'fail')
			{
				# do PostgreSQL's own plans differ? (lazily, once per query)
				if (!$more)
				{
					my ($res3, $crashed3) = run_query($t{sql}, $sql,
						[ [ 'nl', 'auto', '0' ], [ 'hj', 'auto', '0' ], [ 'mj', 'auto', '0' ] ], 'native', $native_sql);
					server_ready() if $crashed3;
					$more = $res3;
				}
				$j = judge($native, $g, $plan, $more);
			}
			if ($j ne 'pass' && $verdict ne 'fail')
			{
				$verdict = $j;
				($bad_v, $bad_res) = ($v->[$i], $r->[$i]);
			}
		}
		$stat{used}++ if $used;
		$stat{full_declined}++ if $declined;
		$shape_used{ $q->{shape} }++ if $used;
		$shape_gpu_agg{ $q->{shape} }++ if $gpu_agg;
		if ($verdict eq 'fail')
		{
			my @details = ("native: $native", "GpuJoin (@$bad_v; plan $bad_res->[0]): $bad_res->[1]");
			push @details, map { "native with only $_->[0]: $_->[1]" } grep { defined }
			  map { [ ('nestloop', 'hashjoin', 'mergejoin')[$_], $more->[$_][1] ] } 0 .. 2
			  if $more;
			report_failure($case, ($native =~ /^ok/ && $bad_res->[1] =~ /^ok/) ? "different rows" : "different outcome",
				\%t, $q, $bad_v, \@details);
			next;
		}
		$stat{passed}++;
		$stat{$verdict}++ if $verdict ne 'pass';
		if ($verdict eq 'tolerated')
		{
			make_path($out_dir);
			my $file = "$out_dir/seed$seed-case$case-tolerated.sql";
			open(my $fh, '>', $file) or die "$file: $!";
			print $fh reproducer("case $case: GpuJoin returned rows where PostgreSQL raised an error",
				$t{sql}, $sql, $bad_v, [ "native: $native", "GpuJoin (@$bad_v; plan $bad_res->[0]): $bad_res->[1]" ],
				$native_sql);
			close($fh);
			print "# tolerated $case ($file): native $native; GpuJoin @$bad_v ($bad_res->[0]): $bad_res->[1]\n";
		}
		print "ok $case - $q->{shape}" . ($used ? " (GpuJoin)" : "") . "\n" if $verbose;
		print "#   $sql\n#   native $native; " . join("; ", map { "@{$v->[$_]}: @{$r->[$_]}" } 1 .. $#$v) . "\n" if $verbose > 1;
	}
}

my $secs = time - $start;
print "# fuzz coverage: $stat{cases} queries in ${secs}s, $stat{used} ran GpuJoin in at least one setting\n";
print "# GpuJoin nodes by algorithm: ", join(', ', map { "$_ $alg_count{$_}" } sort keys %alg_count), "\n";
print "# queries by shape (with GpuJoin): ",
  join(', ', map { "$_ $shape_count{$_} (" . ($shape_used{$_} // 0) . ")" } sort keys %shape_count), "\n";
print "# queries whose aggregates ran inside GpuJoin (algorithm:agg above), by shape: ",
  join(', ', map { "$_ $shape_gpu_agg{$_}" } sort keys %shape_gpu_agg), "\n";
print "# native errors $stat{native_error} (invalid queries $stat{invalid}), plan-dependent errors "
  . "$stat{plan_dependent}, tolerated $stat{tolerated}, timeouts $stat{timeout}, crashes $stat{crashes}, "
  . "FULL joins declined $stat{full_declined}\n";
print "fuzz: $stat{passed} passed, $stat{failed} failed\n";
exit($stat{failed} ? 1 : 0);
