-- service_devices.sql: the GPU service on several devices (issue 22;
-- docs/architecture.md, section 8, phase E), with three simulated devices
-- of the cpu backend (gpujoin.service_simulated_devices = 3, a postmaster
-- setting: test/load/service_devices.sh starts a cluster of its own for
-- this file; on any other cluster the tests are skipped).
-- It proves: gpujoin_devices() lists the three devices; a nested loop's
-- steps spread over all three (EXPLAIN ANALYZE: "Devices: 3 (steps a, b,
-- c)") with the native plan's rows for inner, left, semi, anti and full
-- joins, with one tile and with many; band and equi joins run on one
-- device each with the native plan's rows; nested-loop aggregates
-- (grouped or not, dominance counts, pair arguments) combined across the
-- devices equal the native plan's; a statement_timeout in the middle of a
-- spread join leaves nothing open on any device.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(40);

\ir lib/plans.sql

SELECT is((SELECT string_agg(context, ',' ORDER BY name) FROM pg_settings
           WHERE name IN ('gpujoin.devices', 'gpujoin.service_simulated_devices')),
          'postmaster,postmaster',
          'gpujoin.devices and gpujoin.service_simulated_devices are postmaster settings');

SELECT current_setting('gpujoin.service') = 'on' AND
       current_setting('gpujoin.service_backend') = 'cpu' AND
       current_setting('gpujoin.service_simulated_devices') = '3' AND
       current_setting('gpujoin.devices') = '' AND
       coalesce((SELECT status LIKE 'ready%' FROM gpujoin_devices() WHERE backend = 'service'), false)
       AS have_devices \gset
\if :have_devices
SELECT is((SELECT string_agg(name, '; ' ORDER BY status) FROM gpujoin_devices() WHERE backend = 'service device'),
          'host processor (simulated device 0); host processor (simulated device 1); host processor (simulated device 2)',
          'gpujoin_devices() lists the three simulated devices of the service');
SELECT is((SELECT count(*)::int FROM gpujoin_devices() WHERE backend = 'service device'
           AND status ~ '^device [0-2], 0 bytes in use, 0 joins open, 0 steps queued, [0-9]+ steps run$'), 3,
          'each device row says its number, memory in use, joins open, steps queued and run');
SELECT is((SELECT count(*)::int FROM gpujoin_devices() WHERE selected), 1,
          'the device rows are never selected: one row is, as before');

CREATE TEMP TABLE dr AS SELECT g AS id, (g * 7919) % 1009 AS a, (g * 104729) % 997 AS b,
    CASE WHEN g % 17 = 0 THEN NULL ELSE g % 89 END AS c
    FROM generate_series(1, 1500) g;
CREATE TEMP TABLE ds AS SELECT g AS id, (g * 6007) % 1013 AS a, (g * 15485863::bigint) % 991 AS b,
    CASE WHEN g % 13 = 0 THEN NULL ELSE g % 83 END AS c
    FROM generate_series(1, 1200) g;
ANALYZE dr;
ANALYZE ds;

-- joins that a nested loop runs, spread over the devices (1.8M pairs)
CREATE TEMP TABLE queries (name text, q text);
INSERT INTO queries VALUES
    ('inner, two inequalities', 'SELECT dr.id, ds.id FROM dr JOIN ds ON dr.a < ds.a AND dr.b > ds.b'),
    ('left', 'SELECT dr.id, ds.id FROM dr LEFT JOIN ds ON dr.a + ds.b < 60 AND dr.c <> ds.c'),
    ('semi', 'SELECT dr.id FROM dr WHERE EXISTS (SELECT 1 FROM ds WHERE ds.a > dr.a + 400 AND ds.b < dr.b)'),
    ('anti', 'SELECT dr.id FROM dr WHERE NOT EXISTS (SELECT 1 FROM ds WHERE ds.a > dr.a + 400 AND ds.b < dr.b)'),
    ('full, an equality and a theta qual', 'SELECT dr.id, ds.id FROM dr FULL JOIN ds ON dr.c = ds.c AND dr.a + ds.b > 1200');
-- joins that run on one device: a band (sort-merge) and an equi-join (hash)
CREATE TEMP TABLE onequeries (name text, q text, algorithm text);
INSERT INTO onequeries VALUES
    ('band', 'SELECT dr.id, ds.id FROM dr JOIN ds ON ds.b BETWEEN dr.b - 2 AND dr.b + 2', 'sortmerge'),
    ('equi', 'SELECT dr.id, ds.id FROM dr JOIN ds ON dr.c = ds.c', 'hash');
