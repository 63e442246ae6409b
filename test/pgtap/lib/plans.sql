-- test/pgtap/lib/plans.sql: helpers of the pgTAP files that include it
-- (\ir lib/plans.sql), in pg_temp so that the file's transaction drops them.
-- pg_prove runs test/pgtap/*.sql only: this file is no test of its own.
--   plan_of(q)          EXPLAIN of q, the lines joined by newlines
--   plan_shape(q)       EXPLAIN (COSTS OFF) of q, the same way
--   explain_analyze(q)  EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
--   rows_of(q)          q's rows as a sorted text array (a multiset)
--   total_cost(q)       the top plan node's total cost, from EXPLAIN (FORMAT JSON)
CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; result text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
        result := result || line || E'\n';
    END LOOP;
    RETURN result;
END $$;

CREATE FUNCTION pg_temp.plan_shape(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; result text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        result := result || line || E'\n';
    END LOOP;
    RETURN result;
END $$;

CREATE FUNCTION pg_temp.explain_analyze(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; result text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        result := result || line || E'\n';
    END LOOP;
    RETURN result;
END $$;

CREATE FUNCTION pg_temp.rows_of(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE result text[];
BEGIN
    EXECUTE 'SELECT coalesce(array_agg(r::text ORDER BY r::text), ''{}'') FROM (' || q || ') r'
        INTO result;
    RETURN result;
END $$;

CREATE FUNCTION pg_temp.total_cost(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Total Cost')::float8;
END $$;

-- for the rest of the transaction: a serial GpuJoin nested loop (no
-- dominance counting, PostgreSQL's joins off)
CREATE FUNCTION pg_temp.serial_gpu_nestloop() RETURNS void LANGUAGE sql AS $$
    SELECT set_config('gpujoin.algorithm', 'nestloop', true),
           set_config('gpujoin.enable_dominance', 'off', true),
           set_config('enable_hashjoin', 'off', true),
           set_config('enable_mergejoin', 'off', true),
           set_config('enable_nestloop', 'off', true),
           set_config('max_parallel_workers_per_gather', '0', true)
$$;
