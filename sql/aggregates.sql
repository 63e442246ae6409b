--
-- aggregates: count/sum/avg/min/max over a join computed inside GpuJoin
-- (gpujoin.enable_aggregate) give PostgreSQL's results, with every
-- algorithm, NULLs, empty inputs, overflow, host quals, HAVING and many
-- tiles.  Float sums are compared rounded: GpuJoin sums in another order.
--
SET client_min_messages = warning;

CREATE FUNCTION gj_agg_plan(query text) RETURNS text LANGUAGE sql AS $$
    SELECT gj_plan_lines(query, '^\s*(Aggregate|HashAggregate|GroupAggregate|MixedAggregate|Custom Scan|Group Key|GPU Aggregates|Algorithm)')
$$;

CREATE TABLE agg_q (id int, q text);
INSERT INTO agg_q VALUES
 (1, 'SELECT count(*), count(x.a), sum(x.a), sum(y.b), sum(x.c), avg(x.a), avg(y.b), avg(x.c), min(x.a), max(y.c), min(y.b) FROM t_int x JOIN t_int y ON x.b < y.b'),
 (2, 'SELECT count(*), sum(y.c), avg(y.c), min(x.c), max(x.c), count(y.flag) FROM t_int x JOIN t_int y ON x.a = y.a'),
 (3, 'SELECT count(*), min(x.f4), max(x.f4), min(y.f8), max(y.f8), count(y.f4), round(sum(x.f4)::numeric, 2), round(sum(y.f8)::numeric, 4) FROM t_flt x JOIN t_flt y ON x.f8 <= y.f8 AND x.id < 200 AND y.id < 200'),
 (4, 'SELECT min(x.f8), max(x.f8), min(y.f4), max(y.f4), count(*) FROM t_flt x JOIN t_flt y ON x.f8 = y.f8'),
 (5, 'SELECT count(*), min(x.d), max(y.ts), min(y.tz), count(x.ts) FROM t_time x JOIN t_time y ON x.d < y.d'),
 (6, 'SELECT count(*), sum(x.b), avg(y.b), min(y.b) FROM t_int x JOIN t_empty y ON x.b < y.b'),
 (7, 'SELECT count(*), sum(x.b), avg(y.b), max(y.c) FROM t_empty x JOIN t_int y ON x.b < y.b'),
 (8, 'SELECT count(*), sum(x.b * 2 + y.id * 0), sum(x.b + 1), avg(-y.c) FROM t_int x JOIN t_int y ON x.b >= y.b - 2 AND x.b <= y.b AND x.id < 241 AND y.id < 241'),
 (9, 'SELECT count(*), sum(y.c) FROM t_int x JOIN t_int y ON x.b < y.b AND x.id::text < y.id::text'),
 (10, 'SELECT sum(y.c), count(*) FROM t_int x JOIN t_int y ON x.b < y.b AND x.a <> y.a'),
 (11, 'SELECT count(*) FROM t_int x JOIN t_int y ON x.b < y.b HAVING count(*) > 1'),
 (12, 'SELECT count(*) FROM t_int x JOIN t_int y ON x.b < y.b HAVING count(*) < 1'),
 (13, 'SELECT count(*) + 1, sum(x.c) * 2 FROM t_int x JOIN t_int y ON x.c > y.c');

-- every query, every algorithm: the plan, then the comparison with native
SET gpujoin.algorithm = nestloop;
SELECT id, gj_agg_plan(q) AS plan FROM agg_q WHERE id IN (1, 2, 9, 13) ORDER BY id;
SELECT id, gj_compare(q) AS result FROM agg_q ORDER BY id;
SET gpujoin.algorithm = sortmerge;
SELECT id, gj_agg_plan(q) AS plan FROM agg_q WHERE id IN (1, 9) ORDER BY id;
SELECT id, gj_compare(q) AS result FROM agg_q ORDER BY id;
SET gpujoin.algorithm = hash;
SELECT id, gj_agg_plan(q) AS plan FROM agg_q WHERE id IN (2, 4) ORDER BY id;
SELECT id, gj_compare(q) AS result FROM agg_q ORDER BY id;
RESET gpujoin.algorithm;

