-- service_parallel.sql: parallel GpuJoin through the GPU service
-- (docs/architecture.md, section 8, phases C and D).  Under a Gather every
-- process (leader and workers) is a client of the service, which runs its
-- share of the join on the service's backend: no process opens a device of
-- its own.  Every parallel join type GpuJoin offers (inner, left, semi,
-- anti) gives the native plan's rows; a statement_timeout in the middle of
-- a parallel join leaves nothing in the service.  The inner side is drained
-- once for the whole Gather and shared through the service (EXPLAIN
-- ANALYZE: Inner Rows Drained is the inner side's rows, Inner Side:
-- shared), also when the Gather runs again under a nested loop; an attach
-- with another query's token, or a join naming a bogus shared inner side,
-- is refused; after each statement, a LIMIT, a worker's ERROR and a
-- refused request the service holds no join and no staging memory.  Also:
-- the service is on by default, and a cuda service starts only where an
-- NVIDIA driver is.  Where the inner side has a partial path it is drained
-- in parallel, a share per process, and put together into the one shared
-- side (Inner Side: shared, drained in parallel), with the native plan's
-- rows for every join type and algorithm, without the leader, without
-- workers, and where the shares cannot be shared (each process then drains
-- the whole inner side from the plan's third child).
-- Runs on whichever backend the service has (cpu in CI, cuda on the GPU
-- machine); skipped on a cluster without the service.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(101);

SELECT is((SELECT boot_val FROM pg_settings WHERE name = 'gpujoin.service'), 'on',
          'gpujoin.service is on by default');
SELECT is((SELECT boot_val FROM pg_settings WHERE name = 'gpujoin.service_backend'), 'cuda',
          'gpujoin.service_backend is cuda by default');

\ir lib/plans.sql

CREATE FUNCTION pg_temp.served() RETURNS bigint LANGUAGE sql AS $$
    SELECT substring(status FROM ', ([0-9]+) served;')::bigint
    FROM gpujoin_devices() WHERE backend = 'service'
$$;

-- the service is ready (a cuda service opens its devices first: wait up to
-- 15 s for it, or a run right after the cluster starts skips everything)
CREATE FUNCTION pg_temp.service_ready() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('gpujoin.service') <> 'on' THEN
        RETURN false;
    END IF;
    FOR i IN 1..150 LOOP
        IF coalesce((SELECT status LIKE 'ready%' FROM gpujoin_devices() WHERE backend = 'service'), false) THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RETURN false;
END $$;
SELECT pg_temp.service_ready() AS have_service \gset
\if :have_service
-- parallel workers cannot read temporary tables: plain ones, rolled back
CREATE TABLE gj_par_fact AS
    SELECT g AS id, (g::bigint * 7919) % 20011 AS k,
           CASE WHEN g % 101 = 0 THEN NULL ELSE (g % 977)::float8 END AS f
    FROM generate_series(1, 60000) g;
CREATE TABLE gj_par_dim AS
    SELECT g AS k, g % 13 AS w, (g % 211)::float8 AS f
    FROM generate_series(1, 20000) g;
INSERT INTO gj_par_dim SELECT k, w + 1, f FROM gj_par_dim WHERE k % 10 = 0;  -- duplicate keys
ANALYZE gj_par_fact;
ANALYZE gj_par_dim;

-- Each join runs as a top-level query (a parallel plan is never made for
-- a query that calls a parallel-unsafe function such as pgTAP's, nor for
-- plpgsql's EXECUTE), its rows summed up into a digest that \gset keeps.
\set q_inner 'SELECT f.id, d.w FROM gj_par_fact f JOIN gj_par_dim d ON f.k = d.k'
\set q_left 'SELECT f.id, d.w FROM gj_par_fact f LEFT JOIN gj_par_dim d ON f.k = d.k + 15000'
-- (q_left is planned as a right GpuJoin over two Gathers; q_left_par is parallel)
\set q_left_par 'SELECT f.id, d.w FROM gj_par_fact f LEFT JOIN gj_par_dim d ON f.k = d.k AND d.w < 6'
\set q_semi 'SELECT f.id FROM gj_par_fact f WHERE EXISTS (SELECT 1 FROM gj_par_dim d WHERE d.k = f.k AND d.w > 3)'
\set q_anti 'SELECT f.id FROM gj_par_fact f WHERE NOT EXISTS (SELECT 1 FROM gj_par_dim d WHERE d.k = f.k + 7)'
\set q_band 'SELECT f.id, d.k FROM gj_par_fact f JOIN gj_par_dim d ON d.f BETWEEN f.f - 0.5 AND f.f + 0.5 AND d.k < 200'
\set digest 'SELECT count(*) || \' rows, \' || md5(coalesce(string_agg(t::text, \',\' ORDER BY t::text), \'\')) AS'
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpujoin.enabled = off;
:digest native_inner FROM (:q_inner) t \gset
:digest native_left FROM (:q_left) t \gset
:digest native_left_par FROM (:q_left_par) t \gset
:digest native_semi FROM (:q_semi) t \gset
:digest native_anti FROM (:q_anti) t \gset
:digest native_band FROM (:q_band) t \gset

SET LOCAL gpujoin.enabled = on;
SET LOCAL gpujoin.device = service;
SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL parallel_leader_participation = on;

-- (the leader's line: "Device: service" where the workers took every page
-- before it came to one, on a busy machine; served() below counts the joins)
SELECT matches(pg_temp.explain_analyze(:'q_inner'),
               'Workers Launched: [1-9].*Parallel Custom Scan \(GpuJoin\).*(Backend: (cpu|cuda) \(service\)|Device: service)',
               'a parallel GpuJoin runs under a Gather, in the service');
SELECT matches(pg_temp.explain_analyze(:'q_anti'),
               'Workers Launched: [1-9].*Parallel Custom Scan \(GpuJoin\).*(Backend: (cpu|cuda) \(service\)|Device: service)',
               'a parallel anti join runs under a Gather, in the service');
SELECT pg_temp.served() AS served_before \gset
:digest par_inner FROM (:q_inner) t \gset
-- (a worker that starts after the others read every page has no outer
-- rows and opens no join: how many do depends on timing)
SELECT cmp_ok(pg_temp.served() - :served_before, '>=', 1::bigint,
              'the parallel join''s processes are clients of the service: it served their joins');
:digest par_left FROM (:q_left) t \gset
:digest par_semi FROM (:q_semi) t \gset
:digest par_anti FROM (:q_anti) t \gset
:digest par_band FROM (:q_band) t \gset
SELECT is(:'par_inner'::text, :'native_inner'::text, 'inner hash join, parallel in the service: the rows of the native plan');
SELECT is(:'par_left'::text, :'native_left'::text, 'left hash join, parallel in the service: the rows of the native plan');
SELECT is(:'par_semi'::text, :'native_semi'::text, 'semi join, parallel in the service: the rows of the native plan');
SELECT is(:'par_anti'::text, :'native_anti'::text, 'anti join, parallel in the service: the rows of the native plan');
SELECT is(:'par_band'::text, :'native_band'::text, 'band join, parallel in the service: the rows of the native plan');
SET LOCAL gpujoin.device_memory = '1MB';
:digest tiles_left FROM (:q_left) t \gset
:digest tiles_anti FROM (:q_anti) t \gset
SELECT is(:'tiles_left'::text, :'native_left'::text, 'left hash join, parallel in the service with many tiles: the rows of the native plan');
SELECT is(:'tiles_anti'::text, :'native_anti'::text, 'anti join, parallel in the service with many tiles: the rows of the native plan');
RESET gpujoin.device_memory;

-- The inner side drained once for the whole Gather, read by every process
-- from the service's staging area (shared_inner.c)
CREATE FUNCTION pg_temp.inner_side(q text) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(substring(e FROM 'Inner Rows Drained: ([0-9]+)'), '?') || ' rows drained' ||
           CASE WHEN e ~ 'Inner Side: shared' THEN ', shared' ELSE '' END
    FROM pg_temp.explain_analyze(q) e
$$;
-- the service idle: no join open, no staging memory (up to 5 s for the
-- workers to close theirs)
CREATE FUNCTION pg_temp.service_idle() RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..50 LOOP
        IF (SELECT status FROM gpujoin_devices() WHERE backend = 'service')
           ~ ', 0 bytes in use, 0 joins running,' THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RETURN false;
END $$;
-- the error a parallel EXPLAIN ANALYZE raises, or 'none'
CREATE FUNCTION pg_temp.error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_temp.explain_analyze(q);
    RETURN 'none';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLERRM;
END $$;
SELECT count(*) AS dim_rows, count(*) FILTER (WHERE w > 3) AS dim_w3, count(*) FILTER (WHERE w < 6) AS dim_w6,
       count(*) FILTER (WHERE k < 200) AS dim_k200 FROM gj_par_dim \gset
SELECT is(pg_temp.inner_side(:'q_inner'), :'dim_rows' || ' rows drained, shared',
          'inner join: the inner side is drained once for the Gather and shared');
SELECT is(pg_temp.inner_side(:'q_left_par'), :'dim_w6' || ' rows drained, shared',
          'left join: the inner side is drained once for the Gather and shared');
:digest par_left_par FROM (:q_left_par) t \gset
SELECT is(:'par_left_par'::text, :'native_left_par'::text, 'left join, parallel with a shared inner side: the rows of the native plan');
SELECT is(pg_temp.inner_side(:'q_semi'), :'dim_w3' || ' rows drained, shared',
          'semi join: the inner side is drained once for the Gather and shared');
SELECT is(pg_temp.inner_side(:'q_anti'), :'dim_rows' || ' rows drained, shared',
          'anti join: the inner side is drained once for the Gather and shared');
SELECT is(pg_temp.inner_side(:'q_band'), :'dim_k200' || ' rows drained, shared',
          'band join: the inner side is drained once for the Gather and shared');
SELECT ok(pg_temp.service_idle(), 'after the shared joins the service holds no join and no staging memory');

-- The inner side drained in parallel (shared_inner.c): where the
-- inner rel has a partial path, every process drains a share of it (a
-- Parallel Seq Scan under the GpuJoin) and the last one to finish puts the
-- shares together into the one shared inner side; Inner Rows Drained counts
-- its rows once.  Inner sides with NULL keys and duplicates; each join type
-- and algorithm gives the native plan's rows.
CREATE TABLE gj_pi_outer AS
    SELECT g AS id, CASE WHEN g % 89 = 0 THEN NULL ELSE (g::bigint * 7919) % 20011 END AS k,
           (g % 977)::float8 AS f
    FROM generate_series(1, 60000) g;
CREATE TABLE gj_pi_inner AS
    SELECT CASE WHEN g % 97 = 0 THEN NULL ELSE g % 15000 END AS k, g % 13 AS w,
           (g % 211)::float8 AS f, 'v' || g AS t
    FROM generate_series(1, 20000) g;
-- an inner side big enough that the workers, which start later than the
-- leader, find pages of it to drain too
CREATE TABLE gj_pi_big AS
    SELECT g AS id, CASE WHEN g % 89 = 0 THEN NULL ELSE (g::bigint * 7919) % 20011 END AS k,
           (g % 977)::float8 AS f, 't' || (g % 5000) AS t
    FROM generate_series(1, 400000) g;
ANALYZE gj_pi_outer;
ANALYZE gj_pi_inner;
ANALYZE gj_pi_big;
SELECT count(*) AS pi_big_f500 FROM gj_pi_big WHERE f < 500 \gset
SELECT count(*) AS pi_rows, count(*) FILTER (WHERE k < 300) AS pi_k300 FROM gj_pi_inner \gset
\set qp_inner 'SELECT o.id, i.w, i.t FROM gj_pi_outer o JOIN gj_pi_inner i ON o.k = i.k'
\set qp_left 'SELECT o.id, i.w, i.t FROM gj_pi_outer o LEFT JOIN gj_pi_inner i ON o.k = i.k AND i.w < 6'
\set qp_semi 'SELECT o.id FROM gj_pi_outer o WHERE EXISTS (SELECT 1 FROM gj_pi_inner i WHERE i.k = o.k AND i.w > 3)'
\set qp_anti 'SELECT o.id FROM gj_pi_outer o WHERE NOT EXISTS (SELECT 1 FROM gj_pi_inner i WHERE i.k = o.k + 7)'
\set qp_band 'SELECT o.id, i.t FROM gj_pi_outer o JOIN gj_pi_inner i ON i.f BETWEEN o.f - 0.5 AND o.f + 0.5 AND i.k < 300'
\set qp_nl 'SELECT o.id, i.t FROM gj_pi_outer o JOIN gj_pi_inner i ON o.k % 300 < i.k AND i.k < 3'
\set qp_nl_anti 'SELECT o.id FROM gj_pi_outer o WHERE NOT EXISTS (SELECT 1 FROM gj_pi_inner i WHERE o.k % 300 < i.k AND i.k < 3)'
\set qp_big_semi 'SELECT o.id FROM gj_pi_outer o WHERE EXISTS (SELECT 1 FROM gj_pi_big b WHERE b.k = o.k AND b.f < 500)'
\set qp_big_anti 'SELECT o.id FROM gj_pi_outer o WHERE NOT EXISTS (SELECT 1 FROM gj_pi_big b WHERE b.k = o.k + 5 AND b.f < 500)'
\set qp_big_left 'SELECT o.id, b.t FROM gj_pi_outer o LEFT JOIN gj_pi_big b ON b.k = o.k AND b.f < 30'
\set qp_empty 'SELECT o.id FROM gj_pi_outer o WHERE NOT EXISTS (SELECT 1 FROM gj_pi_inner i WHERE i.k = o.k AND i.w > 100)'
SET LOCAL gpujoin.enabled = off;
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL enable_hashjoin = on;
SET LOCAL enable_nestloop = on;
:digest pn_inner FROM (:qp_inner) t \gset
:digest pn_left FROM (:qp_left) t \gset
:digest pn_semi FROM (:qp_semi) t \gset
:digest pn_anti FROM (:qp_anti) t \gset
:digest pn_band FROM (:qp_band) t \gset
:digest pn_nl FROM (:qp_nl) t \gset
:digest pn_nl_anti FROM (:qp_nl_anti) t \gset
:digest pn_empty FROM (:qp_empty) t \gset
:digest pn_big_semi FROM (:qp_big_semi) t \gset
:digest pn_big_anti FROM (:qp_big_anti) t \gset
:digest pn_big_left FROM (:qp_big_left) t \gset
SET LOCAL gpujoin.enabled = on;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_nestloop = off;
CREATE FUNCTION pg_temp.inner_drain(q text) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(substring(e FROM 'Inner Rows Drained: ([0-9]+)'), '?') || ' rows drained, ' ||
           coalesce(substring(e FROM 'Inner Side: ([a-z, :]+)'), 'not shared')
    FROM pg_temp.explain_analyze(q) e
$$;
SELECT matches(pg_temp.explain_analyze(:'qp_inner'),
               'Workers Launched: [1-9].*Parallel Custom Scan \(GpuJoin\).*Inner Side: shared, drained in parallel.*'
               '->  Parallel Seq Scan on gj_pi_outer o.*->  Parallel Seq Scan on gj_pi_inner i.*->  Seq Scan on gj_pi_inner i \(never executed\)',
               'an inner side with a partial path: a Parallel Seq Scan under the GpuJoin, drained in parallel and shared');
SELECT is(pg_temp.inner_drain(:'qp_inner'), :'pi_rows' || ' rows drained, shared, drained in parallel',
          '... its rows drained once over all the processes');
SELECT is(pg_temp.inner_drain(:'qp_band'), :'pi_k300' || ' rows drained, shared, drained in parallel',
          'a band join''s filtered inner side drained in parallel, its rows once');
SET LOCAL gpujoin.algorithm = hash;
:digest pp_inner FROM (:qp_inner) t \gset
:digest pp_left FROM (:qp_left) t \gset
:digest pp_semi FROM (:qp_semi) t \gset
:digest pp_anti FROM (:qp_anti) t \gset
SELECT is(:'pp_inner'::text, :'pn_inner'::text, 'inner hash join, inner side drained in parallel: the rows of the native plan');
SELECT is(:'pp_left'::text, :'pn_left'::text, 'left hash join, inner side drained in parallel: the rows of the native plan');
SELECT is(:'pp_semi'::text, :'pn_semi'::text, 'semi hash join, inner side drained in parallel: the rows of the native plan');
SELECT is(:'pp_anti'::text, :'pn_anti'::text, 'anti hash join, inner side drained in parallel: the rows of the native plan');
SET LOCAL gpujoin.algorithm = sortmerge;
:digest pp_inner FROM (:qp_inner) t \gset
:digest pp_left FROM (:qp_left) t \gset
:digest pp_semi FROM (:qp_semi) t \gset
:digest pp_anti FROM (:qp_anti) t \gset
SELECT is(:'pp_inner'::text, :'pn_inner'::text, 'inner sort-merge join, inner side drained in parallel: the rows of the native plan');
SELECT is(:'pp_left'::text, :'pn_left'::text, 'left sort-merge join, inner side drained in parallel: the rows of the native plan');
SELECT is(:'pp_semi'::text, :'pn_semi'::text, 'semi sort-merge join, inner side drained in parallel: the rows of the native plan');
SELECT is(:'pp_anti'::text, :'pn_anti'::text, 'anti sort-merge join, inner side drained in parallel: the rows of the native plan');
RESET gpujoin.algorithm;
:digest pp_band FROM (:qp_band) t \gset
SELECT is(:'pp_band'::text, :'pn_band'::text, 'band join, inner side drained in parallel: the rows of the native plan');
-- the aggregate node's partial paths: a count needs only each outer row's
-- matches, so its inner side is drained in parallel too; an argument of
-- the inner side keeps it drained by one process (gpujoin_agg_path.c)
\set qp_agg_count 'SELECT count(*) FROM gj_pi_outer o JOIN gj_pi_inner i ON i.f BETWEEN o.f - 0.5 AND o.f + 0.5'
\set qp_agg_sum 'SELECT sum(i.w) FROM gj_pi_outer o JOIN gj_pi_inner i ON i.f BETWEEN o.f - 0.5 AND o.f + 0.5'
SET LOCAL gpujoin.enabled = off;
SELECT (:qp_agg_count) AS pn_agg_count, (:qp_agg_sum) AS pn_agg_sum \gset
SET LOCAL gpujoin.enabled = on;
SELECT matches(pg_temp.explain_analyze(:'qp_agg_count'),
               'Parallel Custom Scan \(GpuJoin\).*GPU Aggregates: PARTIAL count\(\*\).*Inner Side: shared, drained in parallel',
               'a partial count(*) over a band join: its inner side drained in parallel');
SELECT is((:qp_agg_count), :'pn_agg_count'::bigint, '... and the native count');
SELECT matches(pg_temp.explain_analyze(:'qp_agg_sum'),
               'Parallel Custom Scan \(GpuJoin\).*GPU Aggregates: PARTIAL sum\(i\.w\).*Inner Side: shared\n',
               'a partial sum of an inner column: its inner side drained by one process, shared');
SELECT is((:qp_agg_sum), :'pn_agg_sum'::bigint, '... and the native sum');
-- the nested loop asked for: its bound o.k % 300 < i.k also makes a range,
-- and which of the two the costs pick is not what this checks
SET LOCAL gpujoin.algorithm = nestloop;
SELECT matches(pg_temp.explain_analyze(:'qp_nl'), 'Algorithm: nestloop.*Inner Side: shared, drained in parallel',
               'a nested loop with its inner side drained in parallel');
:digest pp_nl FROM (:qp_nl) t \gset
:digest pp_nl_anti FROM (:qp_nl_anti) t \gset
RESET gpujoin.algorithm;
SELECT is(:'pp_nl'::text, :'pn_nl'::text, 'inner nested loop, inner side drained in parallel: the rows of the native plan');
SELECT is(:'pp_nl_anti'::text, :'pn_nl_anti'::text, 'anti nested loop, inner side drained in parallel: the rows of the native plan');
-- a big inner side: shares of several processes put together
SELECT is(pg_temp.inner_drain(:'qp_big_semi'), :'pi_big_f500' || ' rows drained, shared, drained in parallel',
          'a big inner side drained in parallel: its rows once over all the processes');
:digest pp_big_semi FROM (:qp_big_semi) t \gset
:digest pp_big_anti FROM (:qp_big_anti) t \gset
SELECT is(:'pp_big_semi'::text, :'pn_big_semi'::text, 'semi join, a big inner side drained in parallel: the rows of the native plan');
SELECT is(:'pp_big_anti'::text, :'pn_big_anti'::text, 'anti join, a big inner side drained in parallel: the rows of the native plan');
:digest pp_big_left FROM (:qp_big_left) t \gset
SELECT is(:'pp_big_left'::text, :'pn_big_left'::text, 'left join returning text, a big inner side drained in parallel: the rows of the native plan');
-- no share has a row: every process has the empty inner side
SELECT is(pg_temp.inner_drain(:'qp_empty'), '0 rows drained, shared, drained in parallel',
          'an empty inner side drained in parallel');
:digest pp_empty FROM (:qp_empty) t \gset
SELECT is(:'pp_empty'::text, :'pn_empty'::text, 'anti join with an empty inner side drained in parallel: the rows of the native plan');
-- the leader does not take part: the workers' shares are the whole side
SET LOCAL parallel_leader_participation = off;
SELECT is(pg_temp.inner_drain(:'qp_inner'), :'pi_rows' || ' rows drained, shared, drained in parallel',
          'parallel_leader_participation off: the workers drain the inner side in parallel');
:digest pp_inner FROM (:qp_inner) t \gset
:digest pp_anti FROM (:qp_anti) t \gset
SELECT is(:'pp_inner'::text, :'pn_inner'::text, 'parallel_leader_participation off, inner join: the rows of the native plan');
SELECT is(:'pp_anti'::text, :'pn_anti'::text, 'parallel_leader_participation off, anti join: the rows of the native plan');
RESET parallel_leader_participation;
-- no worker starts: the leader's share is the whole side
SET LOCAL max_parallel_workers = 0;
SELECT matches(pg_temp.explain_analyze(:'qp_inner'),
               'Workers Launched: 0.*Inner Rows Drained: ' || :'pi_rows' || E'\n *Inner Side: shared, drained in parallel',
               'no worker launched: the leader drains the whole inner side as its share');
:digest pp_inner FROM (:qp_inner) t \gset
:digest pp_left FROM (:qp_left) t \gset
SELECT is(:'pp_inner'::text, :'pn_inner'::text, 'no worker launched, inner join: the rows of the native plan');
SELECT is(:'pp_left'::text, :'pn_left'::text, 'no worker launched, left join: the rows of the native plan');
RESET max_parallel_workers;
-- a share finds no room in the staging area: no process has the whole side
-- from the shares, so each drains it whole from the plan's third child
SET LOCAL gpujoin.debug_fault = inner_share_no_room;
SELECT matches(pg_temp.explain_analyze(:'qp_inner'),
               'Inner Side: drained in parallel, not shared.*->  Seq Scan on gj_pi_inner i \(actual rows=' || :'pi_rows',
               'the shares not shared: each process drains the whole inner side from its whole plan');
:digest pp_inner FROM (:qp_inner) t \gset
:digest pp_semi FROM (:qp_semi) t \gset
SELECT is(:'pp_inner'::text, :'pn_inner'::text, 'the shares not shared, inner join: the rows of the native plan');
SELECT is(:'pp_semi'::text, :'pn_semi'::text, 'the shares not shared, semi join: the rows of the native plan');
RESET gpujoin.debug_fault;
-- several processes drain shares, put together into one side (the first
-- waits for a second: the fault inner_drain_together; a small inner side is
-- otherwise often drained by the leader alone before a worker starts)
SET LOCAL gpujoin.debug_fault = inner_drain_together;
SELECT matches(pg_temp.explain_analyze(:'qp_inner'),
               'Inner Rows Drained: ' || :'pi_rows' || E'\n *Inner Side: shared, drained in parallel\n *Inner Shares Drained: [2-9]',
               'two or more processes drain shares of the inner side, its rows once in all');
:digest pp_inner FROM (:qp_inner) t \gset
:digest pp_left FROM (:qp_left) t \gset
SELECT is(:'pp_inner'::text, :'pn_inner'::text, 'the inner side from several shares, inner join: the rows of the native plan');
SELECT is(:'pp_left'::text, :'pn_left'::text, 'the inner side from several shares, left join: the rows of the native plan');
RESET gpujoin.debug_fault;
-- planned to drain in parallel, run where sharing does not apply (a generic
-- plan, gpujoin.parallel_shared_inner off at execution)
SET LOCAL plan_cache_mode = force_generic_plan;
PREPARE gj_pi_prepared AS SELECT count(*) || ' rows, ' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) AS d
    FROM (SELECT o.id, i.w, i.t FROM gj_pi_outer o JOIN gj_pi_inner i ON o.k = i.k) t;
SET LOCAL gpujoin.parallel_shared_inner = off;
EXECUTE gj_pi_prepared \gset pp_prep_
SELECT is(:'pp_prep_d'::text, :'pn_inner'::text, 'planned to drain in parallel, run unshared: the rows of the native plan');
RESET gpujoin.parallel_shared_inner;
DEALLOCATE gj_pi_prepared;
RESET plan_cache_mode;
-- with the setting off, one process drains the inner side for all
SET LOCAL gpujoin.parallel_inner_drain = off;
SELECT is(pg_temp.inner_drain(:'qp_inner'), :'pi_rows' || ' rows drained, shared',
          'gpujoin.parallel_inner_drain = off: one process drains the inner side, shared');
RESET gpujoin.parallel_inner_drain;
-- a Gather rescanned under a nested loop drains its inner side in parallel
-- anew each run (a new epoch)
SET LOCAL enable_nestloop = on;
SET LOCAL enable_material = off;
SET LOCAL gpujoin.enable_aggregate = off;
\set qp_rescan 'SELECT v.x, s.c FROM (VALUES (1), (2), (3)) v(x) LEFT JOIN (SELECT count(*) AS c FROM gj_pi_outer o JOIN gj_pi_inner i ON o.k = i.k) s ON s.c::text || \'a\' <> v.x::text'
SELECT matches(pg_temp.explain_analyze(:'qp_rescan'),
               'Gather \(actual rows=[0-9]+ loops=3\).*Inner Rows Drained: ' || 3 * :pi_rows || E'\n *Inner Side: shared, drained in parallel',
               'rescanned three times under a nested loop: the inner side drained in parallel once per run');
:digest pp_rescan FROM (:qp_rescan) t \gset
SELECT is(:'pp_rescan'::text,
          (SELECT count(*) || ' rows, ' || md5(string_agg(t::text, ',' ORDER BY t::text))
           FROM (SELECT x, split_part(:'pn_inner', ' ', 1)::bigint AS c FROM (VALUES (1), (2), (3)) v(x)) t),
          'the rescanned join with its inner side drained in parallel: the rows of the native plan');
SET LOCAL enable_nestloop = off;
RESET enable_material;
RESET gpujoin.enable_aggregate;
SELECT ok(pg_temp.service_idle(), 'after the inner sides drained in parallel the service holds no join and no staging memory');

-- an outer side big enough that every process gets pages of it: each
-- process's join reads the inner side sorted or hashed once in the service
-- (on a backend with prepare_inner)
CREATE TABLE gj_par_big AS
    SELECT g AS id, (g::bigint * 7919) % 20011 AS k, (g % 977)::float8 AS f
    FROM generate_series(1, 400000) g;
ANALYZE gj_par_big;
\set q_big_hash 'SELECT b.id, d.w FROM gj_par_big b JOIN gj_par_dim d ON b.k = d.k'
\set q_big_band 'SELECT b.id, d.k FROM gj_par_big b JOIN gj_par_dim d ON d.f BETWEEN b.f - 0.5 AND b.f + 0.5 AND d.k < 150'
\set digest_sum 'SELECT count(*) || \' rows, \' || sum(hashtext(t::text)::bigint) AS'
:digest_sum par_big_hash FROM (:q_big_hash) t \gset
:digest_sum par_big_band FROM (:q_big_band) t \gset
SET LOCAL gpujoin.enabled = off;
SET LOCAL enable_hashjoin = on;
SET LOCAL enable_nestloop = on;
:digest_sum native_big_hash FROM (:q_big_hash) t \gset
:digest_sum native_big_band FROM (:q_big_band) t \gset
SET LOCAL gpujoin.enabled = on;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_nestloop = off;
SELECT is(:'par_big_hash'::text, :'native_big_hash'::text, 'hash join, every process on the inner side hashed once: the rows of the native plan');
SELECT is(:'par_big_band'::text, :'native_big_band'::text, 'band join, every process on the inner side sorted once: the rows of the native plan');

-- with gpujoin.parallel_shared_inner off, every process drains it itself
SET LOCAL gpujoin.parallel_shared_inner = off;
SELECT matches(pg_temp.inner_side(:'q_inner'), '^[0-9]+ rows drained$',
               'gpujoin.parallel_shared_inner = off: not shared');
SELECT cmp_ok(substring(pg_temp.explain_analyze(:'q_inner') FROM 'Inner Rows Drained: ([0-9]+)')::bigint,
              '>', :'dim_rows'::bigint, '... and each process drains the inner side itself');
:digest unshared_inner FROM (:q_inner) t \gset
SELECT is(:'unshared_inner'::text, :'native_inner'::text, 'inner join, parallel, unshared: the rows of the native plan');
RESET gpujoin.parallel_shared_inner;

-- a Gather rescanned under a nested loop shares its inner side anew each run
SET LOCAL enable_nestloop = on;
SET LOCAL enable_material = off;
\set q_rescan 'SELECT v.x, s.c FROM (VALUES (1), (2), (3)) v(x) LEFT JOIN (SELECT count(*) AS c FROM gj_par_fact f JOIN gj_par_dim d ON f.k = d.k) s ON s.c::text || \'a\' <> v.x::text'
SELECT matches(pg_temp.explain_analyze(:'q_rescan'),
               'Gather \(actual rows=[0-9]+ loops=3\).*Inner Rows Drained: ' || 3 * :dim_rows || '.*Inner Side: shared',
               'rescanned three times under a nested loop: the inner side drained once per run');
:digest par_rescan FROM (:q_rescan) t \gset
SET LOCAL enable_nestloop = off;
:digest native_rescan FROM (SELECT v.x, s.c FROM (VALUES (1), (2), (3)) v(x), (SELECT count(*) AS c FROM gj_par_fact f JOIN gj_par_dim d ON f.k = d.k) s) t \gset
SELECT is(:'par_rescan'::text, :'native_rescan'::text, 'the rescanned parallel join: the rows of the native plan');
RESET enable_material;

-- a LIMIT stops the Gather early: nothing stays in the service
:digest par_limit FROM (SELECT * FROM (:q_inner) j LIMIT 5) t \gset
SELECT is(split_part(:'par_limit', ',', 1), '5 rows', 'a LIMIT above the parallel join');
SELECT ok(pg_temp.service_idle(), 'after the LIMIT the service holds no join and no staging memory');

-- a worker's ERROR in the middle of the join
SELECT is(pg_temp.error_of('SELECT f.id, d.w FROM gj_par_fact f JOIN gj_par_dim d ON f.k = d.k WHERE f.id / (d.w - 5) > -1000000'),
          'division by zero', 'an ERROR in the processes of a shared-inner join');
SELECT ok(pg_temp.service_idle(), 'after the ERROR the service holds no join and no staging memory');

-- an attach with another query's token is refused: each process drains the
-- inner side itself, with the same rows
SET LOCAL gpujoin.debug_fault = service_foreign_inner;
SELECT cmp_ok(substring(pg_temp.explain_analyze(:'q_inner') FROM 'Inner Rows Drained: ([0-9]+)')::bigint,
              '>', :'dim_rows'::bigint, 'an attach with another query''s token is refused: the processes drain the inner side themselves');
:digest foreign_inner FROM (:q_inner) t \gset
SELECT is(:'foreign_inner'::text, :'native_inner'::text, '... with the rows of the native plan');
-- a join naming a shared inner side that does not exist is refused
SET LOCAL gpujoin.debug_fault = service_bad_inner;
SELECT matches(pg_temp.error_of(:'q_inner'), 'GpuJoin failed on the (cpu|cuda) \(service\) backend',
               'a join naming a bogus shared inner side is refused');
RESET gpujoin.debug_fault;
SELECT ok(pg_temp.service_idle(), 'after the refused requests the service holds no join and no staging memory');

-- a statement_timeout while the workers' joins run in the service
CREATE FUNCTION pg_temp.cancelled(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'finished';
EXCEPTION WHEN query_canceled THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
SET LOCAL statement_timeout = '300ms';
\set q_slow 'SELECT count(*) FROM (SELECT x.id FROM gj_par_fact x JOIN gj_par_dim y ON x.k * 3 + y.k % 7 > x.k + y.k OFFSET 0) t'
SELECT matches(pg_temp.explain_analyze(replace(:'q_slow', 'y.k OFFSET', 'y.k AND y.k < 10 OFFSET')),
               'Workers Launched: [1-9].*Parallel Custom Scan \(GpuJoin\)',
               'the slow join (on less input) is a parallel GpuJoin');
SELECT is(pg_temp.cancelled(:'q_slow'),
          '57014 canceling statement due to statement timeout',
          'statement_timeout ends a parallel join in the service with the usual error');
SET LOCAL statement_timeout = 0;
-- the workers may still be closing their joins: service_idle gives them 5 s
SELECT ok(pg_temp.service_idle(),
          'the cancelled parallel join left no staging memory and no join in the service');
SELECT is((SELECT count(*) || ' rows' FROM gj_par_fact f JOIN gj_par_dim d ON f.k = d.k),
          split_part(:'native_inner'::text, ',', 1), 'the next join in the service works');

-- a statement_timeout while the processes drain the inner side in parallel
-- (a filter that sleeps makes the drain take seconds)
CREATE FUNCTION gj_pi_slow(int) RETURNS bool LANGUAGE plpgsql PARALLEL SAFE AS $$
BEGIN
    PERFORM pg_sleep(0.001);
    RETURN true;
END $$;
\set qp_slow 'SELECT count(*) FROM gj_pi_outer o JOIN gj_pi_inner i ON o.k = i.k AND gj_pi_slow(i.w)'
SELECT matches(pg_temp.plan_shape(:'qp_slow'), 'Parallel Custom Scan \(GpuJoin\).*Parallel Seq Scan on gj_pi_inner i',
               'the slow drain is planned with its inner side drained in parallel');
SET LOCAL statement_timeout = '500ms';
SELECT is(pg_temp.cancelled(:'qp_slow'), '57014 canceling statement due to statement timeout',
          'statement_timeout while the processes drain the inner side in parallel: the usual error');
SET LOCAL statement_timeout = 0;
SELECT ok(pg_temp.service_idle(),
          'the join cancelled mid-drain left no staging memory and no join in the service');

-- The drain's workers: where the service runs cuda, a partial GpuJoin over a
-- Parallel Seq Scan of a table gets a worker per 4,096 pages (its processes
-- only drain; gpujoin_partial_outer_path), more than PostgreSQL's log3 rule
-- gives; on the cpu service PostgreSQL's count stands, and so does a
-- table's parallel_workers setting on either.  12,433 pages: PostgreSQL
-- gives 2 workers at min_parallel_table_scan_size 16MB, the rule 3.
CREATE TABLE gj_par_wide AS
    SELECT g AS k, (g % 100)::float8 AS v FROM generate_series(1, 2300000) g;
ANALYZE gj_par_wide;
SET LOCAL max_parallel_workers_per_gather = 8;
SET LOCAL min_parallel_table_scan_size = '16MB';
\set q_wide 'SELECT count(*) FROM gj_par_wide w JOIN gj_par_dim d ON w.k = d.k'
SELECT CASE WHEN current_setting('gpujoin.service_backend') = 'cuda' THEN 3 ELSE 2 END AS wide_workers \gset
SELECT matches(pg_temp.plan_shape(:'q_wide'),
               'Workers Planned: ' || :wide_workers || '\n.*Parallel Custom Scan \(GpuJoin\).*Parallel Seq Scan on gj_par_wide w',
               'a partial GpuJoin over 12,433 pages: ' || :wide_workers || ' workers on the ' ||
               current_setting('gpujoin.service_backend') || ' service');
SELECT (:q_wide) AS wide_count \gset
ALTER TABLE gj_par_wide SET (parallel_workers = 2);
SELECT matches(pg_temp.plan_shape(:'q_wide'),
               'Workers Planned: 2\n.*Parallel Custom Scan \(GpuJoin\).*Parallel Seq Scan on gj_par_wide w',
               'the table''s parallel_workers setting stands');
SET LOCAL gpujoin.enabled = off;
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL enable_hashjoin = on;
SELECT is(:wide_count::bigint, (:q_wide), 'the count with the drain''s workers equals the native one');

-- GROUP BY an inner-side key: the processes number the shared inner
-- side's groups together, each taking chunks of its rows, into a table in
-- room after the side (gpujoin_agg_shared_groups.c; EXPLAIN ANALYZE: Inner
-- Groups Numbered Together, the processes that did); a key that defers a
-- row is numbered by each process, as before.  The answers are the native
-- plan's.  (Integer sums: a parallel float sum may differ in its last bits
-- by the order it adds.  The group of -0.0 and 0.0 shows the key of one of
-- its rows, as PostgreSQL's own plans do, which differs with the order:
-- the digest adds 0, which makes -0.0 0.)
\set qg_int 'SELECT d.w % 5 AS g, count(*), sum(f.id), min(f.f), max(f.f) FROM gj_par_fact f JOIN gj_par_dim d ON f.k = d.k GROUP BY 1'
\set qg_float 'SELECT (d.f - 105) * (d.w - 6) AS g, count(*), sum(f.id) FROM gj_par_fact f JOIN gj_par_dim d ON f.k = d.k GROUP BY 1'
\set qg_both 'SELECT f.k % 3 AS a, d.w AS b, count(*), sum(f.id) FROM gj_par_fact f JOIN gj_par_dim d ON f.k = d.k GROUP BY 1, 2'
\set qg_deferred 'SELECT d.k * 200000 AS g, count(*) FROM gj_par_fact f JOIN gj_par_dim d ON f.k = d.k WHERE f.k < 10000 GROUP BY 1'
-- an inner side of ten chunks of rows, with a NULL group; and one with
-- more groups than the table takes (150,000): numbered by each process
CREATE TABLE gj_grp_inner AS
    SELECT g AS k, CASE WHEN g % 53 = 0 THEN NULL ELSE g % 700 END AS c
    FROM generate_series(1, 150000) g;
CREATE TABLE gj_grp_outer AS
    SELECT g AS id, (g::bigint * 7919) % 160000 AS k FROM generate_series(1, 400000) g;
ANALYZE gj_grp_inner;
ANALYZE gj_grp_outer;
\set qg_chunks 'SELECT i.c AS g, count(*), sum(o.id) FROM gj_grp_outer o JOIN gj_grp_inner i ON o.k = i.k GROUP BY 1'
\set qg_many 'SELECT i.k AS g, count(*), sum(o.id) FROM gj_grp_outer o JOIN gj_grp_inner i ON o.k = i.k GROUP BY 1'
SET LOCAL gpujoin.enabled = off;
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL enable_hashjoin = on;
SET LOCAL enable_mergejoin = on;
:digest ng_int FROM (:qg_int) t \gset
:digest ng_float FROM (SELECT g + 0 AS g, count, sum FROM (:qg_float) s) t \gset
:digest ng_both FROM (:qg_both) t \gset
:digest ng_deferred FROM (:qg_deferred) t \gset
:digest ng_chunks FROM (:qg_chunks) t \gset
:digest ng_many FROM (:qg_many) t \gset
SET LOCAL gpujoin.enabled = on;
SET LOCAL gpujoin.device = service;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL enable_nestloop = off;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT matches(pg_temp.explain_analyze(:'qg_int'),
               'Workers Launched: [1-9].*Parallel Custom Scan \(GpuJoin\).*GPU Aggregates.*Inner Side: shared.*Inner Groups Numbered Together: [1-9]',
               'GROUP BY an inner key under a Gather: its groups numbered by the processes together');
SELECT matches(pg_temp.explain_analyze(:'qg_float'), 'Inner Groups Numbered Together',
               '... also a float8 key');
SELECT doesnt_match(pg_temp.explain_analyze(:'qg_deferred'), 'Inner Groups Numbered Together',
                    'a key that overflows on rows that join nothing: numbered by each process');
SELECT matches(pg_temp.explain_analyze(:'qg_chunks'),
               'Inner Rows Drained: 150000.*Groups of Outer x Inner Rows: 1 x 701.*Inner Groups Numbered Together',
               '150,000 inner rows in ten chunks, 700 groups and NULL: numbered together');
SELECT doesnt_match(pg_temp.explain_analyze(:'qg_many'), 'Inner Groups Numbered Together',
                    '150,000 inner groups: more than the table takes, numbered by each process');
:digest pg_int FROM (:qg_int) t \gset
:digest pg_float FROM (SELECT g + 0 AS g, count, sum FROM (:qg_float) s) t \gset
:digest pg_both FROM (:qg_both) t \gset
:digest pg_deferred FROM (:qg_deferred) t \gset
:digest pg_chunks FROM (:qg_chunks) t \gset
:digest pg_many FROM (:qg_many) t \gset
SELECT is(:'pg_int'::text, :'ng_int'::text, 'GROUP BY an inner int4 key, numbered together: the native plan''s groups');
SELECT is(:'pg_float'::text, :'ng_float'::text, 'GROUP BY an inner float8 key with -0.0 and 0.0, numbered together: the native plan''s groups');
SELECT is(:'pg_both'::text, :'ng_both'::text, 'GROUP BY an outer and an inner key: the native plan''s groups');
SELECT is(:'pg_deferred'::text, :'ng_deferred'::text, 'a deferred inner key, numbered by each process: the native plan''s groups');
SELECT is(:'pg_chunks'::text, :'ng_chunks'::text, 'ten chunks numbered together, with a NULL group: the native plan''s groups');
SELECT is(:'pg_many'::text, :'ng_many'::text, '150,000 inner groups: the native plan''s groups');
SELECT ok(pg_temp.service_idle(), 'after the grouped joins the service holds no join and no staging memory');
-- the inner groups stay in the shared inner side's chunk, where the
-- service checks them once for all the processes' joins: a number out of
-- the spec's groups there is refused, and the next join works
SET LOCAL gpujoin.debug_fault = service_bad_groups;
SELECT matches(pg_temp.error_of(:'qg_int'), 'GpuJoin failed on the (cpu|cuda) \(service\) backend',
               'an inner group number in the shared chunk past the spec''s groups is refused');
SET LOCAL gpujoin.debug_fault = none;
SELECT ok(pg_temp.service_idle(), 'after the refused grouped joins the service holds no join and no staging memory');
:digest pg_int_again FROM (:qg_int) t \gset
SELECT is(:'pg_int_again'::text, :'ng_int'::text, 'the next grouped join in the service: the native plan''s groups');
\else
SELECT skip('the cluster runs no GPU service', 95);
\endif

SELECT * FROM finish();
ROLLBACK;
