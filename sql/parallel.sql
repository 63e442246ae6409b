--
-- parallel: on the cpu backend GpuJoin runs in parallel plans, each process
-- joining its share of the outer rows with all the inner rows, and the
-- result is the native plan's.  RIGHT and FULL joins stay out of parallel
-- plans (every process would emit the unmatched inner rows).
--
SET client_min_messages = warning;
SET gpujoin.device = cpu;
-- the joins themselves, not the aggregates computed inside GpuJoin
SET gpujoin.enable_aggregate = off;

CREATE TABLE p_outer AS
SELECT g AS id, CASE WHEN g % 53 = 0 THEN NULL ELSE g % 1000 END AS k, (g * 31) % 20000 AS t
FROM generate_series(1, 40000) g;
CREATE TABLE p_inner AS
SELECT g AS id, CASE WHEN g % 47 = 0 THEN NULL ELSE g % 1200 END AS k, (g * 17) % 20000 AS t
FROM generate_series(1, 3000) g;
ANALYZE p_outer, p_inner;

SET parallel_setup_cost = 0;

SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;

CREATE TABLE p_queries (name text, q text);
INSERT INTO p_queries VALUES
    ('inner hash', 'SELECT count(*), sum(o.id::int8 * 100000 + i.id) FROM p_outer o JOIN p_inner i ON o.k = i.k'),
    ('inner band', 'SELECT count(*), sum(o.id::int8 * 100000 + i.id) FROM p_outer o JOIN p_inner i ON i.t BETWEEN o.t - 3 AND o.t + 3'),
    ('inner theta', 'SELECT count(*), sum(o.id::int8 * 100000 + i.id) FROM p_outer o JOIN p_inner i ON o.t + 5 < i.t - i.k AND o.id < 3000'),
    ('left', 'SELECT count(*), count(i.id), sum(o.id::int8 * 100000 + coalesce(i.id, 0)) FROM p_outer o LEFT JOIN p_inner i ON o.k = i.k AND o.t < i.t'),
    ('semi', 'SELECT count(*), sum(o.id) FROM p_outer o WHERE EXISTS (SELECT 1 FROM p_inner i WHERE i.t BETWEEN o.t AND o.t + 2)'),
    ('anti', 'SELECT count(*), sum(o.id) FROM p_outer o WHERE NOT EXISTS (SELECT 1 FROM p_inner i WHERE i.k = o.k)');

-- the plans: a Gather above GpuJoin (parallel-aware only to hand its
-- counters to the leader), its outer side a parallel scan
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT name, (SELECT string_agg(btrim(regexp_replace(line, '\s+\(.*$', '')), ' / ')
              FROM gj_explain(q) AS line
              WHERE line ~ '(Gather|GpuJoin|Parallel Seq Scan|Join Type|Algorithm)') AS plan
FROM p_queries ORDER BY name;

-- workers really run it: each process drains all inner rows and a share of
-- the outer ones, and EXPLAIN ANALYZE counts every process (how the outer
-- rows split between the processes depends on timing, their sum does not)
WITH plan AS (
    SELECT string_agg(line, E'\n') AS text
    FROM gj_explain('SELECT count(*) FROM p_outer o JOIN p_inner i ON o.k = i.k', true) AS line
), counts AS (
    SELECT substring(text FROM 'Workers Launched: (\d+)')::int AS workers,
           substring(text FROM 'Outer Rows Drained: (\d+)')::int AS outer_drained,
           substring(text FROM 'Inner Rows Drained: (\d+)')::int AS inner_drained
    FROM plan
)
SELECT workers >= 1 AS workers_launched,
       outer_drained = 40000 AS outer_drained_once,
       inner_drained = 3000 * (workers + 1) AS inner_drained_by_each
FROM counts;
SELECT count(*), sum(o.id::int8 * 100000 + i.id) FROM p_outer o JOIN p_inner i ON i.t BETWEEN o.t - 3 AND o.t + 3;

-- the results, with GpuJoin and natively
CREATE FUNCTION p_run(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE result text;
BEGIN
    EXECUTE 'SELECT row(t.*)::text FROM (' || q || ') t' INTO result;
    RETURN result;
END $$;
CREATE TABLE p_gpujoin AS SELECT name, p_run(q) AS result FROM p_queries;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;
SET gpujoin.enabled = off;
SELECT g.name, g.result, g.result = n.result AS same
FROM p_gpujoin g JOIN (SELECT name, p_run(q) AS result FROM p_queries) n USING (name)
ORDER BY g.name;
RESET gpujoin.enabled;

-- a FULL join is never under a Gather
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT line FROM gj_explain('SELECT count(*) FROM p_outer o FULL JOIN p_inner i ON o.k = i.k') AS line
WHERE line ~ '(Gather|GpuJoin|Join Type)';
RESET ALL;
