--
-- setup.sql: the database of the load test (run_load.sh).  Two tables of
-- 20000 rows with an equi-join key (k, Zipf-like), a band column (t) and
-- theta columns (a, b); every session of this database has the native join
-- methods off, so the planner takes GpuJoin wherever it is offered.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpujoin;
DROP TABLE IF EXISTS lr, ls;
CREATE TABLE lr AS
SELECT g AS id, (1000 / (1 + g % 97)) + g % 50 AS k, (g * 37) % 20000 AS t,
       (g * 7919) % 10000 AS a, g % 10000 AS b, g % 5 AS h, (g % 113) / 7.0 AS v
FROM generate_series(1, 20000) g;
CREATE TABLE ls AS
SELECT g AS id, (1000 / (1 + g % 89)) + g % 40 AS k, (g * 53) % 20000 AS t,
       (g * 104729) % 10000 AS a, g % 10000 AS b, g % 5 AS h, (g % 101) / 3.0 AS v
FROM generate_series(1, 20000) g;
ANALYZE lr, ls;
DROP SEQUENCE IF EXISTS load_cancels;
CREATE SEQUENCE load_cancels;

-- A statement that takes seconds, run in a block that catches its cancel
-- (pgbench ends a client at its first error): statement_timeout, set before
-- the DO, ends it in the middle of a GpuJoin.
CREATE OR REPLACE FUNCTION load_long_join(algorithm text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('gpujoin.algorithm', algorithm, true);
    -- every pair comes back to count(*): seconds on any backend (pushed down,
    -- the count can take less than the timeout on a GPU, which then fires
    -- after this block)
    PERFORM set_config('gpujoin.enable_aggregate', 'off', true);
    IF algorithm = 'hash' THEN
        PERFORM count(*) FROM lr x JOIN ls y ON x.h = y.h;
    ELSIF algorithm = 'sortmerge' THEN
        PERFORM count(*) FROM lr x JOIN ls y ON x.a < y.a;
    ELSE
        PERFORM count(*) FROM lr x JOIN ls y ON x.a + 1 < y.b - 1;
    END IF;
EXCEPTION WHEN query_canceled THEN
    PERFORM nextval('load_cancels');
END $$;

DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET enable_nestloop = off', current_database());
    EXECUTE format('ALTER DATABASE %I SET enable_hashjoin = off', current_database());
    EXECUTE format('ALTER DATABASE %I SET enable_mergejoin = off', current_database());
END $$;
