--
-- agg_device: aggregates over a join reduced inside GpuJoin give PostgreSQL's
-- results with every join algorithm (nested loop, sort-merge with and
-- without extra device quals, hash with and without them), for arguments of
-- the outer side, of the inner side and of both sides (evaluated per pair),
-- with no grouping, a grouping column or a grouping expression of one side
-- or keys of both sides (in a dense array, or a host hash table past
-- gpujoin.max_dense_groups),
-- over NULLs, duplicates, -0.0, NaN and infinities, empty inputs and joins
-- with no pair; overflow raises PostgreSQL's error only where a joined pair
-- (or a joined row's group) overflows; HAVING filters the groups; and the
-- same holds over many tiles and steps.
--
-- ad_check(algorithm, query) says where the aggregates ran with
-- gpujoin.algorithm set: "in GpuJoin" (the plan shows GPU Aggregates) or
-- "Agg above" (PostgreSQL's Agg over the join), and the algorithm the
-- GpuJoin node got; then runs the query as gj_compare does (GpuJoin
-- against native, as multisets).
-- Float minima and maxima print as x + 0: which of -0.0 and 0.0 a tie
-- returns may differ (README); float sums here are of multiples of 1/64, so
-- exact in any order.  PostgreSQL's own aggregation over the join is
-- disabled (enable_hashagg, enable_sort), so that on these small tables its
-- cost, fuzzily equal to the node's, does not win: "Agg above" is then a
-- query the node declines.
--
-- The plans must be the same whichever backend runs the suite: the test
-- runner sets the cuda backend's planning costs to the cpu backend's
-- (test/run_tests.sh), every one of them.
SET client_min_messages = warning;
SET enable_hashagg = off;
SET enable_sort = off;

CREATE OR REPLACE FUNCTION gj_agg_plan(query text) RETURNS text LANGUAGE sql AS $$
    SELECT gj_plan_lines(query, '^\s*(Aggregate|HashAggregate|GroupAggregate|MixedAggregate|Custom Scan|Group Key|GPU Aggregates|Algorithm)')
$$;

-- Where the aggregates of a query run, with gpujoin.algorithm set: "in
-- GpuJoin" or "Agg above", and the GpuJoin node's algorithm.
CREATE FUNCTION ad_plan(algorithm text, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    plan text;
BEGIN
    PERFORM set_config('gpujoin.algorithm', algorithm, true);
    plan := gj_plan_lines(query, '^\s*(GPU Aggregates|Algorithm):');
    RETURN CASE WHEN plan ~ 'GPU Aggregates' THEN 'in GpuJoin' ELSE 'Agg above' END || ', '
        || coalesce(substring(plan FROM 'Algorithm: ([a-z]+)'), 'no GpuJoin');
END $$;

CREATE FUNCTION ad_check(algorithm text, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    plan text := ad_plan(algorithm, query);
BEGIN
    RETURN plan || ' | ' || gj_compare(query);
END $$;

-- The lines of EXPLAIN ANALYZE (with gpujoin.algorithm set) that match pattern.
CREATE FUNCTION ad_analyze(algorithm text, query text, pattern text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('gpujoin.algorithm', algorithm, true);
    RETURN gj_plan_lines(query, pattern, ', ', 'COSTS OFF, ANALYZE, TIMING OFF, SUMMARY OFF');
END $$;

-- The same, for a query that must fail as the native plan does (or both
-- succeed: gj_compare_error does not compare their rows).
CREATE FUNCTION ad_check_error(algorithm text, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    plan text := ad_plan(algorithm, query);
BEGIN
    RETURN plan || ' | ' || gj_compare_error(query);
END $$;

--
-- Two tables of every argument type: NULLs in each column, duplicated keys
-- and duplicated rows; f4 and f8 hold NaN, +-Infinity, -0.0 and 0.0 in a few
-- rows, e (a float8 for sums) only -0.0 and 0.0; other floats are multiples
-- of 1/4 or 1/8.  k is the equality key (keys 20-24 only in ad_s), z a small
-- divisor with zeros.
--
CREATE TABLE ad_r (id int, a int2, b int4, c int8, f4 float4, f8 float8, e float8, d date, k int4, z int4);
INSERT INTO ad_r
SELECT g,
       CASE WHEN g % 11 = 0 THEN NULL ELSE ((g * 7) % 23 - 11)::int2 END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 5) % 41 - 20 END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE ((g * 3) % 29 - 14) * 100000000000 END,
       CASE WHEN g % 19 = 0 THEN NULL
            ELSE coalesce((ARRAY['NaN', 'Infinity', '-Infinity', '-0', '0', 'NaN'])[g]::float4,
                          ((g * 11) % 37 - 18) / 4.0) END,
       CASE WHEN g % 23 = 0 THEN NULL
            ELSE coalesce((ARRAY['0', '-0', '-Infinity', 'NaN', 'Infinity'])[g - 5]::float8,
                          ((g * 13) % 43 - 21) / 8.0) END,
       CASE WHEN g % 6 = 0 THEN NULL WHEN g % 10 = 3 THEN '-0' ELSE ((g * 17) % 53 - 26) / 8.0 END,
       CASE WHEN g % 14 = 0 THEN NULL ELSE date '2024-01-01' + (g * 3) % 50 END,
       CASE WHEN g % 16 = 0 THEN NULL ELSE g % 20 END,
       CASE WHEN g % 9 = 0 THEN NULL ELSE g % 5 END
FROM generate_series(1, 150) g;

CREATE TABLE ad_s (LIKE ad_r);
INSERT INTO ad_s
SELECT g,
       CASE WHEN g % 7 = 0 THEN NULL ELSE ((g * 5) % 19 - 9)::int2 END,
       CASE WHEN g % 12 = 0 THEN NULL ELSE (g * 3) % 37 - 18 END,
       CASE WHEN g % 10 = 0 THEN NULL ELSE ((g * 7) % 31 - 15) * 100000000000 END,
       CASE WHEN g % 17 = 0 THEN NULL
            ELSE coalesce((ARRAY['-0', 'NaN', '0', 'Infinity', '-Infinity'])[g - 30]::float4,
                          ((g * 7) % 29 - 14) / 4.0) END,
       CASE WHEN g % 13 = 0 THEN NULL
            ELSE coalesce((ARRAY['Infinity', '-0', 'NaN', '0', '-Infinity'])[g - 60]::float8,
                          ((g * 5) % 41 - 20) / 8.0) END,
       CASE WHEN g % 5 = 0 THEN NULL WHEN g % 9 = 4 THEN '-0' ELSE ((g * 11) % 47 - 23) / 8.0 END,
       CASE WHEN g % 15 = 0 THEN NULL ELSE date '2024-01-10' + (g * 7) % 40 END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g % 25 END,
       CASE WHEN g % 8 = 0 THEN NULL ELSE g % 4 END
FROM generate_series(1, 120) g;
INSERT INTO ad_s SELECT * FROM ad_s WHERE id <= 10 OR id BETWEEN 60 AND 62;

CREATE TABLE ad_empty (LIKE ad_r);
ANALYZE ad_r, ad_s, ad_empty;

-- The join conditions, each with the algorithm it is run with.
CREATE TABLE ad_cond (id int, algorithm text, cond text);
INSERT INTO ad_cond VALUES
 (1, 'auto', 'x.a + y.b > 10'),
 (2, 'nestloop', 'x.b < y.b'),
 (3, 'auto', 'x.b < y.b'),
 (4, 'auto', 'x.b < y.b AND x.a <> y.a'),
 (5, 'auto', 'x.k = y.k'),
 (6, 'auto', 'x.k = y.k AND x.b < y.b');

-- The aggregates and groupings, over "FROM ad_r x JOIN ad_s y ON <cond>".
CREATE TABLE ad_sel (id int, sel text, tail text DEFAULT '');
INSERT INTO ad_sel (id, sel) VALUES
 -- counts
 (1, 'count(*), count(x.a), count(y.f8), count(x.d), count(x.a + y.a), count(x.f4 * y.f8)'),
 -- outer arguments of every integer type
 (2, 'sum(x.a), sum(x.b), sum(x.c), avg(x.a), avg(x.b), avg(x.c), min(x.a), max(x.a), min(x.b), max(x.b), min(x.c), max(x.c)'),
 -- inner arguments
 (3, 'sum(y.a), sum(y.b), sum(y.c), avg(y.a), avg(y.b), avg(y.c), min(y.a), max(y.a), min(y.b), max(y.b), min(y.c), max(y.c)'),
 -- floats and dates of either side
 (4, 'min(x.f4) + 0, max(x.f4) + 0, min(y.f4) + 0, max(y.f4) + 0, min(x.f8) + 0, max(y.f8) + 0, sum(x.f8), sum(y.f8), sum(x.e), sum(y.e), min(x.e) + 0, max(y.e) + 0, min(x.d), max(x.d), min(y.d), max(y.d)'),
 -- arguments over both sides, one per pair
 (5, 'sum(x.a * y.b), sum(x.b + y.b), sum(x.c - y.c), avg(x.a - y.b), avg(x.c + y.c), min(x.b * y.a), max(x.a + y.a), min(y.c - x.c), max(x.c + y.b)'),
 (6, 'max(x.f8 + y.f8) + 0, min(x.f8 - y.f8) + 0, sum(x.f8 * y.f8), sum(x.e * y.e), sum(x.e - y.e), sum(x.f4 + y.e), min(x.e * y.f4) + 0, max(x.f4 - y.f4) + 0, min(x.e + y.e) + 0, min(y.d - x.d), max(x.d - y.d), max(x.d + y.b), min(y.d - x.b)'),
 -- mixed with constants and one side's expressions
 (7, 'sum(x.b * 2 + y.b), count(*) + 1, sum(x.c) * 2, max(-x.a), min(abs(y.b)), sum(x.a % 3), avg(x.b * x.b)'),
 -- aggregates PostgreSQL keeps (avg of floats, sum(float4), DISTINCT, FILTER)
 (8, 'avg(x.f8 + y.f8), sum(x.f4), count(DISTINCT x.a + y.a), count(*) FILTER (WHERE x.a > y.a)');
INSERT INTO ad_sel VALUES
 -- HAVING without groups
 (9, 'count(*), sum(x.b * y.b)', ' HAVING count(*) > 10'),
 -- grouped: a plain outer column with NULLs
 (10, 'x.a, count(*), sum(y.b), avg(y.c), min(y.f8) + 0, max(x.b * y.b), count(x.f4 + y.f4), sum(x.e + y.e)', ' GROUP BY x.a'),
 -- outer grouping expressions
 (11, 'x.a % 3, count(*), sum(x.b + y.b), avg(y.a), max(y.d), min(x.c - y.c)', ' GROUP BY x.a % 3'),
 (12, 'x.d + 1, count(*), min(y.d - x.d), max(y.d - x.d), sum(y.a), avg(x.b - y.b)', ' GROUP BY x.d + 1'),
 (13, 'x.f8 * 2 + 0, count(*), sum(y.b), max(x.f8 + y.e) + 0, min(x.f8 * y.e) + 0, sum(y.e), sum(x.f8)', ' GROUP BY x.f8 * 2'),
 (14, 'x.f4 * 2 + 0, count(*), sum(x.a * y.a), min(y.f4) + 0, max(x.f4 - y.e) + 0', ' GROUP BY x.f4 * 2'),
 (15, 'x.a % 3, x.k, count(*), sum(y.c)', ' GROUP BY x.a % 3, x.k'),
 (16, '-x.e + 0, count(*), min(y.f8 - x.e) + 0, sum(x.e * y.e)', ' GROUP BY -x.e'),
 -- grouped on the inner table's expression: that side becomes the outer input
 (17, 'y.b % 4, count(*), sum(x.a), max(x.e * y.e) + 0, sum(x.e * y.e)', ' GROUP BY y.b % 4'),
 -- HAVING on a group
 (18, 'x.k % 5, count(*), sum(y.b)', ' GROUP BY x.k % 5 HAVING count(*) > 40 OR sum(y.b) < 0'),
 (19, 'x.a, sum(x.b * y.b)', ' GROUP BY x.a HAVING min(y.a + x.a) > -5'),
 -- HAVING that only an empty join passes
 (20, 'count(*), sum(x.b * y.b), max(x.e - y.e)', ' HAVING count(*) < 1');

-- how each condition is planned
SELECT c.id, c.algorithm, c.cond,
       ad_check(c.algorithm, format('SELECT count(*), sum(x.a * y.b) FROM ad_r x JOIN ad_s y ON %s', c.cond)) AS plan
FROM ad_cond c ORDER BY c.id;
SELECT gj_agg_plan('SELECT x.a % 3, count(*), sum(x.b + y.b) FROM ad_r x JOIN ad_s y ON x.k = y.k AND x.b < y.b GROUP BY x.a % 3') AS outer_group_expr;
SELECT gj_agg_plan('SELECT y.b % 4, count(*), sum(x.a) FROM ad_r x JOIN ad_s y ON x.b < y.b GROUP BY y.b % 4') AS inner_group_expr;

-- every aggregate list under every condition
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_r x JOIN ad_s y ON %s%s', s.sel, c.cond, s.tail)) AS result
FROM ad_cond c, ad_sel s ORDER BY c.id, s.id;

-- every pair reduced in the backend, whatever the algorithm and the arguments
SELECT c.id AS cond, substring(p FROM 'Algorithm: ([a-z]+)') AS algorithm,
       substring(p FROM 'Pairs Aggregated: (\d+)') AS pairs,
       substring(p FROM 'Pairs Aggregated: (\d+)') = substring(p FROM 'Pairs Reduced in Backend: (\d+)') AS all_in_backend
FROM ad_cond c,
     ad_analyze(c.algorithm, format('SELECT x.a %% 3, count(*), sum(x.b * y.b), min(y.d - x.d), max(x.e + y.f4) FROM ad_r x JOIN ad_s y ON %s GROUP BY x.a %% 3', c.cond),
                '^\s*(Algorithm|Pairs Aggregated|Pairs Reduced in Backend):') p
ORDER BY c.id;

--
-- Empty inputs and joins with no pair: no group, or one row of count 0 and
-- NULL otherwise.
--
CREATE TABLE ad_far AS SELECT id, a, b, c, f4, f8, e, d, k + 1000 AS k, z FROM ad_s;
ANALYZE ad_far;
CREATE TABLE ad_cond_none (id int, algorithm text, cond text, inner_table text);
INSERT INTO ad_cond_none VALUES
 (1, 'auto', 'x.a + y.b > 1000', 'ad_s'),
 (2, 'auto', 'x.b + 100 < y.b', 'ad_s'),
 (3, 'auto', 'x.b < y.b AND x.a > y.a + 100', 'ad_s'),
 (4, 'auto', 'x.k = y.k', 'ad_far'),
 (5, 'auto', 'x.k = y.k AND x.b > y.b + 100', 'ad_s');
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_r x JOIN ad_empty y ON %s%s', s.sel, c.cond, s.tail)) AS inner_empty,
       ad_check(c.algorithm, format('SELECT %s FROM ad_empty x JOIN ad_s y ON %s%s', s.sel, c.cond, s.tail)) AS outer_empty
FROM ad_cond c, ad_sel s WHERE s.id IN (1, 2, 5, 6, 9, 10, 11, 17, 20) ORDER BY c.id, s.id;
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_r x JOIN %s y ON %s%s', s.sel, c.inner_table, c.cond, s.tail)) AS no_pair
FROM ad_cond_none c, ad_sel s WHERE s.id IN (1, 2, 5, 6, 9, 10, 11, 17, 20) ORDER BY c.id, s.id;
-- the values themselves
BEGIN;
SELECT gj_force(true);
SELECT count(*), count(x.a + y.a), sum(x.a * y.b), avg(x.b), min(y.d - x.d), max(x.e + y.e) FROM ad_r x JOIN ad_s y ON x.b < y.b - 100;
SELECT count(*), sum(x.a * y.b), max(x.f8 + y.f8) FROM ad_empty x JOIN ad_s y ON x.a + y.b > 10;
SELECT x.a % 3, count(*), sum(x.a * y.b) FROM ad_r x JOIN ad_far y ON x.k = y.k GROUP BY x.a % 3;
SELECT gj_force(false);
SELECT count(*), count(x.a + y.a), sum(x.a * y.b), avg(x.b), min(y.d - x.d), max(x.e + y.e) FROM ad_r x JOIN ad_s y ON x.b < y.b - 100;
COMMIT;

--
-- Overflow: an argument that overflows on a joined pair raises PostgreSQL's
-- error; one that overflows only on rows or pairs that do not join raises
-- none.  Row 1 of each table (key 1) joins and overflows; rows of keys 2, 4
-- and NULL overflow and join nothing.  Each join is run with every algorithm
-- (sortmerge takes the equality as a range).
--
CREATE TABLE ad_ov_r (id int, k int4, a int2, b int4, c int8, f8 float8, z int4);
INSERT INTO ad_ov_r VALUES
 (1, 1, 300, 100000, 9000000000000000000, 1e200, 0),
 (2, 2, 300, 100000, 9000000000000000000, 1e200, 0),
 (3, 3, 5, 7, 11, 1.5, 2),
 (4, 3, -6, -8, -12, -2.5, 3),
 (5, NULL, 300, 100000, 9000000000000000000, 1e200, 0),
 (6, 5, 1, 2, 3, 4, 5);
CREATE TABLE ad_ov_s (LIKE ad_ov_r);
INSERT INTO ad_ov_s VALUES
 (1, 1, 300, 100000, 9000000000000000000, 1e200, 0),
 (2, 3, 4, 5, 6, 7.25, 8),
 (3, 4, 300, 100000, 9000000000000000000, 1e200, 0),
 (4, 3, 9, -10, 11, -12, 13),
 (5, NULL, 300, 100000, 9000000000000000000, 1e200, 0),
 (6, 5, 2, 3, 4, 5, 6),
 (7, 1, 2, 3, 4, 5, 6);
ANALYZE ad_ov_r, ad_ov_s;

CREATE TABLE ad_ov_q (id int, q text);
INSERT INTO ad_ov_q VALUES
 (1, 'sum(x.b * y.b)'),
 (2, 'sum(x.a * y.a)'),
 (3, 'sum(x.c + y.c)'),
 (4, 'max(x.f8 * y.f8)'),
 (5, 'sum(x.b / y.z)'),
 (6, 'sum(x.b * 100000)'),
 (7, 'min(y.a * 200::int2)'),
 (8, 'count(*), sum(x.c * 2)'),
 (9, 'avg(x.b + y.b * 30000)');
-- joined pairs overflow: the native error
SELECT a.algorithm, q.id, ad_check_error(a.algorithm, format('SELECT %s FROM ad_ov_r x JOIN ad_ov_s y ON x.k = y.k', q.q)) AS joined
FROM (VALUES ('nestloop'), ('sortmerge'), ('hash')) a(algorithm), ad_ov_q q ORDER BY 1, 2;
SELECT a.algorithm, q.id, ad_check_error(a.algorithm, format('SELECT x.k, %s FROM ad_ov_r x JOIN ad_ov_s y ON x.k = y.k GROUP BY x.k', q.q)) AS joined_grouped
FROM (VALUES ('nestloop'), ('sortmerge'), ('hash')) a(algorithm), ad_ov_q q ORDER BY 1, 2;
-- only pairs that do not join overflow: no error
SELECT a.algorithm, q.id, ad_check(a.algorithm, format('SELECT %s FROM ad_ov_r x JOIN ad_ov_s y ON x.k = y.k AND x.id > 1', q.q)) AS not_joined
FROM (VALUES ('nestloop'), ('sortmerge'), ('hash')) a(algorithm), ad_ov_q q ORDER BY 1, 2;
SELECT a.algorithm, q.id, ad_check(a.algorithm, format('SELECT x.k %% 2, %s FROM ad_ov_r x JOIN ad_ov_s y ON x.k = y.k AND x.id > 1 GROUP BY x.k %% 2', q.q)) AS not_joined_grouped
FROM (VALUES ('nestloop'), ('sortmerge'), ('hash')) a(algorithm), ad_ov_q q ORDER BY 1, 2;
BEGIN;
SELECT gj_force(true);
SET LOCAL gpujoin.algorithm = nestloop;
SELECT sum(x.b * y.b), sum(x.b * 100000), min(y.a * 200::int2), count(*) FROM ad_ov_r x JOIN ad_ov_s y ON x.k = y.k AND x.id > 1;
COMMIT;

-- sum(int8) beyond the int8 range: numeric, exact; sum(int4) past the int4 range: int8
SELECT a.algorithm,
       ad_check(a.algorithm, 'SELECT sum(x.c), avg(x.c), sum(y.c), sum(x.c - y.c), sum(x.b + y.b), sum(x.b * 20000) FROM ad_ov_r x JOIN ad_ov_s y ON x.k = y.k AND x.k <> 3') AS huge_sums
FROM (VALUES ('nestloop'), ('sortmerge'), ('hash')) a(algorithm) ORDER BY 1;
BEGIN;
SELECT gj_force(true);
SELECT sum(x.c), avg(x.c), sum(y.c), sum(x.c - y.c), sum(x.b + y.b), sum(x.b * 20000) FROM ad_ov_r x JOIN ad_ov_s y ON x.k = y.k AND x.k <> 3;
COMMIT;

-- The extremes: int2/int8 minima and maxima, infinite and extreme dates,
-- float underflow, NaN, -0.0; errors where a joined pair raises one
-- (negation and abs of the minimum, infinite date differences, underflow,
-- division by zero), the values otherwise.
CREATE TABLE ad_edge_r (id int, k int4, a int2, c int8, f4 float4, f8 float8, d date);
INSERT INTO ad_edge_r VALUES
 (1, 1, -32768, -9223372036854775808, 1e-30, 1e-10, 'infinity'),
 (2, 2, 5, 9223372036854775807, 1e-40, 1e-320, '-infinity'),
 (3, 3, 7, 3, 0.5, 0.5, '2024-01-01'),
 (4, 4, 32767, 1, 'NaN', 'NaN', '5874897-12-31'),
 (5, 5, 0, 0, '-0', '-0', '4713-01-01 BC'),
 (6, 6, 1, -1, '-Infinity', 'Infinity', '2000-02-29');
CREATE TABLE ad_edge_s AS SELECT * FROM ad_edge_r;
INSERT INTO ad_edge_s VALUES (7, 3, 1, 1, 1e-30, 1e-300, '2024-02-01'), (8, 6, -1, 2, 0, '-0', '2000-03-01');
ANALYZE ad_edge_r, ad_edge_s;
CREATE TABLE ad_edge_q (id int, q text);
INSERT INTO ad_edge_q VALUES
 (1, 'min(x.c), max(y.c), avg(x.c), sum(x.c), min(x.a), max(y.a), avg(x.a), sum(y.a)'),
 (2, 'min(x.d), max(y.d), count(x.d), min(y.d), max(x.d)'),
 (3, 'min(x.f8) + 0, max(y.f8) + 0, min(x.f4) + 0, max(y.f4) + 0, count(x.f8 + y.f4)'),
 (4, 'x.a, count(*), max(y.c), min(x.d)'),
 (5, 'sum(x.f8 * y.f8)'),
 (6, 'min(x.f4 * y.f4)'),
 (7, 'min(y.d - x.d)'),
 (8, 'max(x.d + y.a)'),
 (9, 'sum(-x.c)'),
 (10, 'min(abs(x.a))'),
 (11, 'max(x.c + y.c)'),
 (12, 'sum(x.f8 / y.f8)'),
 (13, 'min(x.a / y.a)'),
 (14, 'min(x.c % y.c)');
SELECT q.id, a.algorithm,
       CASE WHEN q.id <= 4
            THEN ad_check(a.algorithm, format('SELECT %s FROM ad_edge_r x JOIN ad_edge_s y ON x.k = y.k%s', q.q,
                                              CASE WHEN q.id = 4 THEN ' GROUP BY x.a' ELSE '' END))
            ELSE ad_check_error(a.algorithm, format('SELECT %s FROM ad_edge_r x JOIN ad_edge_s y ON x.k = y.k', q.q)) END AS result
FROM ad_edge_q q, (VALUES ('nestloop'), ('sortmerge'), ('hash')) a(algorithm) ORDER BY 1, 2;

-- sum(int4) past the int8 range wraps as PostgreSQL's int4_sum does, and avg
-- divides the wrapped sum (int4_avg_accum): 2^32 + 2^17 + 1 pairs of
-- 2147483647, reduced from the sorted ranges (native would take hours, so
-- the expected value is computed)
CREATE TABLE ad_wrap AS
SELECT g AS id, CASE WHEN g <= 65537 THEN 2147483647 ELSE 0 END AS b FROM generate_series(1, 131074) g;
ANALYZE ad_wrap;
SET gpujoin.algorithm = sortmerge;
SELECT gj_agg_plan('SELECT count(*), sum(y.b), avg(y.b) FROM ad_wrap x JOIN ad_wrap y ON x.b < y.b') AS wrap_plan;
BEGIN;
SELECT gj_force(true);
SELECT count(*) AS pairs, sum(y.b), avg(y.b),
       sum(y.b) = (count(*) * 2147483647::numeric + 2::numeric ^ 63) % 2::numeric ^ 64 - 2::numeric ^ 63 AS sum_wraps,
       avg(y.b) = sum(y.b)::numeric / count(*) AS avg_of_wrapped_sum
FROM ad_wrap x JOIN ad_wrap y ON x.b < y.b;
COMMIT;
RESET gpujoin.algorithm;

--
-- Grouping expressions the device cannot compute for some outer rows
-- (division by zero, int2/int4/date/float overflow): the host evaluates them
-- for those rows' joined pairs only.  Rows 41-45 of ad_ge_r fail every
-- expression and join nothing in ad_ge_s: no error.  ad_ge_s2 adds keys
-- 100-102 that join rows 41 and 43: the native error.  Row 46 (infinite
-- date, NULL divisor, infinite float) joins.
--
CREATE TABLE ad_ge_r (id int, k int4, a int2, b int4, z int4, d date, f8 float8);
INSERT INTO ad_ge_r
SELECT g, g % 8, (g * 3)::int2, g - 20, g % 4 + 1, date '2024-03-01' + g % 5, g / 4.0
FROM generate_series(1, 40) g;
INSERT INTO ad_ge_r VALUES
 (41, 100, 32767, 2147483647, 0, '5874897-12-31', 1e300),
 (42, NULL, -32768, 100000, 0, '5874897-12-31', -1e300),
 (43, 101, 20000, 2147483600, 0, '5874897-12-31', 1e301),
 (44, 1000, 32767, 2147483647, 0, '5874897-12-31', 1e300),
 (45, -5, 30000, 100000, 0, '5874897-12-31', -1e308),
 (46, 3, 7, 8, NULL, 'infinity', 'Infinity');
CREATE TABLE ad_ge_s AS
SELECT g AS id, g % 9 AS k, g * 2 - 25 AS b FROM generate_series(1, 30) g;
CREATE TABLE ad_ge_s2 AS SELECT * FROM ad_ge_s;
INSERT INTO ad_ge_s2 VALUES (31, 100, 5), (32, 101, 7), (33, 102, 9);
ANALYZE ad_ge_r, ad_ge_s, ad_ge_s2;

CREATE TABLE ad_ge_cond (id int, algorithm text, cond text);
INSERT INTO ad_ge_cond VALUES
 (1, 'nestloop', 'x.k = y.k'),
 (2, 'auto', 'x.k + y.k = 2 * y.k'),
 (3, 'auto', 'x.k < y.k AND y.k < x.k + 3'),
 (4, 'auto', 'x.k < y.k AND y.k < x.k + 3 AND x.b <> y.b'),
 (5, 'auto', 'x.k = y.k'),
 (6, 'auto', 'x.k = y.k AND x.id <> y.id');
CREATE TABLE ad_ge_group (id int, g text);
INSERT INTO ad_ge_group VALUES
 (1, '100 / x.z'),
 (2, 'x.b * 100000'),
 (3, 'x.a * 2::int2'),
 (4, 'x.b + 2147483600'),
 (5, 'x.d + 1'),
 (6, 'x.f8 * 1e10::float8'),
 (7, 'x.k, 100 / x.z'),
 (8, 'x.b % 7, x.a * 2::int2');
SELECT c.id AS cond, g.id AS grp, c.algorithm,
       ad_check(c.algorithm, format('SELECT %s, count(*), sum(y.b), min(x.id + y.id) FROM ad_ge_r x JOIN ad_ge_s y ON %s GROUP BY %s', g.g, c.cond, g.g)) AS never_joined
FROM ad_ge_cond c, ad_ge_group g ORDER BY c.id, g.id;
SELECT c.id AS cond, g.id AS grp,
       ad_check_error(c.algorithm, format('SELECT %s, count(*), sum(y.b), min(x.id + y.id) FROM ad_ge_r x JOIN ad_ge_s2 y ON %s GROUP BY %s', g.g, c.cond, g.g)) AS joined
FROM ad_ge_cond c, ad_ge_group g ORDER BY c.id, g.id;
-- the grouped table second in FROM: it is the outer input all the same
SELECT c.id AS cond, g.id AS grp,
       ad_check(c.algorithm, format('SELECT %s, count(*), sum(y.b) FROM ad_ge_s y JOIN ad_ge_r x ON %s GROUP BY %s', g.g, c.cond, g.g)) AS never_joined,
       ad_check_error(c.algorithm, format('SELECT %s, count(*), sum(y.b) FROM ad_ge_s2 y JOIN ad_ge_r x ON %s GROUP BY %s', g.g, c.cond, g.g)) AS joined
FROM ad_ge_cond c, ad_ge_group g WHERE c.id IN (1, 3, 5) AND g.id IN (1, 5, 7) ORDER BY c.id, g.id;
-- the groups themselves: rows 41-45 in none, NULL and infinity groups
BEGIN;
SELECT gj_force(true);
SELECT 100 / x.z AS g, x.d + 1 AS d, count(*), sum(y.b) FROM ad_ge_r x JOIN ad_ge_s y ON x.k = y.k GROUP BY 100 / x.z, x.d + 1 ORDER BY 1, 2;
SELECT gj_force(false);
SELECT 100 / x.z AS g, x.d + 1 AS d, count(*), sum(y.b) FROM ad_ge_r x JOIN ad_ge_s y ON x.k = y.k GROUP BY 100 / x.z, x.d + 1 ORDER BY 1, 2;
COMMIT;

--
-- Many tiles and steps: a 1kB device budget over 800 x 800 rows, every
-- algorithm, arguments of both sides, grouping expressions; rows 1201-1203
-- fail the grouping expressions and one-side arguments and join nothing in
-- ad_tile_in (ad_tile_in2 adds rows that join them under each condition).
--
CREATE TABLE ad_tile (id int, k int4, b int4, z int4, e float8, d date);
INSERT INTO ad_tile
SELECT g, (g * 7919) % 300, (g * 104729) % 997 - 498,
       CASE WHEN g % 37 = 0 THEN NULL ELSE 1 + g % 7 END,
       CASE WHEN g % 41 = 0 THEN NULL ELSE ((g * 31) % 257 - 128) / 8.0 END,
       date '2024-01-01' + g % 100
FROM generate_series(1, 800) g;
INSERT INTO ad_tile VALUES
 (1201, 5000, 2147483647, 0, 1e308, '5874897-12-31'),
 (1202, 5010, -2147483648, 0, -1e308, '5874897-12-31'),
 (1203, NULL, 2147483647, 0, 1e308, '5874897-12-31');
CREATE TABLE ad_tile_in AS SELECT * FROM ad_tile WHERE id <= 800;
CREATE TABLE ad_tile_in2 AS SELECT * FROM ad_tile_in;
INSERT INTO ad_tile_in2 VALUES
 (1204, 4999, 1, 1, 1, '2024-01-01'), (1205, 5000, 1, 1, 1, '2024-01-01'),
 (1206, 5001, 1, 1, 1, '2024-01-01'), (1207, 5010, 0, 1, 1, '2024-01-01');
ANALYZE ad_tile, ad_tile_in, ad_tile_in2;

CREATE TABLE ad_tile_cond (id int, algorithm text, cond text);
INSERT INTO ad_tile_cond VALUES
 (1, 'auto', 'x.k + y.k = 2 * y.k + 1'),
 (2, 'nestloop', 'x.k = y.k'),
 (3, 'auto', 'x.k < y.k AND y.k < x.k + 3'),
 (4, 'auto', 'x.k < y.k AND y.k < x.k + 3 AND x.b <> y.b'),
 (5, 'auto', 'x.k = y.k'),
 (6, 'auto', 'x.k = y.k AND x.b < y.b');
CREATE TABLE ad_tile_sel (id int, sel text, tail text);
INSERT INTO ad_tile_sel VALUES
 (1, 'count(*), sum(x.b * y.b), avg(x.b - y.b), min(y.e - x.e) + 0, max(x.d + y.z), count(x.z + y.z), sum(x.e * y.e)', ''),
 (2, 'sum(x.b * 2), sum(y.b), max(x.e * 2) + 0, min(x.d + 1), avg(x.b)', ''),
 (3, 'x.b % 7, count(*), sum(x.b * y.b), max(x.e * y.e) + 0, min(y.d - x.d)', ' GROUP BY x.b % 7'),
 (4, '100 / x.z, count(*), sum(y.b), avg(x.b + y.b)', ' GROUP BY 100 / x.z'),
 (5, 'x.d + 1, x.e * 2 + 0, count(*), sum(y.b)', ' GROUP BY x.d + 1, x.e * 2'),
 (6, 'x.b * 1000, count(*), sum(x.z * y.z)', ' GROUP BY x.b * 1000 HAVING count(*) > 2');
SET gpujoin.device_memory = '1kB';
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_tile x JOIN ad_tile_in y ON %s%s', s.sel, c.cond, s.tail)) AS many_tiles
FROM ad_tile_cond c, ad_tile_sel s ORDER BY c.id, s.id;
SELECT c.id AS cond, s.id AS sel,
       ad_check_error(c.algorithm, format('SELECT %s FROM ad_tile x JOIN ad_tile_in2 y ON %s%s', s.sel, c.cond, s.tail)) AS many_tiles_joined
FROM ad_tile_cond c, ad_tile_sel s WHERE s.id IN (2, 4, 5, 6) ORDER BY c.id, s.id;
-- the tiles and steps themselves
SELECT c.id AS cond, substring(p FROM 'Algorithm: ([a-z]+)') AS algorithm,
       substring(p FROM 'Tiles Run: (\d+)')::int > 10 AS many_tiles,
       substring(p FROM 'Steps: (\d+)')::int > 10 AS many_steps
FROM ad_tile_cond c,
     ad_analyze(c.algorithm, format('SELECT x.b %% 7, count(*), sum(x.b * y.b) FROM ad_tile x JOIN ad_tile_in y ON %s GROUP BY x.b %% 7', c.cond),
                '^\s*(Algorithm|Tiles Run|Steps):') p
ORDER BY c.id;
-- and the main matrix's groupings over many tiles
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_r x JOIN ad_s y ON %s%s', s.sel, c.cond, s.tail)) AS many_tiles
FROM ad_cond c, ad_sel s WHERE s.id IN (1, 5, 6, 11, 12, 13, 17, 18) ORDER BY c.id, s.id;
RESET gpujoin.device_memory;

--
-- Keys with no exact device value (a numeric no int64 holds: 1e20) in a
-- condition the device still decides for their pairs (x.b > y.b OR x.n =
-- y.n is true whatever x.n = y.n is): the host evaluates every pair of
-- such a row after the last step, so the backend must not reduce them too.
--
CREATE TABLE ad_inexact_r (id int, k int4, b int4, n numeric);
INSERT INTO ad_inexact_r SELECT g, g % 5, g, g / 4.0 FROM generate_series(1, 20) g;
INSERT INTO ad_inexact_r VALUES (21, 1, 100, 1e20), (22, 2, -100, 1e20), (23, 3, 100, 'NaN');
CREATE TABLE ad_inexact_s (id int, k int4, b int4, n numeric);
INSERT INTO ad_inexact_s SELECT g, g % 5, g * 3 % 17, g / 8.0 FROM generate_series(1, 10) g;
ANALYZE ad_inexact_r, ad_inexact_s;
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_inexact_r x JOIN ad_inexact_s y ON %s%s', s.sel, c.cond, s.tail)) AS inexact_keys
FROM (VALUES (1, 'auto', 'x.b > y.b OR x.n = y.n'),
             (2, 'auto', 'x.b > y.b OR x.n < y.n'),
             (3, 'nestloop', 'x.k = y.k AND (x.b > y.b OR x.n = y.n)'),
             (4, 'sortmerge', 'x.k < y.k AND (x.b > y.b OR x.n = y.n)'),
             (5, 'hash', 'x.k = y.k AND (x.b > y.b OR x.n = y.n)')) c(id, algorithm, cond),
     (VALUES (1, 'count(*), sum(y.b)', ''),
             (2, 'x.k, count(*), sum(x.b + y.b)', ' GROUP BY x.k'),
             (3, 'x.b % 3, count(*)', ' GROUP BY x.b % 3')) s(id, sel, tail)
ORDER BY 1, 2;
BEGIN;
SELECT gj_force(true);
SELECT count(*), sum(y.b) FROM ad_inexact_r x JOIN ad_inexact_s y ON x.b > y.b OR x.n = y.n;
SELECT gj_force(false);
SELECT count(*), sum(y.b) FROM ad_inexact_r x JOIN ad_inexact_s y ON x.b > y.b OR x.n = y.n;
COMMIT;

--
-- GROUP BY keys of both sides: each side's keys are numbered on their own
-- and a pair is added to the pair of its rows' groups, with every join
-- algorithm; NULL, NaN and -0.0 keys on either side, an expression of one
-- side with a column of the other, several keys, HAVING, duplicated rows
-- (ad_s), columns functionally dependent on the inner side's primary key,
-- empty inputs and joins with no pair.  A key over both sides is declined.
--
CREATE TABLE ad_both_sel (id int, sel text, tail text);
INSERT INTO ad_both_sel VALUES
 (1, 'x.a, y.a, count(*), sum(x.b), sum(y.c), avg(y.b), min(x.f8) + 0, max(y.f4) + 0, count(y.d)', ' GROUP BY x.a, y.a'),
 (2, 'x.a % 3, y.z, count(*), sum(x.b * y.b), avg(x.c + y.c), min(y.d - x.d), max(x.e + y.e) + 0', ' GROUP BY x.a % 3, y.z'),
 (3, 'x.k, y.d + 1, count(*), sum(y.e), sum(x.f8), min(x.c), max(y.c), avg(x.a)', ' GROUP BY x.k, y.d + 1'),
 (4, 'x.f8 * 2 + 0, y.f4 + 0, count(*), sum(x.a + y.a), max(x.d)', ' GROUP BY x.f8 * 2, y.f4'),
 (5, 'x.z, y.z, count(*), sum(y.b)', ' GROUP BY x.z, y.z HAVING count(*) > 20 OR sum(y.b) < 0'),
 (6, 'x.a % 3, y.a % 2, x.z, count(*), avg(x.a), min(y.e) + 0', ' GROUP BY x.a % 3, y.a % 2, x.z'),
 (7, 'count(*), sum(x.b * y.b), max(y.b)', ' GROUP BY x.z, y.z'),
 (8, 'y.z, -x.e + 0, count(*), sum(x.c), min(x.b - y.b)', ' GROUP BY y.z, -x.e'),
 (9, 'x.z, y.z', ' GROUP BY x.z, y.z HAVING count(*) > 1');
SELECT gj_agg_plan('SELECT x.a, y.a, count(*), sum(x.b * y.b) FROM ad_r x JOIN ad_s y ON x.k = y.k GROUP BY x.a, y.a') AS both_sides_plan;
SELECT gj_agg_plan('SELECT x.a + y.a, count(*) FROM ad_r x JOIN ad_s y ON x.k = y.k GROUP BY x.a + y.a') AS key_over_both_sides;
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_r x JOIN ad_s y ON %s%s', s.sel, c.cond, s.tail)) AS both_sides
FROM ad_cond c, ad_both_sel s ORDER BY c.id, s.id;
-- the inner table's primary key: its other columns depend on it
CREATE TABLE ad_pk (id int PRIMARY KEY, a int2, b int4, k int4, v int);
INSERT INTO ad_pk SELECT g, g % 9 - 4, g * 3 % 37 - 18, g % 20, g * 7 % 11 FROM generate_series(1, 40) g;
ANALYZE ad_pk;
SELECT c.id AS cond,
       ad_check(c.algorithm, format('SELECT x.z, y.id, y.v, count(*), sum(x.b + y.v) FROM ad_r x JOIN ad_pk y ON %s GROUP BY x.z, y.id', c.cond)) AS dependent_columns
FROM ad_cond c WHERE c.id IN (1, 3, 5) ORDER BY c.id;
-- empty inputs and joins with no pair: no group
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_r x JOIN ad_empty y ON %s%s', s.sel, c.cond, s.tail)) AS inner_empty,
       ad_check(c.algorithm, format('SELECT %s FROM ad_empty x JOIN ad_s y ON %s%s', s.sel, c.cond, s.tail)) AS outer_empty
FROM ad_cond c, ad_both_sel s WHERE s.id IN (1, 2, 5) ORDER BY c.id, s.id;
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_r x JOIN %s y ON %s%s', s.sel, c.inner_table, c.cond, s.tail)) AS no_pair
FROM ad_cond_none c, ad_both_sel s WHERE s.id IN (1, 2, 5) ORDER BY c.id, s.id;
-- the values themselves
BEGIN;
SELECT gj_force(true);
SELECT x.z, y.z, count(*), sum(x.b * y.b), min(y.e) + 0 FROM ad_r x JOIN ad_s y ON x.k = y.k GROUP BY x.z, y.z ORDER BY 1, 2;
SELECT gj_force(false);
SELECT x.z, y.z, count(*), sum(x.b * y.b), min(y.e) + 0 FROM ad_r x JOIN ad_s y ON x.k = y.k GROUP BY x.z, y.z ORDER BY 1, 2;
COMMIT;
-- every pair reduced in the backend, the groups of each side in a dense array
SELECT c.id AS cond, substring(p FROM 'Algorithm: ([a-z]+)') AS algorithm,
       substring(p FROM 'Groups of Outer x Inner Rows: ([^,]+, [a-z ]+)') AS groups,
       substring(p FROM 'Pairs Aggregated: (\d+)') AS pairs,
       substring(p FROM 'Pairs Aggregated: (\d+)') = substring(p FROM 'Pairs Reduced in Backend: (\d+)') AS all_in_backend
FROM ad_cond c,
     ad_analyze(c.algorithm, format('SELECT x.a %% 3, y.z, count(*), sum(x.b * y.b), min(y.d - x.d) FROM ad_r x JOIN ad_s y ON %s GROUP BY x.a %% 3, y.z', c.cond),
                '^\s*(Algorithm|Groups of Outer x Inner Rows|Pairs Aggregated|Pairs Reduced in Backend):') p
ORDER BY c.id;

--
-- More groups than gpujoin.max_dense_groups: the groups actually seen are
-- kept in a hash table on the host, which folds every pair; the results
-- are the same, never an error.
--
SET gpujoin.max_dense_groups = 1;
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_r x JOIN ad_s y ON %s%s', s.sel, c.cond, s.tail)) AS host_hash_table
FROM ad_cond c, ad_both_sel s ORDER BY c.id, s.id;
SELECT c.id AS cond, substring(p FROM 'Groups of Outer x Inner Rows: ([^,]+, [a-z ]+)') AS groups,
       substring(p FROM 'Pairs Reduced in Backend: (\d+)') AS in_backend,
       substring(p FROM 'Groups Returned: (\d+)') AS groups_returned
FROM ad_cond c,
     ad_analyze(c.algorithm, format('SELECT x.a %% 3, y.z, count(*), sum(x.b * y.b) FROM ad_r x JOIN ad_s y ON %s GROUP BY x.a %% 3, y.z', c.cond),
                '^\s*(Groups of Outer x Inner Rows|Pairs Reduced in Backend|Groups Returned):') p
ORDER BY c.id;
-- one side's groups alone are never limited
SELECT ad_check('auto', 'SELECT x.a, count(*), sum(y.b) FROM ad_r x JOIN ad_s y ON x.b < y.b GROUP BY x.a') AS one_side;
RESET gpujoin.max_dense_groups;

--
-- Grouping expressions of one side the device cannot compute for some rows
-- (ad_ge_r's rows 41-45), with a key of the other side: evaluated by the
-- host on those rows' joined pairs only, in the dense array or the hash
-- table.
--
SELECT c.id AS cond, g.id AS grp, d.dense,
       ad_check(c.algorithm, format('SELECT y.k, %s, count(*), sum(y.b), min(x.id + y.id) FROM ad_ge_r x JOIN ad_ge_s y ON %s GROUP BY y.k, %s', g.g, c.cond, g.g)) AS never_joined,
       ad_check_error(c.algorithm, format('SELECT y.k, %s, count(*), sum(y.b), min(x.id + y.id) FROM ad_ge_r x JOIN ad_ge_s2 y ON %s GROUP BY y.k, %s', g.g, c.cond, g.g)) AS joined
FROM ad_ge_cond c, ad_ge_group g, (VALUES ('4194304'), ('1')) d(dense),
     LATERAL set_config('gpujoin.max_dense_groups', d.dense, false) s
WHERE g.id IN (1, 3, 5, 6, 7) ORDER BY c.id, g.id, d.dense;
RESET gpujoin.max_dense_groups;

-- The failing expressions' table as the inner input (a hash join with a
-- large outer table): deferred inner rows, grouped by the host too.
CREATE TABLE ad_ge_big AS SELECT g AS id, g % 9 AS k, g % 50 - 25 AS b FROM generate_series(1, 3000) g;
CREATE TABLE ad_ge_big2 AS SELECT * FROM ad_ge_big;
INSERT INTO ad_ge_big2 VALUES (5001, 100, 3), (5002, 101, 4);
ANALYZE ad_ge_big, ad_ge_big2;
SELECT gj_plan_lines('SELECT y.k, 100 / x.z, count(*) FROM ad_ge_r x JOIN ad_ge_big y ON x.k = y.k GROUP BY y.k, 100 / x.z',
                     '^\s*(Algorithm|->  Seq Scan)') AS ad_ge_r_inner;
SELECT g.id AS grp, d.dense,
       ad_check('hash', format('SELECT y.k, %s, count(*), sum(y.b) FROM ad_ge_r x JOIN ad_ge_big y ON x.k = y.k GROUP BY y.k, %s', g.g, g.g)) AS never_joined,
       ad_check_error('hash', format('SELECT y.k, %s, count(*), sum(y.b) FROM ad_ge_r x JOIN ad_ge_big2 y ON x.k = y.k GROUP BY y.k, %s', g.g, g.g)) AS joined
FROM ad_ge_group g, (VALUES ('4194304'), ('1')) d(dense),
     LATERAL set_config('gpujoin.max_dense_groups', d.dense, false) s
ORDER BY g.id, d.dense;
RESET gpujoin.max_dense_groups;

--
-- Many tiles and steps (a 1kB device budget): keys of both sides, deferred
-- rows that join nothing (ad_tile_in) or join (ad_tile_in2).
--
SET gpujoin.device_memory = '1kB';
SELECT c.id AS cond, s.id AS sel,
       ad_check(c.algorithm, format('SELECT %s FROM ad_tile x JOIN ad_tile_in y ON %s%s', s.sel, c.cond, s.tail)) AS many_tiles
FROM ad_tile_cond c,
     (VALUES (1, 'x.b % 7, y.z, count(*), sum(x.b * y.b), max(x.e * y.e) + 0, min(y.d - x.d)', ' GROUP BY x.b % 7, y.z'),
             (2, '100 / x.z, y.k % 3, count(*), sum(y.b), avg(x.b + y.b)', ' GROUP BY 100 / x.z, y.k % 3'),
             (3, 'x.d + 1, y.e * 2 + 0, count(*)', ' GROUP BY x.d + 1, y.e * 2 HAVING count(*) > 1')) s(id, sel, tail)
ORDER BY c.id, s.id;
SELECT c.id AS cond,
       ad_check_error(c.algorithm, format('SELECT 100 / x.z, y.k %% 3, count(*), sum(y.b) FROM ad_tile x JOIN ad_tile_in2 y ON %s GROUP BY 100 / x.z, y.k %% 3', c.cond)) AS many_tiles_joined
FROM ad_tile_cond c ORDER BY c.id;
RESET gpujoin.device_memory;

--
-- Row counts of any nested-loop program, for aggregates of outer columns
-- (cpu_program_count.c, cuda_program_count.cu): the program's leading
-- compares are tested first and the rest of it runs for the pairs they
-- pass.  A pair whose rest overflows goes to the host, where a leading
-- compare that is not true drops it before the overflow, as in the native
-- plan, whose join filter tests the cheaper compares first; an overflow in
-- a pair that passes them is PostgreSQL's error.  NULLs in the compared
-- columns, float products, grouping by the outer side, many steps (a 1kB
-- budget), and programs that cannot be prefiltered (an OR, a qual first).
--
CREATE TABLE ad_pc_r AS
SELECT g AS id, (g * 7919) % 1000 - 500 AS x, (g * 104729) % 1000 - 500 AS y,
       CASE WHEN g % 29 = 0 THEN NULL ELSE g % 1000 END AS w,
       CASE WHEN g % 31 = 0 THEN NULL ELSE ((g * 13) % 200 - 100) / 8.0 END::float8 AS f
FROM generate_series(1, 1500) g;
INSERT INTO ad_pc_r VALUES (-1, 2147483000, 2147483000, 1, 1e308), (-2, NULL, 5, 2, 0),
    (-3, 4, NULL, 3, NULL), (-4, -2147483000, -2147483000, 4, -2);
CREATE TABLE ad_pc_s AS
SELECT g AS id, (g * 6007) % 1000 - 500 AS x, (g * 7877) % 1000 - 500 AS y,
       CASE WHEN g % 23 = 0 THEN NULL ELSE ((g * 11) % 160 - 80) / 4.0 END::float8 AS f
FROM generate_series(1, 1200) g;
INSERT INTO ad_pc_s VALUES (-1, 2147483600, 2147483000, -1e308), (-2, 7, NULL, 2), (-3, NULL, 9, NULL);
ANALYZE ad_pc_r, ad_pc_s;
CREATE TABLE ad_pc_q (id int, query text);
INSERT INTO ad_pc_q VALUES
 (1, 'SELECT count(*), sum(x.w), min(x.w), max(x.w) FROM ad_pc_r x JOIN ad_pc_s y ON x.x < y.x AND x.y > y.y AND x.x + y.y > 0'),
 (2, 'SELECT x.id % 5, count(*), sum(x.w), max(x.f) + 0 FROM ad_pc_r x JOIN ad_pc_s y ON x.x <= y.x AND x.y >= y.y AND x.w - y.y > 100 GROUP BY x.id % 5'),
 (3, 'SELECT count(*), sum(x.f) FROM ad_pc_r x JOIN ad_pc_s y ON x.f < y.f AND x.f * y.f > 1.5'),
 (4, 'SELECT count(*), max(x.w) FROM ad_pc_r x JOIN ad_pc_s y ON (x.x < y.x OR x.y > y.y) AND x.w - y.y < 100'),
 (5, 'SELECT count(*), sum(x.w) FROM ad_pc_r x JOIN ad_pc_s y ON x.x <> y.x AND x.y = y.y AND (x.w > 10 OR y.f IS NULL)'),
 (6, 'SELECT count(*) FROM ad_pc_r x JOIN ad_pc_s y ON x.x < y.x AND x.y > y.y AND x.x + y.y > 0 AND x.id > 0');
SELECT q.id, ad_check('nestloop', q.query) AS program_counts
FROM ad_pc_q q ORDER BY q.id;
SELECT q.id, ad_analyze('nestloop', q.query, '^\s*(GPU Aggregates|Device Matches):') AS plan
FROM ad_pc_q q WHERE q.id IN (1, 4) ORDER BY q.id;
-- pairs that pass the compares and overflow: PostgreSQL's error either way
SELECT ad_check_error('nestloop', 'SELECT count(*) FROM ad_pc_r x JOIN ad_pc_s y ON x.x < y.x AND x.y + y.y > 0') AS overflow;
SET gpujoin.device_memory = '1kB';
SELECT q.id, ad_check('nestloop', q.query) AS program_counts_many_steps
FROM ad_pc_q q ORDER BY q.id;
RESET gpujoin.device_memory;
