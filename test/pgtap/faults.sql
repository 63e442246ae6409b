-- faults.sql: a device that runs out of memory when a join opens, and a
-- sorted join too large for the device memory budget.  With a
-- budget too small to shrink further, the cuda backend hands the join to
-- the cpu backend with a NOTICE (same rows), and the cpu backend, having
-- nowhere to go, ends the query with an out-of-memory ERROR; either way the
-- next query works.  gpujoin.debug_fault is for superusers only.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(8);

CREATE TEMP TABLE r AS SELECT g AS id, g % 100 AS a FROM generate_series(1, 3000) g;
CREATE TEMP TABLE s AS SELECT g AS id, g % 90 AS a FROM generate_series(1, 3000) g;
ANALYZE r;
ANALYZE s;
CREATE TEMP TABLE expected AS SELECT count(*) AS n FROM r JOIN s ON r.a < s.a;

SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL gpujoin.device_memory = '1500kB';
SET LOCAL gpujoin.debug_fault = begin_oom;
-- the joins, not the aggregate node (whose fast path runs on the cpu backend)
SET LOCAL gpujoin.enable_aggregate = off;

SELECT CASE WHEN (SELECT backend FROM gpujoin_devices() WHERE selected) = 'cuda'
    THEN results_eq('SELECT count(*) FROM r JOIN s ON r.a < s.a', 'SELECT n FROM expected',
                    'out of device memory: the join runs on the cpu backend, same rows')
    ELSE throws_ok('SELECT count(*) FROM r JOIN s ON r.a < s.a', '53200',
                   'GpuJoin ran out of memory on the cpu backend',
                   'out of memory on the cpu backend: a clean ERROR')
    END;
SELECT throws_ok('SELECT count(*) FROM r JOIN s ON r.a = s.a AND r.id < s.id', '53200', NULL,
                 'the hash algorithm ends the same way')
WHERE (SELECT backend FROM gpujoin_devices() WHERE selected) = 'cpu'
UNION ALL
SELECT pass('the hash algorithm ends the same way')
WHERE (SELECT backend FROM gpujoin_devices() WHERE selected) = 'cuda';

-- with room to shrink, the retries succeed on every backend
SET LOCAL gpujoin.device_memory = '16MB';
SELECT results_eq('SELECT count(*) FROM r JOIN s ON r.a < s.a', 'SELECT n FROM expected',
                  'out of memory three times: retried with smaller tiles, same rows');
RESET gpujoin.debug_fault;
SELECT results_eq('SELECT count(*) FROM r JOIN s ON r.a < s.a', 'SELECT n FROM expected',
                  'the next query works');

-- a sort-merge join whose sorted sides do not fit the budget: the cuda
-- backend refuses it at open and the join runs on the cpu backend
SET LOCAL gpujoin.device_memory = '64kB';
SET LOCAL gpujoin.algorithm = sortmerge;
SELECT results_eq('SELECT count(*) FROM r JOIN s ON r.a < s.a', 'SELECT n FROM expected',
                  'sorted sides larger than the budget: same rows');
CREATE FUNCTION pg_temp.backend_line(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'Backend: ' THEN
            RETURN btrim(line);
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
SELECT is(pg_temp.backend_line('SELECT count(*) FROM r JOIN s ON r.a < s.a'),
          CASE WHEN (SELECT backend FROM gpujoin_devices() WHERE selected) = 'cuda'
               THEN 'Backend: cpu (out of memory)' ELSE 'Backend: cpu' END,
          'cuda hands such a join to the cpu backend');
RESET gpujoin.algorithm;
RESET gpujoin.device_memory;

CREATE ROLE gpujoin_tap_fault_user;
SET LOCAL ROLE gpujoin_tap_fault_user;
SELECT throws_like($$SET gpujoin.debug_fault = step_error$$, '%permission denied%',
                   'ordinary users cannot inject faults');
SELECT throws_like($$SET gpujoin.device = cpu$$, '%permission denied%',
                   'ordinary users cannot choose the device');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
