-- agg_parallel.sql: the aggregate node in parallel plans (issue 20).  Under
-- a Gather every process (leader and workers) runs a partial aggregate node
-- over its share of the outer rows and returns each group's transition
-- states; a Finalize Agg above the Gather combines them.  The plan has that
-- shape; count, sum, min, max and avg of integers give the native plan's
-- results, with and without GROUP BY, with HAVING, grouping by both sides,
-- over empty inputs, NULLs and groups that are all NULL, no matching pair
-- at all; sum and avg of int8 (a serialised state) past the int8 range;
-- sum(float8) and avg(float4/float8) (float states; their edge cases are
-- sql/agg_partial_float.sql's);
-- an overflow in an argument raises the native plan's error; aggregates
-- whose transition state the node does not reproduce (string_agg) get no
-- partial node; left and semi
-- joins (the aggregate node takes inner joins only) still give the native
-- results with parallel plans.
-- Run on the cpu backend in each process, and through the GPU service where
-- the cluster has one.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(40);

\ir lib/plans.sql

-- parallel workers cannot read temporary tables: plain ones, rolled back.
-- v is NULL in every row of group g = 0 and in some others.
CREATE TABLE gj_pa_fact AS
    SELECT g AS id, g % 400 AS k, (g % 7)::int2 AS g,
           CASE WHEN g % 7 = 0 OR g % 13 = 0 THEN NULL ELSE g * 3 - 20000 END AS v,
           g::int8 * 1000003 AS b, (g % 977)::float8 / 7 AS f, 'x' || g % 5 AS t
    FROM generate_series(1, 20000) g;
CREATE TABLE gj_pa_dim AS
    SELECT g AS k, CASE WHEN g % 17 = 0 THEN NULL ELSE g % 5 END AS w, (g % 3)::int2 AS h
    FROM generate_series(1, 450) g;
CREATE TABLE gj_pa_empty (k int, w int, h int2);
-- int8 sums past the int8 range, of both signs, zero, and all NULL
CREATE TABLE gj_pa_big AS
    SELECT g AS id, g % 300 AS k, (g % 6)::int2 AS s,
           CASE g % 6 WHEN 0 THEN NULL WHEN 1 THEN 9223372036854775807 - g
                      WHEN 2 THEN -9223372036854775807 + g WHEN 3 THEN (g % 2) * 2 - 1
                      WHEN 4 THEN 0 ELSE g::int8 * 10000 END AS b
    FROM generate_series(1, 6000) g;
ANALYZE gj_pa_big;
ANALYZE gj_pa_fact;
ANALYZE gj_pa_dim;
ANALYZE gj_pa_empty;

\set q_plain 'SELECT count(*), count(f.v), sum(f.v), sum(f.g), min(f.v), max(f.v), min(d.w), max(f.b), min(f.f), avg(f.v), avg(f.g), avg(d.h) FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k'
\set q_group 'SELECT f.g, count(*), count(f.v), sum(f.v), min(f.v), max(d.w), avg(f.v), avg(d.h) FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k GROUP BY f.g'
\set q_having 'SELECT f.g, sum(f.v), avg(d.w) FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k GROUP BY f.g HAVING count(*) > 1000000 AND avg(d.h) > 0.5'
\set q_both 'SELECT f.g, d.h, count(*), sum(f.v), max(d.w) FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k GROUP BY f.g, d.h'
\set q_empty 'SELECT count(*), sum(f.v), min(f.v), avg(f.v), avg(d.h) FROM gj_pa_fact f JOIN gj_pa_empty d ON f.k < d.k'
\set q_empty_outer 'SELECT e.h, count(*), sum(e.w), max(d.w), avg(e.w) FROM gj_pa_empty e JOIN gj_pa_dim d ON e.k < d.k GROUP BY e.h'
\set q_nopair 'SELECT f.g, count(*), sum(f.v), avg(f.v) FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k - 1000 GROUP BY f.g'
\set q_nopair_plain 'SELECT count(*), sum(f.v), max(f.v), avg(f.v) FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k - 1000'
\set q_left 'SELECT count(*), count(d.w), sum(d.w), min(f.v), avg(d.h) FROM gj_pa_fact f LEFT JOIN gj_pa_dim d ON f.k = d.k + 300'
\set q_semi 'SELECT count(*), sum(f.v), max(f.v) FROM gj_pa_fact f WHERE EXISTS (SELECT 1 FROM gj_pa_dim d WHERE d.k = f.k AND d.h = 1)'
\set q_float 'SELECT count(*), sum(f.f) FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k'
\set q_float_exact 'SELECT f.g, d.h, count(*), sum(f.v::float8 * d.w), avg(f.v::float8), avg(d.w::float4), sum(d.h::float8) FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k GROUP BY f.g, d.h'
\set q_int8 'SELECT f.s, count(*), sum(f.b), avg(f.b), sum(f.b / 3), avg(f.b / 2 + d.k), sum(f.b % 1000 * d.k) FROM gj_pa_big f JOIN gj_pa_dim d ON f.k < d.k GROUP BY f.s'
\set q_int8_plain 'SELECT count(*), sum(f.b), avg(f.b) FROM gj_pa_big f JOIN gj_pa_dim d ON f.k < d.k AND f.s < 3'
\set q_int8_none 'SELECT sum(f.b), avg(f.b) FROM gj_pa_big f JOIN gj_pa_dim d ON f.k < d.k - 1000'
\set q_strings 'SELECT count(*), string_agg(f.t, \',\') FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k AND d.k < 3'
\set q_overflow 'SELECT count(*), sum(f.v * 200000) FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k'
\set digest 'SELECT count(*) || \' rows, \' || md5(coalesce(string_agg(t::text, \',\' ORDER BY t::text), \'\')) AS'

-- the native plan's answers, in one process
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpujoin.enabled = off;
:digest native_plain FROM (:q_plain) t \gset
SELECT count(*) AS native_pairs FROM gj_pa_fact f JOIN gj_pa_dim d ON f.k < d.k \gset
:digest native_group FROM (:q_group) t \gset
:digest native_having FROM (:q_having) t \gset
:digest native_both FROM (:q_both) t \gset
:digest native_empty FROM (:q_empty) t \gset
:digest native_empty_outer FROM (:q_empty_outer) t \gset
:digest native_nopair FROM (:q_nopair) t \gset
:digest native_nopair_plain FROM (:q_nopair_plain) t \gset
:digest native_left FROM (:q_left) t \gset
:digest native_int8 FROM (:q_int8) t \gset
:digest native_int8_plain FROM (:q_int8_plain) t \gset
:digest native_int8_none FROM (:q_int8_none) t \gset
:digest native_semi FROM (:q_semi) t \gset
:digest native_float_exact FROM (:q_float_exact) t \gset

-- parallel plans on small tables
SET LOCAL gpujoin.enabled = on;
SET LOCAL gpujoin.device = cpu;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL parallel_leader_participation = on;
-- PostgreSQL's own joins off: the empty side's nested loop would cost nothing
SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;

SELECT matches(pg_temp.plan_shape(:'q_plain'),
               '^Finalize Aggregate\n\s+->  Gather\n.*->  Parallel Custom Scan \(GpuJoin\)\n\s+GPU Aggregates: PARTIAL count\(\*\).*\n\s+Aggregate Mode: partial\n',
               'no GROUP BY: Finalize Aggregate over a Gather over the partial aggregate node');
SELECT matches(pg_temp.plan_shape(:'q_group'),
               '^Finalize (Group|Hash)Aggregate\n.*->  Gather\n.*->  Parallel Custom Scan \(GpuJoin\)\n\s+Group Key: f.g\n\s+GPU Aggregates: PARTIAL count\(\*\).*\n\s+Aggregate Mode: partial\n',
               'GROUP BY: a Finalize Agg over a Gather over the partial aggregate node');
SELECT matches(pg_temp.plan_shape(:'q_having'),
               '^Finalize (Group|Hash)Aggregate\n(.*\n)*\s+Filter: \(\(count\(\*\) > 1000000\).*(.*\n)*\s+Aggregate Mode: partial\n',
               'HAVING is the Finalize Agg''s filter, not the partial node''s');
-- The leader's own line: "Backend: cpu" where it ran a share, "Device: cpu"
-- where the workers took every page before it came to one (a busy machine).
SELECT matches(pg_temp.explain_analyze(:'q_plain'),
               'Workers Launched: [1-9].*Parallel Custom Scan \(GpuJoin\) \(actual rows=1 loops=[2-9]\)\n(.*\n)*\s+(Backend|Device): cpu\n',
               'the partial node runs in every process, on the cpu backend, one row each');
SELECT is(substring(pg_temp.explain_analyze(:'q_plain') FROM 'Pairs Aggregated: ([0-9]+)')::bigint,
          :native_pairs::bigint,
          'EXPLAIN ANALYZE: Pairs Aggregated sums every process''s pairs');

:digest par_plain FROM (:q_plain) t \gset
:digest par_group FROM (:q_group) t \gset
:digest par_having FROM (:q_having) t \gset
:digest par_both FROM (:q_both) t \gset
:digest par_empty FROM (:q_empty) t \gset
:digest par_empty_outer FROM (:q_empty_outer) t \gset
:digest par_nopair FROM (:q_nopair) t \gset
:digest par_nopair_plain FROM (:q_nopair_plain) t \gset
:digest par_left FROM (:q_left) t \gset
:digest par_int8 FROM (:q_int8) t \gset
:digest par_int8_plain FROM (:q_int8_plain) t \gset
:digest par_int8_none FROM (:q_int8_none) t \gset
:digest par_semi FROM (:q_semi) t \gset
:digest par_float_exact FROM (:q_float_exact) t \gset
SELECT is(:'par_plain'::text, :'native_plain'::text, 'count/sum/min/max/avg without GROUP BY: the native results');
SELECT is(:'par_group'::text, :'native_group'::text, 'GROUP BY (a group whose values are all NULL): the native results');
SELECT is(:'par_having'::text, :'native_having'::text, 'GROUP BY with HAVING: the native results');
SELECT is(:'par_both'::text, :'native_both'::text, 'grouping by both sides: the native results');
SELECT is(:'par_empty'::text, :'native_empty'::text, 'an empty inner side: count 0, NULL sum/min/avg as native');
SELECT is(:'par_empty_outer'::text, :'native_empty_outer'::text, 'an empty outer side, GROUP BY: no group, as native');
SELECT is(:'par_nopair'::text, :'native_nopair'::text, 'no pair at all, GROUP BY: no group, as native');
SELECT is(:'par_nopair_plain'::text, :'native_nopair_plain'::text, 'no pair at all, no GROUP BY: one row, as native');
SELECT is(:'par_int8'::text, :'native_int8'::text,
          'sum/avg(int8) past the int8 range, GROUP BY (a group all NULL): the native results');
SELECT is(:'par_int8_plain'::text, :'native_int8_plain'::text,
          'sum/avg(int8) past the int8 range, no GROUP BY: the native results');
SELECT is(:'par_int8_none'::text, :'native_int8_none'::text,
          'sum/avg(int8) over no pair: NULL, as native');
SELECT is(:'par_left'::text, :'native_left'::text, 'a left join in parallel: the native results');
SELECT is(:'par_semi'::text, :'native_semi'::text, 'a semi join in parallel: the native results');
-- float sums of integer values: exact in any order, so the native results
SELECT is(:'par_float_exact'::text, :'native_float_exact'::text,
          'sum(float8) and avg(float4/float8), grouping by both sides: the native results');
SELECT matches(pg_temp.plan_shape(:'q_both'), 'Aggregate Mode: partial',
               'grouping by both sides is a partial aggregate node too');
SELECT matches(pg_temp.plan_shape(:'q_empty'), 'Gather(.*\n)*\s+Aggregate Mode: partial',
               'the empty inner side''s plan is the partial aggregate node');
SELECT matches(pg_temp.plan_shape(:'q_nopair'), 'Gather(.*\n)*\s+Aggregate Mode: partial',
               'so is the plan with no pair');

SELECT matches(pg_temp.plan_shape(:'q_float'), 'GPU Aggregates: PARTIAL count\(\*\), PARTIAL sum\(f.f\)(.*\n)*\s+Aggregate Mode: partial',
               'sum(float8) (a float8 state, float8pl) is a partial aggregate node');
SELECT matches(pg_temp.plan_shape(:'q_float_exact'), 'GPU Aggregates: PARTIAL count\(\*\), PARTIAL sum\(\(\(f.v\)::double precision \* \(d.w\)::double precision\)\), PARTIAL avg(.*\n)*\s+Aggregate Mode: partial',
               'avg(float4/float8) (float8_accum''s {N, Sx, Sxx}) are a partial aggregate node');
SELECT matches(pg_temp.plan_shape(:'q_int8'), 'GPU Aggregates: PARTIAL count\(\*\), PARTIAL sum\(f.b\)(.*\n)*\s+Aggregate Mode: partial',
               'sum/avg(int8) (a serialised state) are a partial aggregate node');
SELECT matches(pg_temp.plan_shape(:'q_int8_none'), 'Aggregate Mode: partial',
               'so is the plan over no pair');

-- aggregates whose partial state the node does not produce: no partial node
SELECT doesnt_match(pg_temp.plan_shape(:'q_strings'), 'Aggregate Mode: partial',
                    'string_agg gets no partial node');
SELECT doesnt_match(pg_temp.plan_shape(:'q_strings'), 'GPU Aggregates',
                    'string_agg gets no aggregate node at all');

-- an argument that overflows: the native plan's error, from the partial node
SELECT matches(pg_temp.plan_shape(:'q_overflow'), 'Aggregate Mode: partial',
               'sum(int4 * int4) is a partial aggregate node');
SET LOCAL gpujoin.enabled = off;
SET LOCAL max_parallel_workers_per_gather = 0;
\set ON_ERROR_STOP 0
SAVEPOINT overflow;
:q_overflow \g /dev/null
\set native_error :ERROR ' ' :LAST_ERROR_SQLSTATE ' ' :LAST_ERROR_MESSAGE
ROLLBACK TO SAVEPOINT overflow;
\set ON_ERROR_STOP 1
SET LOCAL gpujoin.enabled = on;
SET LOCAL max_parallel_workers_per_gather = 2;
\set ON_ERROR_STOP 0
SAVEPOINT overflow;
:q_overflow \g /dev/null
\set par_error :ERROR ' ' :LAST_ERROR_SQLSTATE ' ' :LAST_ERROR_MESSAGE
ROLLBACK TO SAVEPOINT overflow;
\set ON_ERROR_STOP 1
SELECT is(:'par_error'::text, :'native_error'::text,
          'an int4 overflow in an argument: the native plan''s error');
SELECT is(:'par_error'::text, 'true 22003 integer out of range', 'the error is integer out of range');

-- the same through the GPU service, where the cluster has one
SELECT current_setting('gpujoin.service') = 'on' AND
       coalesce((SELECT status LIKE 'ready%' FROM gpujoin_devices() WHERE backend = 'service'), false)
       AS have_service \gset
\if :have_service
SET LOCAL gpujoin.device = service;
-- (the leader's line: "Device: service" where the workers took every page
-- before it came to one, on a busy machine)
SELECT matches(pg_temp.explain_analyze(:'q_group'),
               'Workers Launched: [1-9].*Parallel Custom Scan \(GpuJoin\)(.*\n)*\s+Aggregate Mode: partial\n(.*\n)*\s+(Backend: (cpu|cuda) \(service\)|Device: service)\n',
               'through the service: every process''s partial node is a client of the service');
:digest svc_plain FROM (:q_plain) t \gset
:digest svc_group FROM (:q_group) t \gset
:digest svc_both FROM (:q_both) t \gset
:digest svc_empty FROM (:q_empty) t \gset
:digest svc_nopair FROM (:q_nopair) t \gset
:digest svc_int8 FROM (:q_int8) t \gset
:digest svc_float_exact FROM (:q_float_exact) t \gset
SELECT is(:'svc_plain'::text, :'native_plain'::text, 'through the service, no GROUP BY: the native results');
SELECT is(:'svc_group'::text, :'native_group'::text, 'through the service, GROUP BY: the native results');
SELECT is(:'svc_both'::text, :'native_both'::text, 'through the service, grouping by both sides: the native results');
SELECT is(:'svc_empty'::text, :'native_empty'::text, 'through the service, an empty inner side: the native results');
SELECT is(:'svc_nopair'::text, :'native_nopair'::text, 'through the service, no pair: the native results');
SELECT is(:'svc_int8'::text, :'native_int8'::text, 'through the service, sum/avg(int8): the native results');
SELECT is(:'svc_float_exact'::text, :'native_float_exact'::text,
          'through the service, sum(float8) and avg(float4/float8): the native results');
\set ON_ERROR_STOP 0
SAVEPOINT overflow;
:q_overflow \g /dev/null
\set svc_error :ERROR ' ' :LAST_ERROR_SQLSTATE ' ' :LAST_ERROR_MESSAGE
ROLLBACK TO SAVEPOINT overflow;
\set ON_ERROR_STOP 1
SELECT is(:'svc_error'::text, :'native_error'::text,
          'through the service, an int4 overflow in an argument: the native plan''s error');
\else
SELECT skip('the cluster runs no GPU service', 9);
\endif

SELECT * FROM finish();
ROLLBACK;
