-- service.sql: the GPU service process (docs/architecture.md, section 8).
-- It runs, shows in pg_stat_activity and in gpujoin_devices(), runs the
-- joins of sessions that set gpujoin.device = service (same rows as the
-- native plan, every algorithm and join type, many tiles, a cancel), and
-- the postmaster starts it again after it is terminated; a join sent
-- meanwhile waits for it, and EXPLAIN ANALYZE shows the wait.
-- test/run_tests.sh runs it on the cpu backend, so CI needs no GPU; on the
-- GPU machine (test/gpu_checks.sh) the same tests run with the service on
-- cuda; on a cluster without the service they are skipped.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(94);

-- the service's pid once it is ready (waits up to 15 s), NULL if it is not
CREATE FUNCTION pg_temp.service_pid(old_pid int DEFAULT 0) RETURNS int LANGUAGE plpgsql AS $$
DECLARE p int;
BEGIN
    FOR i IN 1..150 LOOP
        PERFORM pg_stat_clear_snapshot();
        SELECT pid INTO p FROM pg_stat_activity WHERE backend_type = 'gpujoin service';
        IF p IS NOT NULL AND p <> old_pid AND
           (SELECT status FROM gpujoin_devices() WHERE backend = 'service') LIKE 'ready%' THEN
            RETURN p;
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RETURN NULL;
END $$;

\ir lib/plans.sql

SELECT is((SELECT string_agg(context, ',' ORDER BY name) FROM pg_settings
           WHERE name IN ('gpujoin.service', 'gpujoin.service_backend', 'gpujoin.service_staging_memory')),
          'postmaster,postmaster,postmaster',
          'gpujoin.service, gpujoin.service_backend and gpujoin.service_staging_memory are postmaster settings');

-- a cuda service must be ready within the wait (no GPU: no service)
SELECT current_setting('gpujoin.service') = 'on' AND
       (current_setting('gpujoin.service_backend') = 'cpu' OR pg_temp.service_pid() IS NOT NULL)
       AS have_service \gset
SELECT current_setting('gpujoin.service_backend') AS backend \gset
\if :have_service
SELECT coalesce(pg_temp.service_pid(), 0) AS first_pid \gset
SELECT ok(:first_pid <> 0, 'the service runs: pg_stat_activity shows backend_type "gpujoin service"');
SELECT matches((SELECT status FROM gpujoin_devices() WHERE backend = 'service'),
               '^ready \(' || :'backend' || ' backend\), pid [0-9]+, started [0-9]+ times, 0 bytes in use, 0 joins running, 0 queued, [0-9]+ served; device memory: 0 bytes reserved \([^)]*\), 0 joins waiting$',
               'gpujoin_devices(): the service row says ready on the ' || :'backend' || ' backend, its pid, memory in use and joins');
SELECT matches((SELECT name FROM gpujoin_devices() WHERE backend = 'service'),
               CASE :'backend' WHEN 'cpu' THEN '^host processor' ELSE '^.+$' END,
               'the service row names the device the service opened');
-- a cuda service runs the joins of gpujoin.device = auto (and cuda): the
-- row selected is then the cuda backend's, "available in the GPU service";
-- a cpu service runs only those of gpujoin.device = service
SET gpujoin.device = auto;
SELECT ok(CASE :'backend'
              WHEN 'cuda' THEN (SELECT string_agg(backend || ': ' || status, ', ')
                                FROM gpujoin_devices() WHERE selected) = 'cuda: available in the GPU service'
              ELSE (SELECT string_agg(backend, ', ') FROM gpujoin_devices() WHERE selected) IN ('cpu', 'cuda') END,
          'gpujoin.device = auto selects the service only where it runs cuda');
SELECT is((SELECT count(*)::int FROM gpujoin_devices() WHERE selected AND backend = 'service'), 0,
          'gpujoin.device = auto: the service row is selected only by gpujoin.device = service');
RESET gpujoin.device;

-- joins in the service against the native plan
CREATE TEMP TABLE sr AS SELECT g AS id, (g * 7) % 501 AS a, CASE WHEN g % 13 = 0 THEN NULL ELSE (g % 89)::float8 END AS f
    FROM generate_series(1, 3000) g;
