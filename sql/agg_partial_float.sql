--
-- agg_partial_float: sum(float8) and avg(float4/float8) as partial
-- aggregates of a parallel GpuJoin (issue 35).  Under a Gather every process
-- runs the aggregate node over its share of the outer rows and returns
-- PostgreSQL's transition states: sum(float8) the float8 sum (NULL without
-- input), avg the float8[3] {N, Sx, Sxx} of float8_accum(); the Finalize
-- Aggregate above the Gather combines them (float8pl, float8_combine).
--
-- Results are compared with the native plan's (one process, gpujoin off)
-- exactly where every value is a small multiple of 1/8, so that any order
-- of the additions gives the same sums; with values like id / 7, whose sums
-- round differently in each order, they are compared to 1e-12 relative:
-- PostgreSQL's own parallel plan differs there too (which rows each of its
-- processes adds, and in which order, is not fixed either).  NULLs, NaN,
-- +-Infinity, -0.0, a group whose values are all NULL, no pair at all,
-- GROUP BY of either side, and overflow (the error of float8pl and
-- float8_accum, also when only Sxx overflows).
--
SET client_min_messages = warning;
\set VERBOSITY terse

-- parallel workers cannot read temporary tables: plain ones, dropped below.
-- g selects the kind of values of v: 0 all NULL, 1 finite, 2 a NaN among
-- them, 3 +Infinity and -Infinity, 4 -0.0 only, 5 +Infinity among finite.
CREATE TABLE gj_apf_fact AS
    SELECT id, id % 300 AS k, (id % 6)::int2 AS g,
           CASE WHEN id % 6 = 0 OR id % 11 = 0 THEN NULL
                WHEN id % 6 = 2 AND id = 26 THEN 'NaN'::float8
                WHEN id % 6 = 3 AND id = 27 THEN 'Infinity'::float8
                WHEN id % 6 = 3 AND id = 45 THEN '-Infinity'::float8
                WHEN id % 6 = 4 THEN '-0'::float8
                WHEN id % 6 = 5 AND id % 500 = 5 THEN 'Infinity'::float8
                ELSE ((id % 97) - 48) * 0.25 END AS v,
           ((id % 89) - 44)::float4 * 0.5::float4 AS r,
           id / 7.0::float8 AS x,
           CASE WHEN id % 2 = 0 THEN 1e300 ELSE -1e300 END::float8 AS big
    FROM generate_series(1, 6000) id;
CREATE TABLE gj_apf_dim AS
    SELECT k, CASE WHEN k % 23 = 0 THEN NULL ELSE (k % 4) * 0.5 END::float8 AS w,
           k % 3 AS h
    FROM generate_series(0, 299) k;
CREATE TABLE gj_apf_empty (k int, w float8, h int);
ANALYZE gj_apf_fact;
ANALYZE gj_apf_dim;
ANALYZE gj_apf_empty;

\set q_plain 'SELECT count(*), sum(f.v * d.w), avg(f.v * d.w), sum(f.v), avg(f.v), avg(f.r), avg(d.w) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k AND f.g IN (1, 4)'
\set q_outer 'SELECT f.g, count(*), count(f.v), sum(f.v * d.w), avg(f.v * d.w), sum(f.v), avg(f.v), avg(f.r) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k GROUP BY f.g'
\set q_inner 'SELECT d.h, count(*), sum(f.v * d.w), avg(f.v), sum(d.w), avg(d.w) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k < d.k AND f.g = 1 GROUP BY d.h'
\set q_both 'SELECT f.g, d.h, count(*), sum(f.v * d.w), avg(f.v), sum(d.w), avg(d.w), avg(f.r * d.w) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k GROUP BY f.g, d.h'
\set q_range 'SELECT f.g, sum(f.v), avg(d.w), avg(f.v * d.w) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k < d.k GROUP BY f.g'
\set q_empty 'SELECT count(*), sum(f.v), avg(f.v), avg(d.w) FROM gj_apf_fact f JOIN gj_apf_empty d ON f.k = d.k'
\set q_nopair 'SELECT f.g, sum(f.v), avg(f.v) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k + 1000 GROUP BY f.g'
\set q_inexact 'SELECT f.g, sum(f.x * d.w), avg(f.x), avg(f.x * d.w) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k GROUP BY f.g'
\set digest 'SELECT count(*) || \' rows, \' || md5(coalesce(string_agg(t::text, \',\' ORDER BY t::text), \'\')) AS'

-- the native plan's answers, in one process
SET max_parallel_workers_per_gather = 0;
SET gpujoin.enabled = off;
:digest native_plain FROM (:q_plain) t \gset
:digest native_outer FROM (:q_outer) t \gset
:digest native_inner FROM (:q_inner) t \gset
:digest native_both FROM (:q_both) t \gset
:digest native_range FROM (:q_range) t \gset
:digest native_empty FROM (:q_empty) t \gset
:digest native_nopair FROM (:q_nopair) t \gset
SELECT array_agg(s ORDER BY g) AS native_sum, array_agg(a ORDER BY g) AS native_avg,
       array_agg(p ORDER BY g) AS native_pavg
