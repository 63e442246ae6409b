--
-- setup.sql: the database SQLsmith runs against (run_sqlsmith.sh): a few
-- small tables whose columns are of the types GpuJoin knows (and numeric,
-- text, NULLs, NaN, infinities), so that the random queries join them with
-- conditions GpuJoin takes; every session has GpuJoin made to win (the
-- native join methods off, GpuJoin's costs zero) and its plans logged by
-- auto_explain, so that the run can count the GpuJoins it ran.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpujoin;

CREATE TABLE s_int AS
SELECT g AS id,
       CASE WHEN g % 17 = 0 THEN NULL ELSE ((g * 7) % 61 - 30)::int2 END AS a,
       CASE WHEN g % 19 = 0 THEN NULL ELSE (g * 13) % 97 - 48 END AS b,
       CASE WHEN g % 23 = 0 THEN NULL ELSE ((g::int8 * 31) % 113 - 56) * 1000000000 END AS c,
       g % 3 = 0 AS flag
FROM generate_series(1, 300) g;
INSERT INTO s_int VALUES (301, 32767, 2147483647, 9223372036854775807, true),
                         (302, -32768, -2147483648, -9223372036854775808, false);

CREATE TABLE s_flt AS
SELECT g AS id,
       CASE WHEN g % 13 = 0 THEN NULL ELSE ((g * 37) % 101 - 50) / 4.0 END::float4 AS f4,
       CASE WHEN g % 11 = 0 THEN NULL ELSE ((g * 41) % 103 - 51) / 8.0 END::float8 AS f8,
       ((g * 7) % 50 / 3.0)::numeric(10, 3) AS n
FROM generate_series(1, 300) g;
INSERT INTO s_flt VALUES (301, 'NaN', 'NaN', 'NaN'), (302, 'Infinity', '-Infinity', 0),
                         (303, '-0', '-0', -0.5), (304, 0, 0, 0);

CREATE TABLE s_time AS
SELECT g AS id,
       CASE WHEN g % 17 = 0 THEN NULL ELSE date '2024-01-01' + (g * 7) % 90 END AS d,
       CASE WHEN g % 19 = 0 THEN NULL
            ELSE timestamp '2024-01-01' + ((g * 11) % 97) * interval '1 hour' END AS ts,
       timestamptz '2024-01-01 00:00+00' + ((g * 13) % 89) * interval '1 hour' AS tz,
       'v' || (g % 40) AS label
FROM generate_series(1, 300) g;
INSERT INTO s_time VALUES (301, 'infinity', 'infinity', 'infinity', NULL),
                          (302, '-infinity', '-infinity', '-infinity', '');

CREATE TABLE s_mix AS
SELECT g AS id, g % 50 AS k, (g % 70)::int8 AS k8, (g % 30) / 2.0 AS f,
       date '2024-01-01' + g % 60 AS d, md5(g::text) AS t
FROM generate_series(1, 400) g;
ANALYZE s_int, s_flt, s_time, s_mix;

DO $$
BEGIN
    EXECUTE format('ALTER DATABASE %I SET enable_nestloop = off', current_database());
    EXECUTE format('ALTER DATABASE %I SET enable_hashjoin = off', current_database());
    EXECUTE format('ALTER DATABASE %I SET enable_mergejoin = off', current_database());
    EXECUTE format('ALTER DATABASE %I SET gpujoin.cpu_startup_cost = 0', current_database());
    EXECUTE format('ALTER DATABASE %I SET gpujoin.cpu_pair_cost = 0', current_database());
    EXECUTE format('ALTER DATABASE %I SET gpujoin.cpu_sort_cost = 0', current_database());
    EXECUTE format('ALTER DATABASE %I SET gpujoin.cuda_startup_cost = 0', current_database());
    EXECUTE format('ALTER DATABASE %I SET gpujoin.cuda_pair_cost = 0', current_database());
    EXECUTE format('ALTER DATABASE %I SET gpujoin.cuda_sort_cost = 0', current_database());
    EXECUTE format('ALTER DATABASE %I SET statement_timeout = ''2s''', current_database());
    EXECUTE format('ALTER DATABASE %I SET session_preload_libraries = ''auto_explain''', current_database());
    EXECUTE format('ALTER DATABASE %I SET auto_explain.log_min_duration = 0', current_database());
END $$;