CREATE TEMP TABLE ss AS SELECT g AS id, (g * 11) % 499 AS a, CASE WHEN g % 17 = 0 THEN NULL ELSE (g % 97)::float8 END AS f
    FROM generate_series(1, 2500) g;
ANALYZE sr;
ANALYZE ss;
CREATE TEMP TABLE queries (name text, q text);
INSERT INTO queries VALUES
    ('hash, inner', 'SELECT sr.id, ss.id FROM sr JOIN ss ON sr.a = ss.a'),
    ('sortmerge, inner', 'SELECT sr.id, ss.id FROM sr JOIN ss ON sr.a < ss.a AND sr.id < 400'),
    ('sortmerge band, left', 'SELECT sr.id, ss.id FROM sr LEFT JOIN ss ON ss.f BETWEEN sr.f - 1 AND sr.f + 1'),
    ('hash and a theta qual, full', 'SELECT sr.id, ss.id FROM sr FULL JOIN ss ON sr.a = ss.a AND sr.f + ss.f > 150'),
    ('anti', 'SELECT sr.id FROM sr WHERE NOT EXISTS (SELECT 1 FROM ss WHERE ss.a = sr.a + 3)'),
    ('semi, nestloop', 'SELECT sr.id FROM sr WHERE EXISTS (SELECT 1 FROM ss WHERE ss.a <> sr.a AND ss.id < sr.id - 2000)');
-- aggregates over joins, reduced in the service (agg_step), each under the
-- algorithms it can run with; numeric keys, some with no exact device value
-- (1e25 + g: the host joins those rows), and NULLs
CREATE TEMP TABLE sn AS SELECT g AS id, g % 4 AS k,
    CASE WHEN g % 11 = 0 THEN NULL WHEN g % 97 = 0 THEN 1e25 + g ELSE round((g % 300)::numeric / 7, 6) END AS n
    FROM generate_series(1, 1500) g;
CREATE TEMP TABLE tn AS SELECT g AS id, g % 3 AS k,
    CASE WHEN g % 13 = 0 THEN NULL WHEN g % 89 = 0 THEN 1e25 + g ELSE round((g % 280)::numeric / 7, 6) END AS n
    FROM generate_series(1, 1200) g;
ANALYZE sn;
ANALYZE tn;
CREATE TEMP TABLE aggqueries (name text, q text, algorithms text[], reduced bool);
INSERT INTO aggqueries VALUES
    ('count, sum, avg, min, max', 'SELECT count(*), sum(sr.a), avg(ss.id), min(ss.f), max(sr.f), count(sr.f) FROM sr JOIN ss ON sr.a = ss.a',
     '{auto,nestloop,sortmerge,hash}', true),
    ('range runs', 'SELECT count(*), sum(ss.id), min(sr.id), max(ss.a), avg(sr.a) FROM sr JOIN ss ON ss.a BETWEEN sr.a AND sr.a + 20',
     '{auto,nestloop,sortmerge}', true),
    ('GROUP BY outer', 'SELECT sr.a % 10, count(*), sum(ss.id), max(ss.f) FROM sr JOIN ss ON sr.a = ss.a GROUP BY 1',
     '{auto,nestloop,sortmerge,hash}', true),
    ('GROUP BY inner', 'SELECT ss.a % 7, count(*), min(sr.id), avg(sr.a) FROM sr JOIN ss ON sr.a < ss.a AND sr.id < 300 GROUP BY 1',
     '{auto,nestloop,sortmerge}', true),
    ('GROUP BY both sides', 'SELECT sr.a % 5, ss.a % 3, count(*), sum(sr.id + ss.id) FROM sr JOIN ss ON sr.a = ss.a GROUP BY 1, 2',
     '{auto,nestloop,sortmerge,hash}', true),
    ('dominance count', 'SELECT count(*) FROM sr JOIN ss ON sr.a < ss.a AND sr.id > ss.id',
     '{auto,nestloop}', true),
    ('pair arguments', 'SELECT count(*), sum(sr.a * ss.a), max(sr.f + ss.f) FROM sr JOIN ss ON sr.a = ss.a + 1',
     '{auto,nestloop,sortmerge,hash}', false),
    ('HAVING', 'SELECT sr.a % 10, count(*) FROM sr JOIN ss ON sr.a = ss.a GROUP BY 1 HAVING count(*) > 330',
     '{auto,hash}', false),
    ('numeric keys and NULLs', 'SELECT count(*), sum(sn.id), max(tn.id), min(sn.k + tn.k) FROM sn JOIN tn ON sn.n = tn.n',
     '{auto,nestloop,sortmerge,hash}', false),
    ('numeric band, GROUP BY', 'SELECT tn.k, count(*), sum(sn.id) FROM sn JOIN tn ON sn.n BETWEEN tn.n - 1 AND tn.n GROUP BY 1',
     '{auto,nestloop,sortmerge}', false);
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpujoin.enabled = off;
-- the rows of q under gpujoin.algorithm = algorithm
CREATE FUNCTION pg_temp.rows_with(q text, algorithm text) RETURNS text[] LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('gpujoin.algorithm', algorithm, true);
    RETURN pg_temp.rows_of(q);
