-- jointypes.sql: GpuJoin is offered for LEFT, RIGHT, FULL, SEMI and ANTI
-- joins, shows the join type and the algorithm it runs, runs the FULL joins
-- PostgreSQL cannot plan where the device evaluates a qual linking the sides,
-- and declines what it cannot run exactly (placeholders).
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(23);

CREATE TEMP TABLE r AS SELECT g AS id, CASE WHEN g % 10 = 0 THEN NULL ELSE g % 100 END AS a,
    g % 7 AS b FROM generate_series(1, 2000) g;
CREATE TEMP TABLE s AS SELECT g AS id, CASE WHEN g % 9 = 0 THEN NULL ELSE g % 90 END AS a,
    g % 5 AS b FROM generate_series(1, 2000) g;
CREATE TEMP TABLE tiny AS SELECT g AS id, g AS a FROM generate_series(1, 20) g;
ANALYZE r;
ANALYZE s;
ANALYZE tiny;

-- "Join Type/Algorithm" of the first GpuJoin in the plan, or 'native'
CREATE FUNCTION pg_temp.gpujoin_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    jtype text := 'Inner';
    seen boolean := false;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF line ~ 'Custom Scan \(GpuJoin\)' THEN
            seen := true;
        ELSIF seen AND line ~ 'Join Type: ' THEN
            jtype := regexp_replace(line, '^.*Join Type: ', '');
        ELSIF seen AND line ~ 'Algorithm: ' THEN
            RETURN jtype || '/' || regexp_replace(line, '^.*Algorithm: ', '');
        END IF;
    END LOOP;
    RETURN 'native';
END $$;

SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;

-- the preserved side is the outer input (Left) or the inner one (Right),
-- whichever costs less: a small preserved side is the outer input
SELECT is(pg_temp.gpujoin_of('SELECT * FROM tiny LEFT JOIN r ON tiny.a < r.a'),
          'Left/sortmerge', 'LEFT JOIN, theta: GpuJoin Left, sortmerge');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r LEFT JOIN tiny ON tiny.a < r.a'),
          'Right/sortmerge', 'LEFT JOIN with a large preserved side: GpuJoin Right, sortmerge');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r RIGHT JOIN tiny ON tiny.a < r.a'),
          'Left/sortmerge', 'RIGHT JOIN with a small preserved side: GpuJoin Left');
SELECT matches(pg_temp.gpujoin_of('SELECT * FROM r LEFT JOIN s ON r.a = s.a'),
          '^(Left|Right)/hash$', 'LEFT JOIN, equality: hash');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r FULL JOIN s ON r.a = s.a'),
          'Full/hash', 'FULL JOIN, equality: hash');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r FULL JOIN s ON r.a = s.a AND r.b < s.b'),
          'Full/hash', 'FULL JOIN, equality plus theta: hash');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.a = r.a)'),
          'Semi/hash', 'EXISTS, equality: Semi, hash');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.a > r.a + 80)'),
          'Semi/sortmerge', 'EXISTS, inequality: Semi, sortmerge');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r WHERE r.a IN (SELECT s.a FROM s)'),
          'Semi/hash', 'IN: Semi, hash');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.a = r.a)'),
          'Anti/hash', 'NOT EXISTS, equality: Anti, hash');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.a <> r.a)'),
          'Anti/nestloop', 'NOT EXISTS, not-equal: Anti, nestloop');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r LEFT JOIN s ON r.a = s.a WHERE s.a IS NULL'),
          'Anti/hash', 'LEFT JOIN ... WHERE key IS NULL becomes an anti join');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r LEFT JOIN s ON r.a < s.a WHERE s.b > 2'),
          'Inner/sortmerge', 'a strict WHERE qual on the nullable side makes it an inner join');

-- forcing an algorithm
SET LOCAL gpujoin.algorithm = nestloop;
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r FULL JOIN s ON r.a = s.a'),
          'Full/nestloop', 'FULL JOIN, nestloop forced');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.a = r.a)'),
          'Anti/nestloop', 'anti join, nestloop forced');
SET LOCAL gpujoin.algorithm = sortmerge;
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r WHERE EXISTS (SELECT 1 FROM s WHERE s.a = r.a)'),
          'Semi/sortmerge', 'semi join, sortmerge forced');
SELECT matches(pg_temp.gpujoin_of('SELECT * FROM r LEFT JOIN s ON r.a = s.a'),
          '^(Left|Right)/sortmerge$', 'outer join, sortmerge forced');
SET LOCAL gpujoin.algorithm = auto;

-- FULL joins PostgreSQL cannot plan (no hash- or merge-joinable qual)
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r FULL JOIN s ON r.a < s.a'),
          'Full/sortmerge', 'FULL JOIN PostgreSQL cannot plan: GpuJoin runs it');
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r FULL JOIN s ON r.a < s.a AND r.b + s.b = 3'),
          'Full/sortmerge', 'also with an equality over both sides on one side of =');
SELECT throws_ok('EXPLAIN SELECT * FROM r FULL JOIN s ON r.a::text < s.a::text', '0A000', NULL,
          'no qual the device evaluates links the sides: PostgreSQL''s error stays');

-- declined
SELECT is(pg_temp.gpujoin_of('SELECT * FROM r LEFT JOIN (SELECT s.a, 1 AS one FROM s) ss ON r.a < ss.a'),
          'native', 'a placeholder of the nullable side: not offered');

-- results
SELECT results_eq(
    'SELECT r.id, s.id FROM r LEFT JOIN s ON r.a = s.a AND r.b < s.b ORDER BY 1, 2',
    $$SELECT r.id, s.id FROM r LEFT JOIN s ON r.a = s.a AND r.b < s.b AND r.id + s.id * 0 = r.id
      ORDER BY 1, 2$$,
    'LEFT JOIN: the same rows as a native plan');
SELECT results_eq(
    'SELECT count(*) FROM r WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.a = r.a AND s.b < r.b)',
    $$SELECT count(*) FROM r WHERE r.id NOT IN
      (SELECT r2.id FROM r r2 JOIN s ON s.a = r2.a AND s.b < r2.b WHERE r2.id IS NOT NULL)$$,
    'NOT EXISTS: the same count as a NOT IN formulation');

SELECT * FROM finish();
ROLLBACK;
