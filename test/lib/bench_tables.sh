# test/lib/bench_tables.sh: the SQL of tables several benchmarks build.  Sourced.
#
# equi_tables_sql F_N D_N: the equi-join's tables of issues 35 and 36 (plan
# quality, bench_equi.sh, bench_wall_clock.sh): d(k int4 primary key, w
# float8, c int4) of D_N rows and f(k int4, v float8) of F_N rows whose keys
# fall over 1.2 D_N values (about 83% of f's rows find their d row).
equi_tables_sql() {
	cat <<SQL
CREATE TABLE d AS SELECT g::int4 AS k, (g % 10)::float8 AS w, (g % 1000)::int4 AS c
  FROM generate_series(0, $2 - 1) g;
ALTER TABLE d ADD PRIMARY KEY (k);
CREATE TABLE f AS SELECT (random() * ($2 * 1.2 - 1))::int4 AS k, (g % 100)::float8 AS v
  FROM generate_series(1, $1) g;
SQL
}

# band_tables_sql N: the band join's tables of issue 36 (bench_equi.sh,
# bench_ab.sh): rb and sb, N rows each of (id int8, t int8) with t uniform
# over [0, 25 N), so that the band +-12 matches about one row each; a btree
# on sb.t, as for PostgreSQL's own index nested loop.
band_tables_sql() {
	cat <<SQL
CREATE TABLE rb AS SELECT g::int8 AS id, (random() * 25 * $1)::int8 AS t
  FROM generate_series(1, $1) g;
CREATE TABLE sb AS SELECT g::int8 AS id, (random() * 25 * $1)::int8 AS t
  FROM generate_series(1, $1) g;
CREATE INDEX ON sb (t);
SQL
}
