-- service_faults.sql: bad requests to the GPU service (docs/architecture.md,
-- section 8, "Validation").  A request whose pointers lie outside the
-- client's staging chunks (gpujoin.debug_fault = service_bad_request points
-- a join's input at the service's control block) is refused: the query
-- ends with an ERROR that names the service, the service goes on with the
-- same pid, holds nothing of that join, and the next join runs in it.
-- Runs on whichever backend the service has; skipped without the service.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(5);

SELECT current_setting('gpujoin.service') = 'on' AND
       coalesce((SELECT status LIKE 'ready%' FROM gpujoin_devices() WHERE backend = 'service'), false)
       AS have_service \gset
\if :have_service
CREATE TEMP TABLE fr AS SELECT g AS id, g % 97 AS a FROM generate_series(1, 2000) g;
CREATE TEMP TABLE fs AS SELECT g AS id, g % 89 AS a FROM generate_series(1, 1500) g;
ANALYZE fr;
ANALYZE fs;
SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpujoin.device = service;
SET LOCAL gpujoin.enabled = off;
SELECT count(*) AS native_count FROM fr JOIN fs ON fr.a = fs.a \gset
SET LOCAL gpujoin.enabled = on;

CREATE FUNCTION pg_temp.service_pid() RETURNS int LANGUAGE sql AS $$
    SELECT pid FROM pg_stat_activity WHERE backend_type = 'gpujoin service'
$$;
\ir lib/plans.sql

CREATE FUNCTION pg_temp.error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE msg text; detail text;
BEGIN
    EXECUTE q;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    RETURN msg || ' / ' || detail;
END $$;

SELECT pg_temp.service_pid() AS pid_before \gset
SET LOCAL gpujoin.debug_fault = service_bad_request;
SELECT matches(pg_temp.error_of('SELECT count(*) FROM fr JOIN fs ON fr.a = fs.a'),
               '^GpuJoin failed on the (cpu|cuda) \(service\) backend / .*the GPU service refused a request: its join input lies outside the client''s staging chunks',
               'a request pointing outside the client''s staging chunks is refused, with an ERROR naming the service');
RESET gpujoin.debug_fault;
SELECT is(pg_temp.service_pid(), :pid_before, 'the service goes on: same pid');
SELECT matches((SELECT status FROM gpujoin_devices() WHERE backend = 'service'),
               '^ready .*, 0 bytes in use, 0 joins running, 0 queued,',
               'the refused join left no staging memory and no join in the service');
SELECT is((SELECT count(*) FROM fr JOIN fs ON fr.a = fs.a), :native_count::bigint,
          'the next join runs in the service, with the native plan''s count');
SELECT matches(pg_temp.explain_analyze('SELECT fr.id FROM fr JOIN fs ON fr.a = fs.a'),
               'Backend: (cpu|cuda) \(service\)', 'and EXPLAIN ANALYZE says it ran there');
\else
SELECT skip('the cluster runs no GPU service', 5);
\endif

SELECT * FROM finish();
ROLLBACK;
