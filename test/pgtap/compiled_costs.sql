-- compiled_costs.sql: the planner's cost of a device program that the cuda
-- backend runs compiled (gpujoin.compile_programs, gpujoin_costs.c's
-- gpujoin_program_runs_compiled).
-- It proves, on the cuda backend's built-in constants: a nested-loop count
-- of r.a < s.a AND r.b > s.b AND r.a + s.b > 0 over 4 10^10 pairs (the
-- tables' statistics say 200k rows each) costs less with compile_programs
-- on than off, by exactly the interpreter's rate less the compiled one
-- (two compares at pair_cost and a quarter of the pairs through the five
-- other instructions at program_pair_cost, against the compares and the
-- five instructions at 0.3 pair_cost each on every pair); always costs as
-- on there; below 10^10 pairs on and always cost as off (always plans as
-- on: its plans are those the default gives); the
-- cpu backend's constants ignore the setting.  EXPLAIN only: planning needs
-- no GPU.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(9);

\ir lib/plans.sql

-- the built-in cost constants of both backends (test/run_tests.sh gives the
-- other suites' cuda plans the cpu constants)
SELECT count(set_config(name, boot_val, true)) AS cost_settings FROM pg_settings
WHERE name ~ '^gpujoin\.(cpu|cuda)_[a-z_]+_(cost|kb|factor)$' \gset

CREATE TEMP TABLE cc_r AS
    SELECT i AS id, (i * 37) % 500 AS a, (i * 11) % 400 AS b FROM generate_series(1, 1000) i;
CREATE TEMP TABLE cc_s AS
    SELECT i AS id, (i * 13) % 500 AS a, (i * 29) % 400 AS b FROM generate_series(1, 1000) i;
ANALYZE cc_r;
ANALYZE cc_s;

-- the planner scales reltuples by the pages the table has now, which
-- ANALYZE just counted: 200k rows each, 4 10^10 pairs, without filling them
CREATE FUNCTION pg_temp.claim_rows(n float4) RETURNS void LANGUAGE sql AS $$
    UPDATE pg_class SET reltuples = n WHERE oid IN ('cc_r'::regclass, 'cc_s'::regclass)
$$;
SELECT pg_temp.claim_rows(200000);

SELECT pg_temp.serial_gpu_nestloop() \g /dev/null

\set q 'SELECT count(*) FROM cc_r r JOIN cc_s s ON r.a < s.a AND r.b > s.b AND r.a + s.b > 0'

-- the cost with gpujoin.compile_programs set to setting
CREATE FUNCTION pg_temp.cost_with(setting text, q text) RETURNS float8 LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('gpujoin.compile_programs', setting, true);
    RETURN pg_temp.total_cost(q);
END $$;

SET LOCAL gpujoin.device = cuda;
SET LOCAL gpujoin.compile_programs = off;
SELECT alike(pg_temp.plan_shape(:'q'), '%Custom Scan (GpuJoin)%', 'cuda costs: the count is a GpuJoin');
SELECT pg_temp.plan_shape(:'q') AS shape_off \gset
SET LOCAL gpujoin.compile_programs = on;
SELECT is(pg_temp.plan_shape(:'q'), :'shape_off', 'cuda costs: the same plan with compile_programs on and off');

SELECT cmp_ok(pg_temp.cost_with('on', :'q'), '<', pg_temp.cost_with('off', :'q'),
              'cuda costs, 4e10 pairs: the compiled program costs less than the interpreted one');
SELECT ok(abs((pg_temp.cost_with('off', :'q') - pg_temp.cost_with('on', :'q')) -
              200000.0 * 200000.0 *
              ((2 * current_setting('gpujoin.cuda_pair_cost')::float8 +
                0.25 * 5 * current_setting('gpujoin.cuda_program_pair_cost')::float8) -
               (2 + 0.3 * 5) * current_setting('gpujoin.cuda_pair_cost')::float8)) < 0.01,
          'cuda costs, 4e10 pairs: off charges the interpreter''s rate and on the compiled rate');
SELECT is(pg_temp.cost_with('always', :'q'), pg_temp.cost_with('on', :'q'),
          'cuda costs, 4e10 pairs: always costs as on');

-- 10^6 pairs: on compiles nothing this small
SELECT pg_temp.claim_rows(1000);
SELECT is(pg_temp.cost_with('on', :'q'), pg_temp.cost_with('off', :'q'),
          'cuda costs, 1e6 pairs: on costs as off');
SELECT is(pg_temp.cost_with('always', :'q'), pg_temp.cost_with('off', :'q'),
          'cuda costs, 1e6 pairs: always costs as off (it plans as on)');

-- the cpu backend always interprets
SELECT pg_temp.claim_rows(200000);
SET LOCAL gpujoin.device = cpu;
SELECT is(pg_temp.cost_with('on', :'q'), pg_temp.cost_with('off', :'q'),
          'cpu costs, 4e10 pairs: on costs as off');
SELECT is(pg_temp.cost_with('always', :'q'), pg_temp.cost_with('off', :'q'),
          'cpu costs, 4e10 pairs: always costs as off');

SELECT * FROM finish();
ROLLBACK;