-- aggregates over a nested loop, reduced on each device and combined
CREATE TEMP TABLE aggqueries (name text, q text);
INSERT INTO aggqueries VALUES
    ('count, sum, min, max, avg', 'SELECT count(*), sum(dr.a), min(ds.b), max(dr.c), avg(ds.id) FROM dr JOIN ds ON dr.a < ds.a AND dr.b > ds.b + 10'),
    ('GROUP BY outer', 'SELECT dr.a % 7, count(*), sum(ds.id), min(ds.b), max(ds.c) FROM dr JOIN ds ON dr.a < ds.a AND dr.b > ds.b GROUP BY 1'),
    ('GROUP BY both sides', 'SELECT dr.a % 5, ds.b % 3, count(*), sum(dr.id + ds.id) FROM dr JOIN ds ON dr.a + 100 < ds.a GROUP BY 1, 2'),
    ('dominance count', 'SELECT count(*) FROM dr JOIN ds ON dr.a < ds.a AND dr.b > ds.b'),
    ('pair arguments', 'SELECT count(*), sum(dr.a * ds.b), max(dr.c + ds.c) FROM dr JOIN ds ON dr.a > ds.a');

SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpujoin.enabled = off;
CREATE TEMP TABLE native AS SELECT name, pg_temp.rows_of(q) AS rows FROM queries;
CREATE TEMP TABLE onenative AS SELECT name, pg_temp.rows_of(q) AS rows FROM onequeries;
CREATE TEMP TABLE aggnative AS SELECT name, pg_temp.rows_of(q) AS rows FROM aggqueries;
SET LOCAL gpujoin.enabled = on;
SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL gpujoin.device = service;
SET LOCAL gpujoin.algorithm = nestloop;

SELECT matches(pg_temp.explain_analyze(q), 'Backend: cpu \(service\)\n(.*\n)*   *Devices: 3 \(steps [1-9][0-9]*, [1-9][0-9]*, [1-9][0-9]*\)\n',
               'EXPLAIN ANALYZE: ' || name || ', a nested loop, ran steps on each of the 3 devices')
    FROM queries ORDER BY name;
SELECT is(pg_temp.rows_of(q), (SELECT rows FROM native n WHERE n.name = queries.name),
          name || ', spread over 3 devices: the rows of the native plan')
    FROM queries ORDER BY name;
SELECT matches(pg_temp.explain_analyze(q), 'GPU Aggregates: (.*\n)*   *Devices: 3 \(steps [1-9][0-9]*, [1-9][0-9]*, [1-9][0-9]*\)\n(.*\n)*   *Pairs Reduced in Backend: [1-9]',
               'EXPLAIN ANALYZE: aggregates, ' || name || ', reduced on each of the 3 devices')
    FROM aggqueries WHERE name <> 'pair arguments' ORDER BY name;
SELECT is(pg_temp.rows_of(q), (SELECT rows FROM aggnative n WHERE n.name = aggqueries.name),
          'aggregates, ' || name || ', combined across 3 devices: the rows of the native plan')
    FROM aggqueries ORDER BY name;

-- many tiles (a small budget): each tile's steps spread
SET LOCAL gpujoin.device_memory = '64kB';
SELECT matches(pg_temp.explain_analyze(q), 'Tiles Run: ([2-9]|[1-9][0-9]+)\n(.*\n)*   *Devices: 3 \(steps [1-9][0-9]*, [1-9][0-9]*, [1-9][0-9]*\)\n',
               'EXPLAIN ANALYZE: ' || name || ', many tiles, every device ran steps')
    FROM queries WHERE name = 'inner, two inequalities';
SELECT is(pg_temp.rows_of(q), (SELECT rows FROM native n WHERE n.name = queries.name),
          name || ', many tiles over 3 devices: the rows of the native plan')
    FROM queries WHERE name IN ('inner, two inequalities', 'left', 'full, an equality and a theta qual') ORDER BY name;
SELECT is(pg_temp.rows_of(q), (SELECT rows FROM aggnative n WHERE n.name = aggqueries.name),
          'aggregates, ' || name || ', many tiles over 3 devices: the rows of the native plan')
    FROM aggqueries WHERE name IN ('GROUP BY outer', 'dominance count') ORDER BY name;
SET LOCAL gpujoin.device_memory = 0;

-- a small nested loop runs on one device, unless gpujoin.service_spread_min_pairs says otherwise
SELECT matches(pg_temp.explain_analyze('SELECT dr.id, ds.id FROM dr JOIN ds ON dr.a < ds.a AND dr.id < 10'),
               'Devices: 1 \(steps [0-9]+, [0-9]+, [0-9]+\)',
               'a nested loop of fewer pairs than gpujoin.service_spread_min_pairs runs on one device');
