-- planner.sql: when the planner offers GpuJoin, and what the user sees of it.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(17);

CREATE TEMP TABLE r AS SELECT g AS id, g % 100 AS a, (g % 37)::float8 AS f FROM generate_series(1, 2000) g;
CREATE TEMP TABLE s AS SELECT g AS id, g % 90 AS a, (g % 41)::float8 AS f FROM generate_series(1, 2000) g;
ANALYZE r;
ANALYZE s;

\ir lib/plans.sql

SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;

SELECT matches(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.a > s.a'),
               'Custom Scan \(GpuJoin\)', 'forced: a theta join runs as GpuJoin');
SELECT matches(pg_temp.plan_shape('SELECT * FROM r JOIN s ON s.a BETWEEN r.a - 5 AND r.a + 5'),
               'Custom Scan \(GpuJoin\)', 'forced: a band join runs as GpuJoin');
SELECT matches(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.a = s.a'),
               'Custom Scan \(GpuJoin\)', 'forced: an equi-join runs as GpuJoin');
SELECT matches(pg_temp.plan_shape('SELECT * FROM r FULL JOIN s ON r.a > s.a'),
               'Custom Scan \(GpuJoin\)', 'a FULL JOIN PostgreSQL cannot plan runs as GpuJoin');
SELECT doesnt_match(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.a::text > s.a::text'),
               'GpuJoin', 'no device-evaluable qual: no GpuJoin');
SELECT matches(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.a > s.a AND r.id::text < s.id::text'),
               'Host Quals: \(\(r.id\)::text < \(s.id\)::text\)', 'text comparison stays a host qual');

SET LOCAL gpujoin.enabled = off;
SELECT doesnt_match(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.a > s.a'),
               'GpuJoin', 'gpujoin.enabled = off: never GpuJoin');
SELECT throws_ok('EXPLAIN SELECT * FROM r FULL JOIN s ON r.a > s.a', '0A000', NULL,
               'gpujoin.enabled = off: PostgreSQL''s error for a FULL JOIN it cannot plan');
SET LOCAL gpujoin.enabled = on;

SELECT results_eq(
    'SELECT r.id, s.id FROM r JOIN s ON r.a > s.a AND r.f < s.f ORDER BY 1, 2',
    $$SELECT r.id, s.id FROM r, s WHERE r.a > s.a AND r.f < s.f AND r.id + s.id * 0 = r.id
      ORDER BY 1, 2$$,
    'GpuJoin returns the same rows as the native plan');

SET LOCAL enable_nestloop = on;
SET LOCAL enable_hashjoin = on;
SET LOCAL enable_mergejoin = on;
SELECT doesnt_match(pg_temp.plan_shape('SELECT * FROM (VALUES (1), (2)) v(x) JOIN s ON v.x = s.a'),
               'GpuJoin', 'default costs: a tiny equi-join stays native');
SELECT matches(pg_temp.plan_shape('SELECT count(*) FROM r JOIN s ON r.a > s.a'),
               'GpuJoin', 'default costs: a 2000 x 2000 theta join picks GpuJoin');

-- what the backend sees
SELECT ok((SELECT count(*) FROM gpujoin_devices() WHERE backend = 'cpu') = 1,
          'gpujoin_devices() lists the cpu backend');
SELECT ok((SELECT count(*) FROM gpujoin_devices() WHERE selected) = 1,
          'exactly one backend is selected');

-- gpujoin.device = cuda without a GPU is an ERROR at execution, not at load
SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL gpujoin.device = cuda;
SELECT CASE WHEN (SELECT status FROM gpujoin_devices() WHERE backend = 'cuda') LIKE 'available%'
    THEN skip('a CUDA device is present', 1)
    ELSE throws_like('SELECT count(*) FROM r JOIN s ON r.a > s.a',
        '%no usable CUDA device%', 'gpujoin.device = cuda without a GPU: clear error')
    END;
RESET gpujoin.device;

-- device memory and device choice are for superusers only
CREATE ROLE gpujoin_tap_user;
SET LOCAL ROLE gpujoin_tap_user;
SELECT throws_like($$SET gpujoin.device_memory = '1GB'$$, '%permission denied%',
                   'ordinary users cannot raise gpujoin.device_memory');
RESET ROLE;

-- the settings: each backend's cost constants, with readable descriptions
SELECT is((SELECT count(*)::int FROM pg_settings WHERE name ~ '^gpujoin\.(cpu|cuda)_[a-z]+_cost$'), 11,
          'five cost constants for the cpu backend and six for cuda (transfer)');
SELECT ok((SELECT bool_and(short_desc ~ '^[A-Z][ -~]+\.$') FROM pg_settings WHERE name LIKE 'gpujoin.%'),
          'every gpujoin setting has a one-sentence description');

SELECT * FROM finish();
ROLLBACK;