END $$;
CREATE TEMP TABLE native AS SELECT name, pg_temp.rows_of(q) AS rows FROM queries;
CREATE TEMP TABLE aggnative AS SELECT name, pg_temp.rows_of(q) AS rows FROM aggqueries;
SET LOCAL gpujoin.enabled = on;
SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL gpujoin.device = service;
SET LOCAL gpujoin.device_memory = '1MB';
SELECT is((SELECT count(*)::int FROM gpujoin_devices() WHERE selected AND backend = 'service'), 1,
          'gpujoin.device = service selects the service');
SELECT matches(pg_temp.explain_analyze(q), 'Backend: ' || :'backend' || ' \(service\)',
               'EXPLAIN ANALYZE: ' || name || ' ran in the service')
    FROM queries WHERE name IN ('hash, inner', 'hash and a theta qual, full', 'semi, nestloop');
SELECT is(pg_temp.rows_of(q), (SELECT rows FROM native n WHERE n.name = queries.name),
          name || ' in the service, many tiles: the rows of the native plan')
    FROM queries ORDER BY name;
SELECT matches((SELECT status FROM gpujoin_devices() WHERE backend = 'service'),
               ', 0 bytes in use, 0 joins running, 0 queued, [1-9][0-9]* served; device memory: 0 bytes reserved \([^)]*\), 0 joins waiting$',
               'after the joins the service holds no staging memory and no join, and says it served them');

SELECT matches(pg_temp.explain_analyze(q), 'GPU Aggregates: .*Backend: ' || :'backend' || ' \(service\)\n',
               'EXPLAIN ANALYZE: aggregates, ' || name || ', ran in the service (no fallback)')
    FROM aggqueries ORDER BY name;
SELECT matches(pg_temp.explain_analyze(q), 'Pairs Reduced in Backend: [1-9]',
               'EXPLAIN ANALYZE: aggregates, ' || name || ', reduced in the service')
    FROM aggqueries WHERE reduced ORDER BY name;
SELECT matches(pg_temp.explain_analyze(q), 'Algorithm: nestloop \(dominance counting\)',
               'EXPLAIN ANALYZE: the dominance count in the service counts by dominance')
    FROM aggqueries WHERE name = 'dominance count';
SELECT is(pg_temp.rows_with(q, algorithm), (SELECT rows FROM aggnative n WHERE n.name = aggqueries.name),
          'aggregates, ' || name || ', gpujoin.algorithm = ' || algorithm || ', in the service: the rows of the native plan')
    FROM aggqueries, unnest(algorithms) AS algorithm ORDER BY name, algorithm;
SELECT set_config('gpujoin.algorithm', 'auto', true) IS NOT NULL AS reset \gset
-- an aggregate over a join cut into device partitions (device_partitions.c):
-- each piece's partials are finished in the service before the next opens
SET LOCAL gpujoin.device_memory = '4kB';
SELECT matches(pg_temp.explain_analyze(q), 'GPU Aggregates: .*Device Partitions: [1-9]',
               'EXPLAIN ANALYZE: aggregates over a join cut into device partitions in the service')
    FROM aggqueries WHERE name = 'GROUP BY both sides';
SELECT is(pg_temp.rows_with(q, 'hash'), (SELECT rows FROM aggnative n WHERE n.name = aggqueries.name),
          'aggregates over a hash join cut into device partitions in the service: the rows of the native plan')
    FROM aggqueries WHERE name = 'GROUP BY both sides';
