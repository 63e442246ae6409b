-- agg_inner_groups.sql: aggregates grouped by the inner side's keys only,
-- and the group count of a remainder (issue 35).
-- A GROUP BY on columns or expressions of one side used to make that side
-- GpuJoin's outer input; now both orders are offered and the costs decide,
-- so GROUP BY d.c % 10 over a large fact table keeps the fact table outer
-- (and, in a parallel plan, divided among the processes) and groups its
-- pairs by the inner rows' keys: EXPLAIN ANALYZE says
-- "Groups of Outer x Inner Rows: 1 x N".  The planner's group estimate
-- of x % c is at most 2|c| (its 2|c| - 1 values and NULL).  It proves: the plans have that shape
-- (serial and parallel); their results equal the native plan's over NULL
-- keys, NULL arguments, a key expression that is NULL, an empty inner
-- side and no matching pair; HAVING and ORDER BY above work.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(16);

\ir lib/plans.sql

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

-- the queries whose rows must be the native plan's, serial and parallel
CREATE TEMP TABLE queries (name text, what text, q text);
INSERT INTO queries VALUES
    ('by_mod', 'GROUP BY d.c % 10', $$SELECT d.c % 10 AS g, count(*), count(f.v), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c % 10$$),
    ('by_col', 'GROUP BY d.c', $$SELECT d.c, count(*), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c$$),
    ('having', 'HAVING', $$SELECT d.c % 7 AS g, count(*)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY 1 HAVING count(*) > 3000$$),
    ('empty', 'an empty inner side: no rows', $$SELECT e.c % 10, count(*)
        FROM gj_ig_fact f JOIN gj_ig_empty e ON f.k = e.k GROUP BY 1$$),
    ('nomatch', 'no matching pair: no rows', $$SELECT d.c % 10, count(*)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k + 100000 GROUP BY 1$$);
SET LOCAL gpujoin.enabled = off;
CREATE TEMP TABLE native AS SELECT name, pg_temp.rows_of(q) AS r FROM queries;
RESET gpujoin.enabled;

-- each query's rows against the native plan's, under the settings in force
CREATE FUNCTION pg_temp.same_as_native(mode text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE query record;
BEGIN
    FOR query IN SELECT * FROM queries ORDER BY name LOOP
        RETURN NEXT is(pg_temp.rows_of(query.q), (SELECT r FROM native n WHERE n.name = query.name),
                       mode || ', ' || query.what || ': the native rows');
    END LOOP;
END $$;

-- the estimate of x % c
SELECT ok(pg_temp.plan_of($$SELECT d.c % 10 AS g, count(*) FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY 1$$)
          ~ 'GpuJoin\)[^\n]*rows=20 ', 'the GpuJoin estimates at most 20 groups of d.c % 10 (19 values and NULL)');
SELECT ok(pg_temp.plan_of($$SELECT d.c % (-4)::int8 AS g, count(*) FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY 1$$)
          ~ 'GpuJoin\)[^\n]*rows=8 ', 'a negative int8 divisor: at most 8 groups');

-- serial
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT ok(pg_temp.explain_analyze($$SELECT d.c % 10 AS g, count(*), count(f.v), sum(d.w)
        FROM gj_ig_fact f JOIN gj_ig_dim d ON f.k = d.k GROUP BY d.c % 10$$)
          ~ 'Groups of Outer x Inner Rows: 1 x 11', 'serial: the fact table outer, grouped by the inner keys (10 remainders and NULL)');
SELECT * FROM pg_temp.same_as_native('serial');

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
SELECT * FROM pg_temp.same_as_native('parallel');

SELECT * FROM finish();
ROLLBACK;
