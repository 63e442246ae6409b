--
-- errors: a join condition that raises an error in PostgreSQL raises the same
-- error under GpuJoin (the device sends such pairs back to the host, which
-- evaluates them as PostgreSQL does), and the next query works.
--
SET client_min_messages = warning;
-- this file is about the join: aggregates over it stay in PostgreSQL
SET gpujoin.enable_aggregate = off;

SELECT q, gj_compare_error(q) AS result
FROM (VALUES
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b + y.b > 0'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.a * y.a > 0'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.c + y.c > 0'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.c * y.c > 0'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b / y.b > 0'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.c % y.c > 0'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON -x.b < y.b'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON abs(x.c) < y.c'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.c::int4 < y.b'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8 * y.f8 > 0'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8 / y.f8 > 0'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f4 * y.f4 > 0'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8::float4 < y.f4'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON x.d - y.d > 0'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON x.d + 10000000 > y.d'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b < y.b AND x.c * y.c > 0')
) AS v(q)
ORDER BY q;

-- a host qual that raises an error does so on every pair PostgreSQL
-- evaluates it on: those passing the quals before it in PostgreSQL's order,
-- whatever device quals come after it (found by test/fuzz)
CREATE TABLE t_hq_r AS SELECT 1 AS j4, date '2000-01-01' AS d;
CREATE TABLE t_hq_s AS SELECT 2 AS j4, date '1999-01-01' AS d, timestamp '2000-01-01' AS ts;
SELECT a.algorithm,
       gj_compare_error('SELECT * FROM t_hq_r r JOIN t_hq_s s ON r.j4 < s.j4 AND r.d + 2147483647 > s.ts AND r.d - 3 <= s.d') AS result
FROM unnest(ARRAY['nestloop', 'sortmerge', 'hash']) AS a(algorithm),
     LATERAL (SELECT set_config('gpujoin.algorithm', a.algorithm, false)) s;
RESET gpujoin.algorithm;

-- the backend is fine afterwards
SELECT gj_compare('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b < y.b') AS result;

-- statement_timeout ends a long GpuJoin cleanly, and the next query works
CREATE TABLE t_long AS SELECT g AS a FROM generate_series(1, 30000) g;
ANALYZE t_long;
BEGIN;
SELECT gj_force(true);
SET LOCAL statement_timeout = '300ms';
SELECT count(*) FROM t_long x JOIN t_long y ON x.a < y.a;
ROLLBACK;
BEGIN;
SELECT gj_force(true);
SET LOCAL statement_timeout = '300ms';
SET LOCAL gpujoin.algorithm = nestloop;
SELECT count(*) FROM t_long x JOIN t_long y ON x.a + 1 < y.a;
ROLLBACK;
SELECT gj_compare('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b < y.b') AS result;

-- Injected device faults (gpujoin.debug_fault).  Out of memory when a join
-- opens: the budget is halved and the join opened again, with the same rows.
SET gpujoin.debug_fault = begin_oom;
SELECT gj_compare('SELECT x.id, y.id FROM t_int x JOIN t_int y ON y.b BETWEEN x.b - 3 AND x.b + 3 WHERE x.id <= 240') AS result;
BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b = y.b', true) AS line
WHERE line ~ 'Retries';
ROLLBACK;

-- a fault in the middle of a join ends the query with an ERROR that names
-- the backend (masked here: the suite runs on both), and the next query works
CREATE FUNCTION gj_fault(fault text, query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('gpujoin.debug_fault', fault, false);
    PERFORM gj_force(true);
    PERFORM set_config('gpujoin.device_memory', '2kB', true);
    EXECUTE 'CREATE TEMP TABLE gj_err AS ' || query;
    DROP TABLE gj_err;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, 'on the (cpu|cuda)( \(service\))? backend', 'on the <backend> backend');
END $$;
SELECT fault, cond, gj_fault(fault, 'SELECT x.id AS xid, y.id AS yid FROM t_int x JOIN t_int y ON ' || cond) AS result
FROM unnest(ARRAY['step_error', 'step_oom']) AS fault,
     unnest(ARRAY['x.b < y.b', 'x.b = y.b', 'x.id + y.id < 200']) AS cond
ORDER BY 1, 2;
RESET gpujoin.debug_fault;
SELECT gj_compare('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b = y.b') AS result;

-- gpujoin.max_host_memory without spilling (gpujoin.enable_spill = off; the
-- spill is spill.sql's): a join whose inputs would not fit is left to
-- PostgreSQL, and one the planner underestimated ends with a clear ERROR
SET gpujoin.max_host_memory = '1MB';
SET gpujoin.enable_spill = off;
CREATE TABLE t_hostmem AS SELECT g AS a FROM generate_series(1, 100000) g;
ANALYZE t_hostmem;
BEGIN;
SELECT gj_force(true);
SELECT gj_uses_gpujoin('SELECT x.a FROM t_hostmem x JOIN t_hostmem y ON x.a = y.a + 1') AS offered;
SET LOCAL gpujoin.enable_aggregate = off;
-- "a % 1 = 0" is estimated to keep 0.5% of the rows; it keeps them all
-- (terse: the detail counts rows and bytes, which depend on the layout)
\set VERBOSITY terse
SELECT count(*) FROM t_hostmem x JOIN t_hostmem y ON x.a = y.a + 1
WHERE x.a % 1 = 0 AND y.a % 1 = 0;
\set VERBOSITY default
ROLLBACK;
RESET gpujoin.max_host_memory;
RESET gpujoin.enable_spill;
SELECT gj_compare('SELECT x.a FROM t_hostmem x JOIN t_hostmem y ON x.a = y.a + 1') AS result;