SELECT set_config('gpujoin.algorithm', 'auto', true) IS NOT NULL AS reset \gset
-- joins cut into device partitions: the service opens each next piece while
-- the current one runs (gpujoin.partitions_open_ahead = on); one that fails
-- there after the service answered (the fault ahead_open_fails) opens again
-- in its turn; off (the default), the pieces open one after the other
SET LOCAL gpujoin.partitions_open_ahead = on;
SELECT matches(pg_temp.explain_analyze(q), 'Device Partitions: [1-9].*Partition Pieces Opened Ahead: [1-9]',
               'EXPLAIN ANALYZE: ' || name || ' cut into device partitions in the service, the next piece opened ahead')
    FROM queries WHERE name = 'hash, inner';
SELECT is(pg_temp.rows_of(q), (SELECT rows FROM native n WHERE n.name = queries.name),
          name || ', device partitions opened ahead in the service: the rows of the native plan')
    FROM queries WHERE name IN ('hash, inner', 'sortmerge band, left', 'hash and a theta qual, full', 'anti')
    ORDER BY name;
SET LOCAL gpujoin.debug_fault = ahead_open_fails;
SELECT is(pg_temp.rows_of(q), (SELECT rows FROM native n WHERE n.name = queries.name),
          name || ', every piece opened ahead failing in the service: the rows of the native plan')
    FROM queries WHERE name IN ('hash, inner', 'sortmerge band, left') ORDER BY name;
SELECT ok(pg_temp.explain_analyze(q) ~ 'Device Partitions: [1-9]' AND pg_temp.explain_analyze(q) !~ 'Opened Ahead',
          'EXPLAIN ANALYZE: ' || name || ', every piece opened ahead failing: each opened in its turn')
    FROM queries WHERE name = 'hash, inner';
RESET gpujoin.debug_fault;
RESET gpujoin.partitions_open_ahead;
SELECT ok(pg_temp.explain_analyze(q) ~ 'Device Partitions: [1-9]' AND pg_temp.explain_analyze(q) !~ 'Opened Ahead',
          'EXPLAIN ANALYZE: ' || name || ' with gpujoin.partitions_open_ahead = off: no piece opened ahead')
    FROM queries WHERE name = 'hash, inner';
SET LOCAL gpujoin.device_memory = '1MB';
SELECT matches((SELECT status FROM gpujoin_devices() WHERE backend = 'service'),
               ', 0 bytes in use, 0 joins running, 0 queued, [1-9][0-9]* served; device memory: 0 bytes reserved \([^)]*\), 0 joins waiting$',
               'after the aggregates and the pieces opened ahead the service holds no staging memory and no join');