-- the results themselves (checked by hand against native below)
SELECT count(*), count(x.a), sum(x.a), sum(x.c), avg(x.a), avg(x.c), min(x.a), max(y.c)
FROM t_int x JOIN t_int y ON x.b < y.b;
SET gpujoin.enable_aggregate = off;
SELECT count(*), count(x.a), sum(x.a), sum(x.c), avg(x.a), avg(x.c), min(x.a), max(y.c)
FROM t_int x JOIN t_int y ON x.b < y.b;
RESET gpujoin.enable_aggregate;

-- many tiles and steps
SET gpujoin.device_memory = '1kB';
SELECT gj_compare('SELECT count(*), sum(x.k), sum(y.id), max(y.v), min(x.v) FROM t_big x JOIN t_big y ON x.k < y.k AND y.k < x.k + 3') AS many_tiles_range;
SELECT gj_compare('SELECT count(*), sum(x.k), avg(y.id) FROM t_big x JOIN t_big y ON x.k = y.k') AS many_tiles_hash;
SELECT gj_compare('SELECT count(*), sum(x.id), avg(y.k) FROM t_big x JOIN t_big y ON abs(x.v - y.v) < 0.01') AS many_tiles_nestloop;
RESET gpujoin.device_memory;

-- errors: an argument that overflows on a joined pair, a float sum that overflows
SELECT gj_compare_error('SELECT sum(x.b * 2) FROM t_int x JOIN t_int y ON x.b > y.b');
SELECT gj_compare_error('SELECT sum(x.b * 2) FROM t_int x JOIN t_int y ON x.b > y.b AND x.b < 1000');
SELECT gj_compare_error('SELECT sum(x.f8) FROM t_flt x JOIN t_int y ON x.id >= 208 + y.id * 0 AND x.id <= 208 AND y.id <= 2');
-- sum(int8) beyond int8: numeric, exactly
SELECT gj_compare('SELECT sum(x.c), avg(x.c), sum(y.c) FROM t_int x JOIN t_int y ON x.id >= 241 AND x.id <= 242 AND y.id <= 200 AND x.c <> y.c') AS huge_sums;
SELECT sum(x.c), avg(x.c) FROM t_int x JOIN t_int y ON x.id >= 241 AND x.id <= 241 AND x.c > y.c;

-- declined: DISTINCT, FILTER, avg of floats, text
SELECT gj_agg_plan('SELECT count(DISTINCT x.a) FROM t_int x JOIN t_int y ON x.b < y.b') AS distinct_agg;
SELECT gj_agg_plan('SELECT count(*) FILTER (WHERE x.a > 0) FROM t_int x JOIN t_int y ON x.b < y.b') AS filter_agg;
SELECT gj_agg_plan('SELECT avg(x.f8) FROM t_flt x JOIN t_flt y ON x.f8 < y.f8') AS avg_float;
SELECT gj_agg_plan('SELECT max(x.id::text) FROM t_int x JOIN t_int y ON x.b < y.b') AS text_max;
SELECT gj_agg_plan('SELECT sum(x.b + y.b) FROM t_int x JOIN t_int y ON x.b < y.b') AS both_sides;

--
-- GROUP BY on columns of one side (that side becomes the outer input):
-- every group of PostgreSQL with the same aggregates, NULL a group of its
-- own, -0.0 and 0.0 one group, NaN one group, text keys, HAVING per group,
-- empty inputs give no group.  Float keys are selected as k + 0 so that the
-- group's value prints the same whichever of -0.0 and 0.0 represents it.
--
CREATE TABLE t_grp (id int, k text, f8 float8, v int);
INSERT INTO t_grp
SELECT g,
       CASE WHEN g % 7 = 0 THEN NULL ELSE 'key ' || (g % 11) END,
       CASE WHEN g % 13 = 0 THEN NULL
            WHEN g % 5 = 0 THEN '-0'::float8
            WHEN g % 5 = 1 THEN '0'::float8
            WHEN g % 9 = 0 THEN 'NaN'::float8
            WHEN g % 17 = 0 THEN '-Infinity'::float8
            ELSE (g % 4) / 2.0 END,
       CASE WHEN g % 3 = 0 THEN NULL ELSE g % 50 END
FROM generate_series(1, 300) g;
ANALYZE t_grp;

