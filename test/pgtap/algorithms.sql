-- algorithms.sql: which algorithm GpuJoin picks for each shape of condition,
-- and that forcing one it cannot use falls back to one that can.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(17);

CREATE TEMP TABLE r AS SELECT g AS id, g % 100 AS a, (g % 37)::float8 AS f, g % 7 AS b
FROM generate_series(1, 2000) g;
CREATE TEMP TABLE s AS SELECT g AS id, g % 90 AS a, (g % 41)::float8 AS f, g % 5 AS b
FROM generate_series(1, 2000) g;
ANALYZE r;
ANALYZE s;

CREATE FUNCTION pg_temp.algorithm_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF line ~ 'Algorithm: ' THEN
            RETURN regexp_replace(line, '^.*Algorithm: ', '');
        END IF;
    END LOOP;
    RETURN 'native';
END $$;

SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;

SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a = s.a'), 'hash', 'equality: hash');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a = s.a AND r.b = s.b'), 'hash', 'two equalities: hash');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a = s.a AND r.f < s.f'), 'hash', 'equality plus theta: hash');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a < s.a'), 'sortmerge', 'one inequality: sortmerge');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON s.a BETWEEN r.a - 5 AND r.a + 5'), 'sortmerge', 'band: sortmerge');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a BETWEEN s.b AND s.a'), 'sortmerge', 'outer between two inner columns: sortmerge');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.f >= s.f'), 'sortmerge', 'float inequality: sortmerge');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON abs(r.a - s.a) <= 3'), 'sortmerge', 'abs() band: sortmerge');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON 3 > abs(s.a - r.a)'), 'sortmerge', 'commuted abs() band: sortmerge');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON abs(r.a - s.a) >= 3'), 'nestloop', 'outside an abs() band: nestloop');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a <> s.a'), 'nestloop', 'not-equal: nestloop');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a + s.a < 10'), 'sortmerge', 'a sum rewritten as a bound: sortmerge');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a - s.a BETWEEN -3 AND 3'), 'sortmerge', 'a difference between two constants: sortmerge');
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a * s.a < 10'), 'nestloop', 'general expression: nestloop');

SET LOCAL gpujoin.algorithm = hash;
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a < s.a'), 'sortmerge', 'hash forced on an inequality: falls back to sortmerge');
SET LOCAL gpujoin.algorithm = sortmerge;
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a = s.a'), 'sortmerge', 'sortmerge forced on an equality: sortmerge');
SET LOCAL gpujoin.algorithm = nestloop;
SELECT is(pg_temp.algorithm_of('SELECT * FROM r JOIN s ON r.a = s.a'), 'nestloop', 'nestloop forced: nestloop');

SELECT * FROM finish();
ROLLBACK;
