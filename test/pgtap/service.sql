-- service.sql: the GPU service process (docs/architecture.md, section 8).
-- It runs, shows in pg_stat_activity and in gpujoin_devices(), is never
-- the selected backend yet (joins do not run in it), and the postmaster
-- starts it again after it is terminated.  test/run_tests.sh runs it on the
-- cpu backend, so CI needs no GPU; on a cluster without the service the
-- tests are skipped.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(9);

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

SELECT is((SELECT string_agg(context, ',' ORDER BY name) FROM pg_settings
           WHERE name IN ('gpujoin.service', 'gpujoin.service_backend')),
          'postmaster,postmaster', 'gpujoin.service and gpujoin.service_backend are postmaster settings');

SELECT current_setting('gpujoin.service') = 'on' AND
       current_setting('gpujoin.service_backend') = 'cpu' AS have_service \gset
\if :have_service
SELECT coalesce(pg_temp.service_pid(), 0) AS first_pid \gset
SELECT ok(:first_pid <> 0, 'the service runs: pg_stat_activity shows backend_type "gpujoin service"');
SELECT matches((SELECT status FROM gpujoin_devices() WHERE backend = 'service'),
               '^ready \(cpu backend\), pid [0-9]+, started [0-9]+ times, 0 bytes in use, 0 joins running, 0 queued$',
               'gpujoin_devices(): the service row says ready on the cpu backend, its pid, memory in use and joins');
SELECT is((SELECT name FROM gpujoin_devices() WHERE backend = 'service'), 'host processor',
          'the service row names the device the service opened');
SELECT is((SELECT count(*)::int FROM gpujoin_devices() WHERE selected AND backend = 'service'), 0,
          'the service is not the selected backend: joins do not run in it yet');
SELECT ok(pg_terminate_backend(:first_pid), 'the service can be terminated');
SELECT coalesce(pg_temp.service_pid(:first_pid), 0) AS second_pid \gset
SELECT ok(:second_pid <> 0, 'the postmaster starts it again, with a new pid, ready');
SELECT matches((SELECT status FROM gpujoin_devices() WHERE backend = 'service'),
               '^ready \(cpu backend\), pid ' || :second_pid || ',', 'gpujoin_devices() shows the new pid');
\else
SELECT skip('the cluster runs no GPU service on the cpu backend', 7);
\endif

-- and GpuJoins go on as before
SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SELECT is((SELECT count(*)::int FROM generate_series(1, 300) a(x) JOIN generate_series(1, 200) b(y) ON a.x < b.y),
          19900,
          'a join after the restart returns the same count');

SELECT * FROM finish();
ROLLBACK;
