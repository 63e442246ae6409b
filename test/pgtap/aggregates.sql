-- aggregates.sql: the aggregate node replaces Agg -> Join, and
-- gpujoin.enable_aggregate = off restores Agg over GpuJoin.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(16);

CREATE TEMP TABLE r AS SELECT g AS id, g % 100 AS a, g::int8 * 1000 AS x, g % 10 AS g FROM generate_series(1, 2000) g;
CREATE TEMP TABLE s AS SELECT g AS id, g % 90 AS a, g AS x, 'k' || g % 7 AS g FROM generate_series(1, 2000) g;
ANALYZE r;
ANALYZE s;

\ir lib/plans.sql

SELECT matches(pg_temp.plan_shape('SELECT count(*), sum(s.x) FROM r JOIN s ON r.a > s.a'),
               '^Custom Scan \(GpuJoin\)\n\s+GPU Aggregates: count\(\*\), sum\(s.x\)',
               'default costs: the GpuJoin node computes the aggregates');
SELECT doesnt_match(pg_temp.plan_shape('SELECT count(*), sum(s.x) FROM r JOIN s ON r.a > s.a'),
               '\mAggregate\M', 'no Agg node above it');
SELECT is((SELECT count(*) || ' ' || sum(s.x) || ' ' || avg(r.x) FROM r JOIN s ON r.a > s.a),
          (SELECT count(*) || ' ' || sum(s.x) || ' ' || avg(r.x) FROM r, s
           WHERE r.a > s.a AND r.id + s.id * 0 = r.id),
          'same results as the native plan');
SELECT matches(pg_temp.plan_shape('SELECT count(*) FROM r JOIN s ON r.a > s.a HAVING count(*) > 10 ORDER BY 1'),
               '^Sort\n.*\n\s+->  Custom Scan \(GpuJoin\)\n\s+Filter: \(\(count\(\*\)\) > 10\)\n\s+GPU Aggregates: count\(\*\)',
               'HAVING is the node''s filter, ORDER BY a Sort above it');

-- GROUP BY on one side's columns: that side is the outer input
SELECT matches(pg_temp.plan_shape('SELECT r.g, count(*), sum(s.x) FROM r JOIN s ON r.a > s.a GROUP BY r.g'),
               '^Custom Scan \(GpuJoin\)\n\s+Group Key: r.g\n\s+GPU Aggregates: count\(\*\), sum\(s.x\)\n(.*\n)*\s+->  Seq Scan on r\n\s+->  Seq Scan on s\n$',
               'GROUP BY r.g: the node groups, r is the outer input');
SELECT matches(pg_temp.plan_shape('SELECT s.g, count(*), max(r.x) FROM r JOIN s ON r.a > s.a GROUP BY s.g'),
               '^Custom Scan \(GpuJoin\)\n\s+Group Key: s.g\n(.*\n)*\s+->  Seq Scan on s\n\s+->  Seq Scan on r\n$',
               'GROUP BY s.g (text): s becomes the outer input');
SELECT matches(pg_temp.plan_shape('SELECT r.g, count(*) FROM r JOIN s ON r.a > s.a GROUP BY r.g HAVING count(*) > 10 ORDER BY 1'),
               '^Sort\n.*\n\s+->  Custom Scan \(GpuJoin\)\n\s+Filter: \(\(count\(\*\)\) > 10\)\n\s+Group Key: r.g',
               'GROUP BY with HAVING: the node''s filter, ORDER BY a Sort above it');
SELECT matches(pg_temp.plan_shape('SELECT r.g, s.g, count(*) FROM r JOIN s ON r.a > s.a GROUP BY r.g, s.g'),
               '^Custom Scan \(GpuJoin\)\n\s+Group Key: r.g, s.g\n',
               'GROUP BY columns of both sides: the node groups');
SELECT matches(pg_temp.plan_shape('SELECT r.g + s.a, count(*) FROM r JOIN s ON r.a > s.a GROUP BY r.g + s.a'),
               '^(Hash|Group)Aggregate\n',
               'GROUP BY an expression over both sides: PostgreSQL''s Agg');
SELECT matches(pg_temp.plan_shape('SELECT r.g % 3, count(*) FROM r JOIN s ON r.a > s.a GROUP BY r.g % 3'),
               '^Custom Scan \(GpuJoin\)\n\s+Group Key: \(r.g % 3\)\n',
               'GROUP BY an expression of one side: the node groups');
SET LOCAL gpujoin.enabled = off;
CREATE TEMP TABLE native_groups AS
SELECT r.g, count(*), sum(s.x), avg(r.x) FROM r JOIN s ON r.a > s.a GROUP BY r.g;
SET LOCAL gpujoin.enabled = on;
SELECT bag_eq('SELECT r.g, count(*), sum(s.x), avg(r.x) FROM r JOIN s ON r.a > s.a GROUP BY r.g',
              'TABLE native_groups',
              'GROUP BY: same groups and results as the native plan');

-- GROUP BY both sides, in the dense array and in the host's hash table
SET LOCAL gpujoin.enabled = off;
CREATE TEMP TABLE native_both AS
SELECT r.g, s.g AS sg, count(*), sum(s.x), avg(r.x), max(r.x - s.x) FROM r JOIN s ON r.a > s.a GROUP BY r.g, s.g;
SET LOCAL gpujoin.enabled = on;
SELECT bag_eq('SELECT r.g, s.g AS sg, count(*), sum(s.x), avg(r.x), max(r.x - s.x) FROM r JOIN s ON r.a > s.a GROUP BY r.g, s.g',
              'TABLE native_both',
              'GROUP BY both sides: same groups and results as the native plan');
SET LOCAL gpujoin.max_dense_groups = 10;
SELECT bag_eq('SELECT r.g, s.g AS sg, count(*), sum(s.x), avg(r.x), max(r.x - s.x) FROM r JOIN s ON r.a > s.a GROUP BY r.g, s.g',
              'TABLE native_both',
              'GROUP BY both sides past gpujoin.max_dense_groups: the same, from the host''s hash table');
RESET gpujoin.max_dense_groups;

SET LOCAL gpujoin.enable_aggregate = off;
SELECT matches(pg_temp.plan_shape('SELECT count(*), sum(s.x) FROM r JOIN s ON r.a > s.a'),
               '^Aggregate\n\s+->  Custom Scan \(GpuJoin\)',
               'enable_aggregate = off: Agg over GpuJoin');
SELECT doesnt_match(pg_temp.plan_shape('SELECT count(*), sum(s.x) FROM r JOIN s ON r.a > s.a'),
               'GPU Aggregates', 'enable_aggregate = off: no aggregates in the node');
SET LOCAL gpujoin.enable_aggregate = on;
SET LOCAL gpujoin.enabled = off;
SELECT doesnt_match(pg_temp.plan_shape('SELECT count(*) FROM r JOIN s ON r.a > s.a'),
               'GpuJoin', 'gpujoin.enabled = off: no aggregate node either');

SELECT * FROM finish();
ROLLBACK;