CREATE TABLE agg_g (id int, q text);
INSERT INTO agg_g VALUES
 (1, 'SELECT x.a, count(*), sum(y.c), avg(x.b), min(y.a), max(x.c), count(y.a) FROM t_int x JOIN t_int y ON x.b < y.b GROUP BY x.a'),
 (2, 'SELECT y.a, count(*), sum(x.c), avg(y.b), min(x.a) FROM t_int x JOIN t_int y ON x.b < y.b GROUP BY y.a'),
 (3, 'SELECT x.a, x.flag, count(*), sum(y.b) FROM t_int x JOIN t_int y ON x.a = y.a GROUP BY x.a, x.flag'),
 (4, 'SELECT x.f8 + 0, count(*), sum(y.v), min(y.f8), max(y.f8) FROM t_grp x JOIN t_grp y ON x.v < y.v GROUP BY x.f8'),
 (5, 'SELECT x.f4 + 0, count(*), sum(y.b) FROM t_flt x JOIN t_int y ON x.id < y.id AND x.f4 < y.b GROUP BY x.f4 HAVING count(*) > 100'),
 (6, 'SELECT x.k, count(*), sum(y.v), avg(y.v), max(y.f8) FROM t_grp x JOIN t_grp y ON x.v >= y.v - 3 AND x.v <= y.v GROUP BY x.k'),
 (7, 'SELECT x.k, x.f8 + 0, count(*) FROM t_grp x JOIN t_grp y ON x.v = y.v GROUP BY x.k, x.f8 HAVING sum(y.id) > 500 OR x.k IS NULL'),
 (8, 'SELECT x.b, count(*), sum(y.f8) FROM t_int x JOIN t_empty y ON x.b < y.b GROUP BY x.b'),
 (9, 'SELECT x.b, count(*), sum(y.c) FROM t_empty x JOIN t_int y ON x.b < y.b GROUP BY x.b'),
 (10, 'SELECT x.b, count(*) FROM t_int x JOIN t_int y ON x.b < y.b AND x.id::text < y.id::text GROUP BY x.b'),
 (11, 'SELECT x.id, x.a, x.c, count(*), sum(y.b * 2) FROM t_int x JOIN t_int y ON x.b > y.b AND y.b BETWEEN -1000 AND 1000 GROUP BY x.id'),
 (12, 'SELECT x.k FROM t_grp x JOIN t_grp y ON x.v < y.v GROUP BY x.k'),
 (13, 'SELECT x.d, count(*), min(y.ts), max(y.tz) FROM t_time x JOIN t_time y ON x.d <= y.d GROUP BY x.d'),
 (14, 'SELECT x.a, count(*) FROM t_int x JOIN t_int y ON x.b < y.b GROUP BY x.a HAVING x.a > 10 OR count(*) < 100');

SET gpujoin.algorithm = nestloop;
SELECT id, gj_agg_plan(q) AS plan FROM agg_g WHERE id IN (1, 2, 6, 11, 12) ORDER BY id;
SELECT id, gj_compare(q) AS result FROM agg_g ORDER BY id;
SET gpujoin.algorithm = sortmerge;
SELECT id, gj_agg_plan(q) AS plan FROM agg_g WHERE id IN (1, 4) ORDER BY id;
SELECT id, gj_compare(q) AS result FROM agg_g ORDER BY id;
SET gpujoin.algorithm = hash;
SELECT id, gj_agg_plan(q) AS plan FROM agg_g WHERE id IN (3, 7) ORDER BY id;
SELECT id, gj_compare(q) AS result FROM agg_g ORDER BY id;
RESET gpujoin.algorithm;

-- the groups themselves: NULL, -0.0 with 0.0, NaN, text keys
BEGIN;
SELECT gj_force(true);
SELECT gj_explain('SELECT x.f8 + 0 AS f8, count(*), sum(y.v) FROM t_grp x JOIN t_grp y ON x.id - 1 = y.id GROUP BY x.f8 ORDER BY 1');
SELECT x.f8 + 0 AS f8, count(*), sum(y.v) FROM t_grp x JOIN t_grp y ON x.id - 1 = y.id GROUP BY x.f8 ORDER BY 1;
SELECT x.k, count(*), sum(y.v) FROM t_grp x JOIN t_grp y ON x.id = y.id AND x.id < 60 GROUP BY x.k ORDER BY 1;
SELECT gj_force(false);
SELECT x.f8 + 0 AS f8, count(*), sum(y.v) FROM t_grp x JOIN t_grp y ON x.id - 1 = y.id GROUP BY x.f8 ORDER BY 1;
SELECT x.k, count(*), sum(y.v) FROM t_grp x JOIN t_grp y ON x.id = y.id AND x.id < 60 GROUP BY x.k ORDER BY 1;
COMMIT;

