--
-- setup: the tables and helpers every other regression file uses.
--
-- gj_compare(query) runs a query twice, once with GpuJoin forced (the native
-- join methods disabled, so the planner takes GpuJoin wherever it is offered)
-- and once with gpujoin.enabled = off, and compares the two results as
-- multisets.  It returns the row count and whether GpuJoin was in the plan,
-- or the number of rows that differ.  Nothing here depends on the backend,
-- so the same expected output holds for gpujoin.device = cpu and cuda.
--
SET client_min_messages = warning;

CREATE FUNCTION gj_force(on_gpu boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('gpujoin.enabled', on_gpu::text, true);
    PERFORM set_config('enable_nestloop', (NOT on_gpu)::text, true);
    PERFORM set_config('enable_hashjoin', (NOT on_gpu)::text, true);
    PERFORM set_config('enable_mergejoin', (NOT on_gpu)::text, true);
END $$;

CREATE FUNCTION gj_uses_gpujoin(query text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line LIKE '%Custom Scan (GpuJoin)%' THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END $$;

-- The rows of query with GpuJoin forced against those of ref_query with
-- PostgreSQL's own plans, as multisets: how many each, how many differ.
CREATE FUNCTION gj_multiset_diff(query text, ref_query text,
                                 OUT n_gpu bigint, OUT n_native bigint, OUT n_diff bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM gj_force(true);
    EXECUTE 'CREATE TEMP TABLE gj_result_gpu AS SELECT q::text AS r FROM (' || query || ') q';
    PERFORM gj_force(false);
    EXECUTE 'CREATE TEMP TABLE gj_result_native AS SELECT q::text AS r FROM (' || ref_query || ') q';
    SELECT count(*) INTO n_gpu FROM gj_result_gpu;
    SELECT count(*) INTO n_native FROM gj_result_native;
    SELECT count(*) INTO n_diff FROM (
        (TABLE gj_result_gpu EXCEPT ALL TABLE gj_result_native)
        UNION ALL
        (TABLE gj_result_native EXCEPT ALL TABLE gj_result_gpu)) d;
    DROP TABLE gj_result_gpu;
    DROP TABLE gj_result_native;
    PERFORM set_config('gpujoin.enabled', 'on', true);
END $$;

CREATE FUNCTION gj_compare(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    used boolean;
    n_gpu bigint;
    n_native bigint;
    n_diff bigint;
BEGIN
    PERFORM gj_force(true);
    used := gj_uses_gpujoin(query);
    SELECT * INTO n_gpu, n_native, n_diff FROM gj_multiset_diff(query, query);
    IF n_diff <> 0 THEN
        RETURN format('MISMATCH: %s rows differ (gpujoin %s rows, native %s rows)',
                      n_diff, n_gpu, n_native);
    END IF;
    RETURN format('%s rows, %s', n_gpu, CASE WHEN used THEN 'GpuJoin' ELSE 'native' END);
END $$;

-- Both plans must fail with the same error, or both succeed with equal rows.
CREATE FUNCTION gj_compare_error(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    err_gpu text := 'no error';
    err_native text := 'no error';
BEGIN
    BEGIN
        PERFORM gj_force(true);
        EXECUTE 'CREATE TEMP TABLE gj_err AS SELECT q::text AS r FROM (' || query || ') q';
        DROP TABLE gj_err;
    EXCEPTION WHEN OTHERS THEN
        err_gpu := SQLSTATE || ': ' || SQLERRM;
    END;
    BEGIN
        PERFORM gj_force(false);
        EXECUTE 'CREATE TEMP TABLE gj_err AS SELECT q::text AS r FROM (' || query || ') q';
        DROP TABLE gj_err;
    EXCEPTION WHEN OTHERS THEN
        err_native := SQLSTATE || ': ' || SQLERRM;
    END;
    PERFORM set_config('gpujoin.enabled', 'on', true);
    IF err_gpu IS DISTINCT FROM err_native THEN
        RETURN format('MISMATCH: gpujoin "%s", native "%s"', err_gpu, err_native);
    END IF;
    RETURN err_gpu;
END $$;

-- The lines of a forced GpuJoin plan's EXPLAIN (with the given options) that
-- match pattern, trimmed and joined by sep: a plan's shape in one cell.
CREATE FUNCTION gj_plan_lines(query text, pattern text, sep text DEFAULT ' | ',
                              options text DEFAULT 'COSTS OFF') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    result text := '';
BEGIN
    PERFORM gj_force(true);
    FOR line IN EXECUTE format('EXPLAIN (%s) %s', options, query) LOOP
        IF line ~ pattern THEN
            result := result || CASE WHEN result = '' THEN '' ELSE sep END || btrim(line);
        END IF;
    END LOOP;
    PERFORM gj_force(false);
    PERFORM set_config('gpujoin.enabled', 'on', true);
    RETURN result;
END $$;

-- EXPLAIN text with what varies between runs and backends masked: timings,
-- the device line, the backend that ran the join, and whether its program
-- was compiled (cuda).
CREATE FUNCTION gj_explain(query text, with_analyze boolean DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE format('EXPLAIN (COSTS OFF%s) %s',
                               CASE WHEN with_analyze THEN ', ANALYZE, TIMING OFF, SUMMARY OFF' ELSE '' END,
                               query) LOOP
        CONTINUE WHEN line ~ '^\s*(Device|Devices|Backend|CUDA Init Time|Transfer Time|Kernel Time|Program|Program Cache Hits): ';
        RETURN NEXT regexp_replace(line, '(Time|Memory Usage|Memory): [0-9.]+( ?[a-zA-Z]+)?', '\1: N', 'g');
    END LOOP;
END $$;

-- Integers: NULLs, duplicates and the extremes of each type.
CREATE TABLE t_int (id int PRIMARY KEY, a int2, b int4, c int8, flag boolean);
INSERT INTO t_int
SELECT g,
       CASE WHEN g % 17 = 0 THEN NULL ELSE ((g * 7) % 61 - 30)::int2 END,
       CASE WHEN g % 19 = 0 THEN NULL ELSE (g * 13) % 97 - 48 END,
       CASE WHEN g % 23 = 0 THEN NULL ELSE ((g::int8 * 31) % 113 - 56) * 1000000000 END,
       CASE WHEN g % 29 = 0 THEN NULL ELSE g % 3 = 0 END
FROM generate_series(1, 240) g;
INSERT INTO t_int VALUES
    (241, 32767, 2147483647, 9223372036854775807, true),
    (242, -32768, -2147483648, -9223372036854775808, false),
    (243, 0, 0, 0, NULL),
    (244, NULL, NULL, NULL, NULL);

-- Floats: NaN, +-Infinity, -0.0 and 0.0, NULLs, duplicates, tiny and huge.
CREATE TABLE t_flt (id int PRIMARY KEY, f4 float4, f8 float8);
INSERT INTO t_flt
SELECT g,
       CASE WHEN g % 13 = 0 THEN NULL ELSE ((g * 37) % 101 - 50) / 4.0 END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE ((g * 41) % 103 - 51) / 8.0 END
FROM generate_series(1, 200) g;
INSERT INTO t_flt VALUES
    (201, 'NaN', 'NaN'), (202, 'NaN', 'NaN'),
    (203, 'Infinity', 'Infinity'), (204, '-Infinity', '-Infinity'),
    (205, '-0', '-0'), (206, '0', '0'),
    (207, '1e-38', '1e-308'), (208, '3e38', '1e308'),
    (209, '-3e38', '-1e308'), (210, 0.1, 0.1);

-- Dates and timestamps, with infinities and NULLs.
CREATE TABLE t_time (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz);
INSERT INTO t_time
SELECT g,
       CASE WHEN g % 17 = 0 THEN NULL ELSE date '2024-01-01' + (g * 7) % 90 END,
       CASE WHEN g % 19 = 0 THEN NULL
            ELSE timestamp '2024-01-01' + ((g * 11) % 97) * interval '1 hour' END,
       CASE WHEN g % 23 = 0 THEN NULL
            ELSE timestamptz '2024-01-01 00:00+00' + ((g * 13) % 89) * interval '1 hour' END
FROM generate_series(1, 200) g;
INSERT INTO t_time VALUES
    (201, 'infinity', 'infinity', 'infinity'),
    (202, '-infinity', '-infinity', '-infinity'),
    (203, '4713-01-01 BC', '4713-01-01 00:00 BC', '4713-01-01 00:00+00 BC'),
    (204, '5874897-12-31', '294276-12-31 23:59:59', '294276-12-30 23:59:59+00');

-- Empty and one-row tables.
CREATE TABLE t_empty (id int, b int4, f8 float8);
CREATE TABLE t_one (id int, b int4, f8 float8);
INSERT INTO t_one VALUES (1, 5, 0.5);

ANALYZE t_int, t_flt, t_time, t_empty, t_one;
