-- agg_inner_groups.sql: aggregates grouped by the inner side's keys only,
-- and the group count of a remainder (issue 35).
-- A GROUP BY on columns or expressions of one side used to make that side
-- GpuJoin's outer input; now both orders are offered and the costs decide,
-- so GROUP BY d.c % 10 over a large fact table keeps the fact table outer
-- (and, in a parallel plan, divided among the processes) and groups its
-- pairs by the inner rows' keys: EXPLAIN ANALYZE says
-- "Groups of Outer x Inner Rows: 1 x N".  The planner's group estimate
-- of x % c is at most 2|c| - 1.  It proves: the plans have that shape
-- (serial and parallel); their results equal the native plan's over NULL
-- keys, NULL arguments, a key expression that is NULL, an empty inner
-- side and no matching pair; HAVING and ORDER BY above work.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(16);

CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; result text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
        result := result || line || E'\n';
    END LOOP;
    RETURN result;
END $$;

CREATE FUNCTION pg_temp.explain_analyze(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; result text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        result := result || line || E'\n';
    END LOOP;
    RETURN result;
END $$;

-- the rows of a query, as a sorted text array (multiset comparison)
CREATE FUNCTION pg_temp.rows_of(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE result text[];
BEGIN
    EXECUTE 'SELECT coalesce(array_agg(r::text ORDER BY r::text), ''{}'') FROM (' || q || ') r'
        INTO result;
    RETURN result;
END $$;

-- parallel workers cannot read temporary tables: plain ones, rolled back.
-- fact 60,000 rows, dim 2,000: k of fact is NULL in some rows and past the
-- dim's keys in others; c of dim is NULL in some rows.
CREATE TABLE gj_ig_fact AS
    SELECT g AS id, CASE WHEN g % 97 = 0 THEN NULL ELSE g % 2300 END AS k,
           CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 1000)::float8 / 8 END AS v
    FROM generate_series(1, 60000) g;
CREATE TABLE gj_ig_dim AS
    SELECT g AS k, CASE WHEN g % 29 = 0 THEN NULL ELSE g * 7 END AS c, (g % 9)::float8 AS w
    FROM generate_series(1, 2000) g;
CREATE TABLE gj_ig_empty (k int, c int, w float8);
ANALYZE gj_ig_fact;
ANALYZE gj_ig_dim;
ANALYZE gj_ig_empty;

SET LOCAL gpujoin.enabled = off;
CREATE TEMP TABLE native AS
    SELECT 'by_mod' AS name, pg_temp.rows_of($$SELECT d.c % 10 AS g, count(*), count(f.v), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c % 10$$) AS r
    UNION ALL SELECT 'by_col', pg_temp.rows_of($$SELECT d.c, count(*), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c$$)
    UNION ALL SELECT 'having', pg_temp.rows_of($$SELECT d.c % 7 AS g, count(*)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY 1 HAVING count(*) > 3000$$)
    UNION ALL SELECT 'empty', pg_temp.rows_of($$SELECT e.c % 10, count(*)
        FROM gj_ig_fact f JOIN gj_ig_empty e ON f.k = e.k GROUP BY 1$$)
    UNION ALL SELECT 'nomatch', pg_temp.rows_of($$SELECT d.c % 10, count(*)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k + 100000 GROUP BY 1$$);
RESET gpujoin.enabled;

-- the estimate of x % c
SELECT ok(pg_temp.plan_of($$SELECT d.c % 10 AS g, count(*) FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY 1$$)
          ~ 'GpuJoin\)[^\n]*rows=19 ', 'the GpuJoin estimates at most 19 groups of d.c % 10');
SELECT ok(pg_temp.plan_of($$SELECT d.c % (-4)::int8 AS g, count(*) FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY 1$$)
          ~ 'GpuJoin\)[^\n]*rows=7 ', 'a negative int8 divisor: at most 7 groups');

-- serial
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT ok(pg_temp.explain_analyze($$SELECT d.c % 10 AS g, count(*), count(f.v), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c % 10$$)
          ~ 'Groups of Outer x Inner Rows: 1 x 11', 'serial: the fact table outer, grouped by the inner keys (10 remainders and NULL)');
SELECT is(pg_temp.rows_of($$SELECT d.c % 10 AS g, count(*), count(f.v), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c % 10$$),
          (SELECT r FROM native WHERE name = 'by_mod'), 'serial, GROUP BY d.c % 10: the native rows');
SELECT is(pg_temp.rows_of($$SELECT d.c, count(*), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c$$),
          (SELECT r FROM native WHERE name = 'by_col'), 'serial, GROUP BY d.c: the native rows');
SELECT is(pg_temp.rows_of($$SELECT d.c % 7 AS g, count(*)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY 1 HAVING count(*) > 3000$$),
          (SELECT r FROM native WHERE name = 'having'), 'serial, HAVING: the native rows');
SELECT is(pg_temp.rows_of($$SELECT e.c % 10, count(*)
        FROM gj_ig_fact f JOIN gj_ig_empty e ON f.k = e.k GROUP BY 1$$),
          (SELECT r FROM native WHERE name = 'empty'), 'serial, an empty inner side: no rows');
SELECT is(pg_temp.rows_of($$SELECT d.c % 10, count(*)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k + 100000 GROUP BY 1$$),
          (SELECT r FROM native WHERE name = 'nomatch'), 'serial, no matching pair: no rows');

-- parallel: the fact table divided among the processes
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT ok(pg_temp.plan_of($$SELECT d.c % 10 AS g, count(*), count(f.v), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c % 10$$)
          ~ 'Parallel Custom Scan \(GpuJoin\)', 'parallel: a partial GpuJoin');
SELECT ok(pg_temp.plan_of($$SELECT d.c % 10 AS g, count(*), count(f.v), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c % 10$$)
          ~ 'Parallel Seq Scan on gj_ig_fact', 'parallel: the fact table is the divided (outer) side');
SELECT ok(pg_temp.explain_analyze($$SELECT d.c % 10 AS g, count(*), count(f.v), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c % 10$$)
          ~ 'Groups of Outer x Inner Rows: 1 x 11', 'parallel: grouped by the inner keys');
SELECT is(pg_temp.rows_of($$SELECT d.c % 10 AS g, count(*), count(f.v), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c % 10$$),
          (SELECT r FROM native WHERE name = 'by_mod'), 'parallel, GROUP BY d.c % 10: the native rows');
SELECT is(pg_temp.rows_of($$SELECT d.c, count(*), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c$$),
          (SELECT r FROM native WHERE name = 'by_col'), 'parallel, GROUP BY d.c: the native rows');
SELECT is(pg_temp.rows_of($$SELECT d.c % 7 AS g, count(*)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY 1 HAVING count(*) > 3000$$),
          (SELECT r FROM native WHERE name = 'having'), 'parallel, HAVING: the native rows');
SELECT is(pg_temp.rows_of($$SELECT e.c % 10, count(*)
        FROM gj_ig_fact f JOIN gj_ig_empty e ON f.k = e.k GROUP BY 1$$),
          (SELECT r FROM native WHERE name = 'empty'), 'parallel, an empty inner side: no rows');
SELECT is(pg_temp.rows_of($$SELECT d.c % 10, count(*)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k + 100000 GROUP BY 1$$),
          (SELECT r FROM native WHERE name = 'nomatch'), 'parallel, no matching pair: no rows');

SELECT * FROM finish();
ROLLBACK;