FROM (SELECT f.g, sum(f.x * d.w) s, avg(f.x) a, avg(f.x * d.w) p
      FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k GROUP BY f.g) t \gset

-- parallel plans on small tables, PostgreSQL's own joins off
SET gpujoin.enabled = on;
SET gpujoin.device = cpu;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = on;
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;

-- the plans: the aggregate node is a partial aggregate under the Gather
EXPLAIN (COSTS OFF) SELECT sum(f.v * d.w) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k;
EXPLAIN (COSTS OFF) SELECT avg(f.v) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k;
EXPLAIN (COSTS OFF) SELECT f.g, sum(f.v), avg(f.v * d.w), avg(f.r) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k GROUP BY f.g;
-- grouped by the inner table (made the node's outer, parallel, input) or
-- by both
SELECT gj_plan_lines(:'q_inner', '(Aggregate|Gather|Group Key|GPU Aggregates|Mode|Parallel Seq)', E'\n') AS inner_plan;
SELECT gj_plan_lines(:'q_both', '(Aggregate|Gather|Group Key|GPU Aggregates|Mode)', E'\n') AS both_plan;

-- the results: the native ones (exact data)
:q_outer ORDER BY f.g;
:digest par_plain FROM (:q_plain) t \gset
:digest par_outer FROM (:q_outer) t \gset
:digest par_inner FROM (:q_inner) t \gset
:digest par_both FROM (:q_both) t \gset
:digest par_range FROM (:q_range) t \gset
:digest par_empty FROM (:q_empty) t \gset
:digest par_nopair FROM (:q_nopair) t \gset
SELECT :'par_plain' = :'native_plain' AS plain_native,
       :'par_outer' = :'native_outer' AS group_outer_native,
       :'par_inner' = :'native_inner' AS group_inner_native,
       :'par_both' = :'native_both' AS group_both_native,
       :'par_range' = :'native_range' AS range_native,
       :'par_empty' = :'native_empty' AS empty_native,
       :'par_nopair' = :'native_nopair' AS nopair_native;
:q_empty;
SELECT gj_plan_lines(:'q_empty', '(Gather|Mode)') AS empty_plan;

-- inexact sums: equal to 1e-12 relative (the order of the additions)
SELECT gj_plan_lines(:'q_inexact', '(Mode)') AS inexact_plan;
SELECT array_agg(s ORDER BY g) AS par_sum, array_agg(a ORDER BY g) AS par_avg,
       array_agg(p ORDER BY g) AS par_pavg
FROM (:q_inexact) t(g, s, a, p) \gset
SELECT bool_and(abs(n - p) <= 1e-12 * abs(n)) AS sum_close,
       count(*) AS groups
FROM unnest(:'native_sum'::float8[], :'par_sum'::float8[]) u(n, p);
SELECT bool_and(abs(n - p) <= 1e-12 * abs(n)) AS avg_close
FROM unnest(:'native_avg'::float8[], :'par_avg'::float8[]) u(n, p);
SELECT bool_and(abs(n - p) <= 1e-12 * abs(n)) AS pair_avg_close
FROM unnest(:'native_pavg'::float8[], :'par_pavg'::float8[]) u(n, p);

-- overflow: each error as native's, from the partial node or the Finalize
-- Aggregate.  sum and avg of finite values whose sum is infinite; avg of
-- +-1e300 whose sum is finite but whose Sxx is not (float8_accum raises it).
-- (An infinite input makes no error: group 5 above.)
\set q_sum_over 'SELECT sum(f.big * 1e8) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k AND f.id % 2 = 0'
\set q_avg_over 'SELECT avg(f.big * 1e8) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k AND f.id % 2 = 0'
\set q_sxx_over 'SELECT avg(f.big) FROM gj_apf_fact f JOIN gj_apf_dim d ON f.k = d.k'
SELECT gj_plan_lines(:'q_sum_over', '(Aggregate|Gather|GPU Aggregates|Mode)') AS sum_plan;
SELECT gj_plan_lines(:'q_avg_over', '(Aggregate|Gather|GPU Aggregates|Mode)') AS avg_plan;
SELECT gj_plan_lines(:'q_sxx_over', '(Aggregate|Gather|GPU Aggregates|Mode)') AS sxx_plan;
:q_sum_over;
:q_avg_over;
:q_sxx_over;
SET gpujoin.enabled = off;
SET max_parallel_workers_per_gather = 0;
:q_sum_over;
:q_avg_over;
:q_sxx_over;

RESET gpujoin.enabled;
RESET gpujoin.device;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;
DROP TABLE gj_apf_fact, gj_apf_dim, gj_apf_empty;