-- many tiles and steps, every algorithm
SET gpujoin.device_memory = '1kB';
SELECT gj_compare('SELECT x.k, count(*), sum(x.id), min(y.v) FROM t_big x JOIN t_big y ON x.k < y.k AND y.k < x.k + 3 GROUP BY x.k') AS many_tiles_range;
SELECT gj_compare('SELECT y.k, count(*), avg(x.id) FROM t_big x JOIN t_big y ON x.k = y.k GROUP BY y.k') AS many_tiles_hash;
SELECT gj_compare('SELECT x.k, count(*), sum(y.id) FROM t_big x JOIN t_big y ON abs(x.v - y.v) < 0.01 GROUP BY x.k') AS many_tiles_nestloop;
RESET gpujoin.device_memory;

-- errors: an argument that overflows on a joined pair of one group
SELECT gj_compare_error('SELECT x.a, sum(x.b * 2) FROM t_int x JOIN t_int y ON x.b > y.b GROUP BY x.a');
SELECT gj_compare_error('SELECT y.a, sum(x.f8) FROM t_flt x JOIN t_int y ON x.id >= 208 + y.id * 0 AND x.id <= 208 AND y.id <= 2 GROUP BY y.a');

-- rescanned: a grouped aggregate under a nested loop's inner side
SELECT gj_compare('SELECT o.id, (SELECT count(*) FROM (SELECT x.a, count(*) FROM t_int x JOIN t_int y ON x.b < y.b AND x.b > o.id GROUP BY x.a) g) FROM (VALUES (1), (5), (40)) o(id)') AS rescanned;

-- grouping expressions of the outer side and columns of both sides run inside; grouping sets are declined
SELECT gj_agg_plan('SELECT x.a % 3, count(*) FROM t_int x JOIN t_int y ON x.b < y.b GROUP BY x.a % 3') AS group_expr;
SELECT gj_agg_plan('SELECT x.a, y.a, count(*) FROM t_int x JOIN t_int y ON x.b < y.b GROUP BY x.a, y.a') AS both_sides_group;
SELECT gj_agg_plan('SELECT x.a, count(*) FROM t_int x JOIN t_int y ON x.b < y.b GROUP BY ROLLUP (x.a)') AS rollup;

-- float sums start from the first value, as PostgreSQL's: a sum of -0.0 is -0
CREATE TABLE t_negzero AS SELECT g AS a, '-0'::float8 AS z FROM generate_series(1, 50) g;
ANALYZE t_negzero;
SELECT gj_compare('SELECT sum(y.z), count(*) FROM t_negzero x JOIN t_negzero y ON x.a < y.a') AS neg_zero_sum;
SELECT gj_compare('SELECT x.a % 3 AS g, sum(y.z) FROM t_negzero x JOIN t_negzero y ON x.a < y.a GROUP BY x.a % 3') AS neg_zero_groups;
SELECT gj_compare('SELECT x.a, sum(y.z) FROM t_negzero x JOIN t_negzero y ON x.a < y.a GROUP BY x.a') AS neg_zero_per_group;

