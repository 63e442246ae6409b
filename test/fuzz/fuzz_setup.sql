--
-- fuzz_setup.sql: server-side helpers of the randomized differential test
-- (test/fuzz/fuzz.pl), created in its own database.
--
-- fuzz_run(mode, algorithm, device_memory, query[, native_query]) runs one
-- query under one setting (native_query, where given, under the native ones:
-- a FULL JOIN PostgreSQL cannot plan, written out by hand) and returns one
-- line: the GpuJoin algorithms in its plan ('-' for
-- none), then the outcome, either "ok <rows> <fingerprint>" or
-- "error <SQLSTATE> <message>".  The fingerprint is two sums of 64-bit hashes
-- of the rows' text, so it is independent of row order, counts duplicates,
-- and needs no memory however many rows the query returns.  All settings are
-- transaction-local: each call is its own transaction.
--
-- Modes: native (gpujoin.enabled off, the planner's own choice), nl / hj /
-- mj (native, only nested loop / hash join / merge join allowed: PostgreSQL's
-- plans themselves differ in which pairs they evaluate, hence which errors
-- they raise), force (GpuJoin on, the native join methods off, as gj_force in
-- sql/setup.sql does) and cheap (GpuJoin on with zero costs, the native
-- methods still allowed, so the planner mixes them).
--
SET client_min_messages = warning;

CREATE OR REPLACE FUNCTION fuzz_settings(mode text, algorithm text, device_memory text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('gpujoin.enabled', (mode IN ('force', 'cheap'))::text, true);
    PERFORM set_config('enable_nestloop', (mode IN ('native', 'nl', 'cheap'))::text, true);
    PERFORM set_config('enable_hashjoin', (mode IN ('native', 'hj', 'cheap'))::text, true);
    PERFORM set_config('enable_mergejoin', (mode IN ('native', 'mj', 'cheap'))::text, true);
    IF mode = 'cheap' THEN
        -- every cost constant of both backends
        PERFORM set_config(name, '0', true) FROM pg_settings
         WHERE name ~ '^gpujoin\.(cpu|cuda)_[a-z]+_cost$';
    END IF;
    PERFORM set_config('gpujoin.algorithm', coalesce(algorithm, 'auto'), true);
    PERFORM set_config('gpujoin.device_memory', coalesce(device_memory, '0'), true);
END $$;

-- The GpuJoin algorithms of a plan, in plan order ('-' for none), each
-- followed by ':agg' where the node computes the aggregates itself.
CREATE OR REPLACE FUNCTION fuzz_plan(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    algs text[] := '{}';
    n_gpujoin int := 0;
    gpu_aggs boolean := false;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line LIKE '%Custom Scan (GpuJoin)%' THEN
            n_gpujoin := n_gpujoin + 1;
            gpu_aggs := false;
        ELSIF line ~ '^\s*GPU Aggregates: ' THEN
            gpu_aggs := true;
        ELSIF line ~ '^\s*Algorithm: ' THEN
            algs := algs || (regexp_replace(line, '^\s*Algorithm: ', '')
                             || CASE WHEN gpu_aggs THEN ':agg' ELSE '' END);
        END IF;
    END LOOP;
    IF n_gpujoin = 0 THEN
        RETURN '-';
    END IF;
    -- a GpuJoin whose EXPLAIN has no Algorithm line still counts
    WHILE cardinality(algs) < n_gpujoin LOOP
        algs := algs || 'unknown'::text;
    END LOOP;
    RETURN array_to_string(algs, ',');
END $$;

DROP FUNCTION IF EXISTS fuzz_run(text, text, text, text);
DROP FUNCTION IF EXISTS fuzz_run(text, text, text, text, text);
CREATE FUNCTION fuzz_run(mode text, algorithm text, device_memory text, query text,
                         native_query text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    plan text := '-';
    n bigint;
    h1 numeric;
    h2 numeric;
BEGIN
    PERFORM fuzz_settings(mode, algorithm, device_memory);
    IF native_query IS NOT NULL AND mode NOT IN ('force', 'cheap') THEN
        query := native_query;
    END IF;
    BEGIN
        plan := fuzz_plan(query);
        EXECUTE format('SELECT count(*), coalesce(sum(hashtextextended(r, 0)), 0), '
                       'coalesce(sum(hashtextextended(r, 42)), 0) '
                       'FROM (SELECT q::text AS r FROM (%s) q) x', query)
            INTO n, h1, h2;
    EXCEPTION WHEN query_canceled OR OTHERS THEN
        -- a statement_timeout is an outcome too (OTHERS does not catch it)
        RETURN plan || '|error ' || SQLSTATE || ' ' || replace(SQLERRM, E'\n', ' ');
    END;
    RETURN plan || '|ok ' || n || ' ' || h1 || ' ' || h2;
END $$;

-- Up to 20 rows that one setting returns and the other does not, for the
-- failure report: "+row" only under the first, "-row" only under the second.
CREATE OR REPLACE FUNCTION fuzz_diff(query text, mode text, algorithm text, device_memory text)
RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM fuzz_settings(mode, algorithm, device_memory);
    EXECUTE 'CREATE TEMP TABLE fuzz_a AS SELECT q::text AS r FROM (' || query || ') q';
    PERFORM fuzz_settings('native', NULL, NULL);
    EXECUTE 'CREATE TEMP TABLE fuzz_b AS SELECT q::text AS r FROM (' || query || ') q';
    RETURN QUERY
        (SELECT '+' || r FROM (TABLE fuzz_a EXCEPT ALL TABLE fuzz_b) d ORDER BY 1 LIMIT 10)
        UNION ALL
        (SELECT '-' || r FROM (TABLE fuzz_b EXCEPT ALL TABLE fuzz_a) d ORDER BY 1 LIMIT 10);
    DROP TABLE fuzz_a;
    DROP TABLE fuzz_b;
END $$;