-- a statement_timeout in the middle of a join in the service
-- (on cuda ten times the rows: 9e8 pairs may finish within the timeout)
CREATE TEMP TABLE big AS SELECT g AS a FROM generate_series(1, CASE :'backend' WHEN 'cuda' THEN 300000 ELSE 30000 END) g;
ANALYZE big;
-- (a cancel is no error plpgsql's WHEN OTHERS catches: name it)
CREATE FUNCTION pg_temp.cancelled(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'finished';
EXCEPTION WHEN query_canceled THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
SET LOCAL statement_timeout = '200ms';
SELECT is(pg_temp.cancelled('SELECT count(*) FROM big x JOIN big y ON x.a * 3 + y.a % 7 > x.a + y.a'),
          '57014 canceling statement due to statement timeout',
          'statement_timeout ends a join in the service with the usual error');
SET LOCAL statement_timeout = 0;
SELECT matches((SELECT status FROM gpujoin_devices() WHERE backend = 'service'),
               ', 0 bytes in use, 0 joins running,',
               'the cancelled join left nothing in the service');
SELECT is((SELECT count(*)::int FROM sr JOIN ss ON sr.a = ss.a), (SELECT cardinality(rows) FROM native WHERE name = 'hash, inner'),
          'the next join in the service works');

-- a join reserves what its tiles and match buffer fill, not its whole
-- budget, so that small joins do not queue behind each other
CREATE FUNCTION pg_temp.budget_kb(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'Device Memory Budget: ' THEN
            RETURN substring(line FROM 'Budget: ([0-9]+) kB')::bigint;
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
SET LOCAL gpujoin.device_memory = '1GB';
SELECT cmp_ok(pg_temp.budget_kb('SELECT sr.id, ss.id FROM sr JOIN ss ON sr.a = ss.a'), '<', 262144::bigint,
              'a 3000 x 2500 join in the service with gpujoin.device_memory = 1GB reserves its tiles, match buffer and keys, not 1GB');
SET LOCAL gpujoin.device_memory = '1MB';

-- programs compiled in the service (on cuda: NVRTC and the kernels'
-- modules loaded into it, the count kernel and the nested loop's pairs
-- kernels); the service must still exit cleanly when terminated below (a
-- crash would end this session with the postmaster's restart)
SET LOCAL gpujoin.device = service;
SET LOCAL gpujoin.compile_programs = always;
SET LOCAL gpujoin.algorithm = nestloop;
\set qc 'SELECT count(*) FROM sr JOIN ss ON sr.a < ss.a AND sr.f + ss.f > 50'
\set qp 'SELECT count(*) FROM (SELECT sr.id, ss.id FROM sr JOIN ss ON sr.a < ss.a AND sr.f + ss.f > 150 OFFSET 0) x'
SET LOCAL gpujoin.enabled = off;
SELECT (:qc) AS native_qc, (:qp) AS native_qp \gset
SET LOCAL gpujoin.enabled = on;
SELECT is((:qc), :native_qc::bigint, 'a program count compiled in the service: the native count');
SELECT is((:qp), :native_qp::bigint, 'a nested loop returning pairs compiled in the service: the native rows');
SELECT ok(:'backend' <> 'cuda' OR
          substring(pg_temp.explain_analyze(:'qp') FROM 'Program: ([^\n]*)') ~ '^compiled',
          'on cuda the service ran the pairs kernels compiled');
SET LOCAL gpujoin.compile_programs = on;
SET LOCAL gpujoin.algorithm = auto;

SELECT ok(pg_terminate_backend(:first_pid), 'the service can be terminated');
-- a join sent while the service is gone and not yet started again (the
-- postmaster waits a second) waits for the new one, rather than failing
CREATE FUNCTION pg_temp.service_gone() RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..100 LOOP
        IF (SELECT status FROM gpujoin_devices() WHERE backend = 'service') NOT LIKE 'ready%' THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.01);
    END LOOP;
    RETURN false;
END $$;
SELECT ok(pg_temp.service_gone(), 'the terminated service is no longer ready');
SET LOCAL gpujoin.device = service;
SELECT is((SELECT count(*)::int FROM sr JOIN ss ON sr.a = ss.a), (SELECT cardinality(rows) FROM native WHERE name = 'hash, inner'),
          'a join sent while the service restarts waits for it, with gpujoin.device = service');
SELECT coalesce(pg_temp.service_pid(:first_pid), 0) AS second_pid \gset
SELECT ok(:second_pid <> 0, 'the postmaster starts it again, with a new pid, ready');
SELECT matches((SELECT status FROM gpujoin_devices() WHERE backend = 'service'),
               '^ready \(' || :'backend' || ' backend\), pid ' || :second_pid || ',', 'gpujoin_devices() shows the new pid');
SELECT is((SELECT count(*)::int FROM sr JOIN ss ON sr.a = ss.a), (SELECT cardinality(rows) FROM native WHERE name = 'hash, inner'),
          'a join in the restarted service works');
-- the wait is shown: EXPLAIN ANALYZE's Service Start Wait (with timing)
CREATE FUNCTION pg_temp.start_wait(q text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE line text; waited numeric := 0;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF) ' || q LOOP
        IF line ~ 'Service Start Wait: ' THEN
            waited := substring(line FROM 'Service Start Wait: ([0-9.]+) ms')::numeric;
        END IF;
    END LOOP;
    RETURN waited;
END $$;
SELECT is(pg_temp.start_wait('SELECT count(*) FROM sr JOIN ss ON sr.a = ss.a'), 0::numeric,
          'a join in the ready service shows no Service Start Wait');
SELECT ok(pg_terminate_backend(:second_pid) AND pg_temp.service_gone() AND
          pg_temp.start_wait('SELECT count(*) FROM sr JOIN ss ON sr.a = ss.a') > 0,
          'a join sent while the service restarts shows its wait as Service Start Wait');
\else
SELECT skip('the cluster runs no GPU service', 93);
\endif

SELECT * FROM finish();
ROLLBACK;