-- one grouping key, grouped by its device value (gpujoin_agg_groups.c,
-- side_number_by_value): columns of every type it takes, NULLs, computed
-- float keys of -Infinity, Infinity and NaN (0 * Infinity, the sign bit
-- set), -0.0 and 0.0, float4 NaN and -0.0; a computed key that overflows
-- on rows that join nothing (deferred: numbered by the TupleHashTable
-- instead), and on rows that do (PostgreSQL's error); int2 and date
-- argument columns (the stored columns, gpujoin_agg_exec.c)
CREATE TABLE t_byval AS
SELECT g AS id, (g % 3 = 0) AS b, (g % 5)::int2 AS s, (g % 7)::int8 * 1000000000000 AS l,
       (g % 4)::oid AS o, date '2020-01-01' + g % 6 AS d,
       timestamp '2020-01-01' + (g % 4) * interval '1 hour' AS ts,
       timestamptz '2020-01-01 00:00+00' + (g % 3) * interval '1 day' AS tz,
       CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 3 - 1)::float8 END AS f,
       CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 3 - 1)::float4 END AS f4,
       CASE WHEN g % 13 = 0 THEN NULL ELSE g % 9 END AS n,
       CASE WHEN g % 50 = 0 THEN 2147483647 ELSE g END AS big,
       (ARRAY['NaN', '-0', '0', NULL, '-Infinity'])[g % 5 + 1]::float4 AS f4n
FROM generate_series(1, 400) g;
ANALYZE t_byval;
SELECT q, gj_compare(sql) FROM (VALUES
 ('bool', 'SELECT x.b, count(*), sum(y.id) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.b'),
 ('int2', 'SELECT x.s, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.s'),
 ('int8', 'SELECT x.l, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.l'),
 ('oid', 'SELECT x.o, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.o'),
 ('date', 'SELECT x.d, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.d'),
 ('timestamp', 'SELECT x.ts, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.ts'),
 ('timestamptz', 'SELECT x.tz, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.tz'),
 ('int4 nulls', 'SELECT x.n, count(*), sum(y.n) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.n'),
 ('int4 inner', 'SELECT y.n % 4, count(*) FROM t_byval x JOIN t_byval y ON x.id = y.id + 1 GROUP BY y.n % 4'),
 ('float8 inf nan', 'SELECT x.f * ''Infinity''::float8, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY 1'),
 ('float8 zeros', 'SELECT x.f * 0 + 0, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.f * 0'),
 ('float4', 'SELECT x.f4 + 0, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.f4'),
 ('float4 nan zeros', 'SELECT x.f4n + 0, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.f4n'),
 ('bool expr', 'SELECT x.id % 3 = 0, count(*), sum(y.s) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY 1'),
 ('int2 date args', 'SELECT count(*), sum(x.s), sum(x.s * y.s), min(x.d), max(x.d - y.d) FROM t_byval x JOIN t_byval y ON x.id < y.id'),
 ('deferred', 'SELECT x.big + 1, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id AND x.big < y.id::int8 * 1000 GROUP BY x.big + 1')
) v(q, sql);
SELECT gj_compare_error('SELECT x.big + 1, count(*) FROM t_byval x JOIN t_byval y ON x.id < y.id GROUP BY x.big + 1');
-- sum(float4) rounds to float4 at every addition in PostgreSQL: left to it
SELECT gj_agg_plan('SELECT sum(x.f4) FROM t_flt x JOIN t_flt y ON x.f8 < y.f8') AS sum_float4;

-- a device fault in the aggregate fast path ends the query cleanly
SELECT gj_fault('step_error', 'SELECT count(*) AS n FROM t_int x JOIN t_int y ON x.b < y.b') AS agg_fast_path_fault;
RESET gpujoin.debug_fault;
SELECT gj_compare('SELECT count(*) FROM t_int x JOIN t_int y ON x.b < y.b') AS after_fault;

-- the groups count against gpujoin.max_host_memory with the inputs; inputs
-- estimated over it are not offered to the aggregate node when grouped (its
-- groups' rows must stay in memory: no spill), and PostgreSQL's Agg runs
-- over a GpuJoin that spills (spill.sql)
CREATE TABLE t_aggmem AS SELECT g AS a FROM generate_series(1, 20000) g;
ANALYZE t_aggmem;
SET gpujoin.max_host_memory = '1MB';
\set VERBOSITY terse
SELECT gj_compare('SELECT x.a, count(*) FROM t_aggmem x JOIN t_aggmem y ON x.a = y.a + 1 GROUP BY x.a') AS many_groups;
\set VERBOSITY default
RESET gpujoin.max_host_memory;
SELECT gj_compare('SELECT x.a, count(*) FROM t_aggmem x JOIN t_aggmem y ON x.a = y.a + 1 GROUP BY x.a') AS many_groups;