SET LOCAL gpujoin.service_spread_min_pairs = 0;
SELECT matches(pg_temp.explain_analyze('SELECT dr.id, ds.id FROM dr JOIN ds ON dr.a < ds.a AND dr.id < 10'),
               'Devices: 3 \(steps [1-9][0-9]*, [1-9][0-9]*, [1-9][0-9]*\)',
               'with gpujoin.service_spread_min_pairs = 0 it runs on every device');
RESET gpujoin.service_spread_min_pairs;

-- band and equi joins: one device each
SELECT set_config('gpujoin.algorithm', algorithm, true) IS NOT NULL AS set_ok,
       pg_temp.explain_analyze(q) ~ 'Devices: 1 \(steps [0-9]+, [0-9]+, [0-9]+\)' AS one_device,
       pg_temp.rows_of(q) = (SELECT rows FROM onenative n WHERE n.name = onequeries.name) AS same_rows
    INTO TEMP onedevice FROM onequeries;
SELECT ok(bool_and(one_device), 'EXPLAIN ANALYZE: the band and the equi-join ran on one device each') FROM onedevice;
SELECT ok(bool_and(same_rows), 'the band and the equi-join in the service: the rows of the native plan') FROM onedevice;
-- the same cut into device partitions: the service opens each next piece
-- ahead on a device the open one leaves free, so that the pieces' steps
-- run on several devices (gpujoin.partitions_open_ahead)
SET LOCAL gpujoin.device_memory = '64kB';
SET LOCAL gpujoin.partitions_open_ahead = on;
SELECT set_config('gpujoin.algorithm', algorithm, true) IS NOT NULL AS set_ok,
       pg_temp.explain_analyze(q) ~ 'Partition Pieces Opened Ahead: [1-9](.*\n)*   *Devices: [23] \(steps' AS spread,
       pg_temp.rows_of(q) = (SELECT rows FROM onenative n WHERE n.name = onequeries.name) AS same_rows
    INTO TEMP partdevices FROM onequeries;
SELECT ok(bool_and(spread), 'EXPLAIN ANALYZE: the band and the equi-join cut into device partitions, pieces opened ahead, ran on several devices') FROM partdevices;
SELECT ok(bool_and(same_rows), 'the band and the equi-join cut into device partitions over the devices: the rows of the native plan') FROM partdevices;
RESET gpujoin.device_memory;
RESET gpujoin.partitions_open_ahead;
SELECT set_config('gpujoin.algorithm', 'nestloop', true) IS NOT NULL AS reset \gset

SELECT is((SELECT count(*)::int FROM gpujoin_devices() WHERE backend = 'service device'
           AND status ~ '^device [0-2], 0 bytes in use, 0 joins open, 0 steps queued, [1-9][0-9]* steps run$'), 3,
          'after the joins every device ran steps and holds no join');

-- a statement_timeout in the middle of a join spread over the devices
CREATE TEMP TABLE big AS SELECT g AS a FROM generate_series(1, 30000) g;
ANALYZE big;
CREATE FUNCTION pg_temp.cancelled(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'finished';
EXCEPTION WHEN query_canceled THEN
    RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
SET LOCAL statement_timeout = '300ms';
SELECT is(pg_temp.cancelled('SELECT count(*) FROM big x JOIN big y ON x.a * 3 + y.a % 7 > x.a + y.a'),
          '57014 canceling statement due to statement timeout',
          'statement_timeout ends a join spread over the devices with the usual error');
SET LOCAL statement_timeout = 0;
SELECT is((SELECT count(*)::int FROM gpujoin_devices() WHERE backend = 'service device'
           AND status ~ '^device [0-2], 0 bytes in use, 0 joins open, 0 steps queued,'), 3,
          'the cancelled join left nothing on any device');
SELECT matches((SELECT status FROM gpujoin_devices() WHERE backend = 'service'),
               ', 0 bytes in use, 0 joins running, 0 queued,',
               'the cancelled join left no staging memory and no join in the service');
SELECT is(pg_temp.rows_of(q), (SELECT rows FROM native n WHERE n.name = queries.name),
          'the next join spread over the devices works')
    FROM queries WHERE name = 'semi';
\else
SELECT skip('the cluster runs no GPU service with 3 simulated devices (test/load/service_devices.sh starts one)', 39);
\endif

SELECT * FROM finish();
ROLLBACK;
