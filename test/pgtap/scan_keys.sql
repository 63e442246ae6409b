-- scan_keys.sql: a join column that only the device quals read, whose key
-- column's values are its Datums (int2/int4/int8/date/timestamp keys, not
-- hashed), is not stored as a Datum column: the host reads it from the key
-- column where it needs it (a recheck, the pairs of a row with an inexact
-- key, a null-extended row).  EXPLAIN VERBOSE names those columns ("Columns
-- Read from Keys").  A column that is returned, grouped by, aggregated or
-- read by a host qual keeps its Datums, as does every float, numeric and
-- text key.  Each query returns the native plan's rows: NULL keys, outer,
-- semi and anti joins, host quals, inexact numeric keys, NaN and -0.0,
-- parallel plans, rescans and spilled joins.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(54);

\ir lib/plans.sql

-- "Columns Read from Keys" of the first GpuJoin of the plan; 'none' where
-- the line is missing, 'native' where there is no GpuJoin
CREATE FUNCTION pg_temp.keys_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    seen boolean := false;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
        IF line ~ 'Custom Scan \(GpuJoin\)' THEN
            seen := true;
        ELSIF seen AND line ~ 'Columns Read from Keys: ' THEN
            RETURN regexp_replace(line, '^.*Columns Read from Keys: ', '');
        ELSIF seen AND line ~ '->' THEN
            RETURN 'none';
        END IF;
    END LOOP;
    RETURN CASE WHEN seen THEN 'none' ELSE 'native' END;
END $$;

-- q's rows as a multiset digest, and the same under PostgreSQL's own plan
CREATE FUNCTION pg_temp.digest(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE result text;
BEGIN
    EXECUTE 'SELECT count(*) || '' rows, '' || md5(coalesce(string_agg(r::text, '','' '
            'ORDER BY r::text), '''')) FROM (' || q || ') r' INTO result;
    RETURN result;
END $$;
CREATE FUNCTION pg_temp.native_digest(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE result text;
BEGIN
    PERFORM set_config('gpujoin.enabled', 'off', true);
    result := pg_temp.digest(q);
    PERFORM set_config('gpujoin.enabled', 'on', true);
    RETURN result;
END $$;

-- parallel workers cannot read temporary tables: plain ones, rolled back.
-- k is NULL in every 50th row of f and matches no d row past 3000; kf has
-- NaN, -0.0 and 0.0; kn has values no int64 holds at any scale.
CREATE TABLE gj_sk_f AS
    SELECT g::int8 AS id, CASE WHEN g % 50 = 0 THEN NULL ELSE g % 3600 END AS k,
           (g % 97)::float8 AS v, g % 10 AS g,
           (g % 3600)::int2 AS k2, (g % 3600)::int8 * 1000000007 AS k8,
           date '2020-01-01' + g % 3600 AS kd,
           timestamp '2020-01-01' + (g % 3600) * interval '1 hour' AS kts,
           'k' || g % 3600 AS kt,
           CASE g % 11 WHEN 0 THEN 'NaN'::float8 WHEN 1 THEN -0.0::float8
                       ELSE (g % 3600)::float8 END AS kf,
           CASE WHEN g % 13 = 0 THEN 1e30::numeric + g % 3600
                ELSE (g % 3600)::numeric / 4 END AS kn
    FROM generate_series(1, 12000) g;
CREATE TABLE gj_sk_d AS
    SELECT g AS k, (g % 10)::float8 AS w, g % 100 AS c,
           g::int2 AS k2, g::int8 * 1000000007 AS k8, date '2020-01-01' + g AS kd,
           timestamp '2020-01-01' + g * interval '1 hour' AS kts, 'k' || g AS kt,
           CASE g % 7 WHEN 0 THEN 'NaN'::float8 WHEN 1 THEN 0.0::float8 ELSE g::float8 END AS kf,
           CASE WHEN g % 13 = 0 THEN 1e30::numeric + g ELSE g::numeric / 4 END AS kn
    FROM generate_series(0, 2999) g;
ALTER TABLE gj_sk_d ADD PRIMARY KEY (k);
CREATE TABLE gj_sk_t AS SELECT g AS x FROM generate_series(0, 4) g;
ANALYZE gj_sk_f;
ANALYZE gj_sk_d;
ANALYZE gj_sk_t;

SET LOCAL gpujoin.device = cpu;
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;

\set q_count 'SELECT count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k'
\set q_rows 'SELECT f.id, d.w FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k'
\set q_rows_key 'SELECT f.id, f.k, d.w FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k'
\set q_group_key 'SELECT f.k, count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k GROUP BY f.k'
\set q_group_other 'SELECT d.c, count(*), sum(f.v) FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k GROUP BY d.c'
\set q_sum_key 'SELECT count(*), sum(f.k), max(d.k) FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k'
\set q_host_qual 'SELECT count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k AND f.k::text <> d.w::text'
\set q_left 'SELECT f.id, d.w FROM gj_sk_f f LEFT JOIN gj_sk_d d ON f.k = d.k'
\set q_left_count 'SELECT count(*), count(d.w) FROM gj_sk_f f LEFT JOIN gj_sk_d d ON f.k = d.k'
\set q_full 'SELECT f.id, d.c FROM gj_sk_f f FULL JOIN gj_sk_d d ON f.k = d.k'
\set q_semi 'SELECT f.id FROM gj_sk_f f WHERE EXISTS (SELECT 1 FROM gj_sk_d d WHERE d.k = f.k)'
\set q_anti 'SELECT f.id FROM gj_sk_f f WHERE NOT EXISTS (SELECT 1 FROM gj_sk_d d WHERE d.k = f.k)'
\set q_int2 'SELECT count(*), sum(d.w) FROM gj_sk_f f JOIN gj_sk_d d ON f.k2 = d.k2'
\set q_int8 'SELECT f.id, d.c FROM gj_sk_f f JOIN gj_sk_d d ON f.k8 = d.k8'
\set q_date 'SELECT count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.kd = d.kd'
\set q_ts 'SELECT f.id FROM gj_sk_f f JOIN gj_sk_d d ON f.kts = d.kts'
\set q_theta 'SELECT count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.k < d.k AND d.c < 3'
\set q_text 'SELECT count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.kt = d.kt'
\set q_float 'SELECT f.id, d.c FROM gj_sk_f f JOIN gj_sk_d d ON f.kf = d.kf'
\set q_numeric 'SELECT count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.kn = d.kn'
\set q_inexact 'SELECT f.id, d.c FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k AND f.kn = d.kn'
\set q_recheck 'SELECT f.id, d.c FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k AND (d.c < 0 AND f.k8 * d.k8 > 0 OR f.id % 2 = 0)'
\set q_recheck_count 'SELECT count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k AND (d.c < 0 AND f.k8 * d.k8 > 0 OR f.id % 2 = 0)'
\set q_overflow 'SELECT count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k AND f.k8 * d.k8 > 0'
\set q_rescan 'SELECT t.x, (SELECT count(*) FROM gj_sk_f f JOIN gj_sk_d d ON f.k = d.k WHERE d.c = t.x) FROM gj_sk_t t'

-- dropped: only the device quals read the key columns
SELECT is(pg_temp.keys_of(:'q_count'), 'f.k, d.k', 'count(*) of an int4 equi-join: both keys read from the key columns');
SELECT is(pg_temp.digest(:'q_count'), pg_temp.native_digest(:'q_count'), 'count(*) with NULL keys: the native result');
SELECT is(pg_temp.keys_of(:'q_rows'), 'f.k, d.k', 'rows of other columns returned: both keys from the key columns');
SELECT is(pg_temp.digest(:'q_rows'), pg_temp.native_digest(:'q_rows'), 'rows of other columns: the native rows');
SELECT is(pg_temp.keys_of(:'q_group_other'), 'f.k, d.k', 'grouping by another column: both keys from the key columns');
SELECT is(pg_temp.digest(:'q_group_other'), pg_temp.native_digest(:'q_group_other'), 'grouping by another column: the native groups');
SELECT is(pg_temp.keys_of(:'q_int2'), 'f.k2, d.k2', 'int2 keys: from the key columns');
SELECT is(pg_temp.digest(:'q_int2'), pg_temp.native_digest(:'q_int2'), 'int2 keys: the native result');
SELECT is(pg_temp.keys_of(:'q_int8'), 'f.k8, d.k8', 'int8 keys: from the key columns');
SELECT is(pg_temp.digest(:'q_int8'), pg_temp.native_digest(:'q_int8'), 'int8 keys: the native rows');
SELECT is(pg_temp.keys_of(:'q_date'), 'f.kd, d.kd', 'date keys: from the key columns');
SELECT is(pg_temp.digest(:'q_date'), pg_temp.native_digest(:'q_date'), 'date keys: the native result');
SELECT is(pg_temp.keys_of(:'q_ts'), 'f.kts, d.kts', 'timestamp keys: from the key columns');
SELECT is(pg_temp.digest(:'q_ts'), pg_temp.native_digest(:'q_ts'), 'timestamp keys: the native rows');
SELECT is(pg_temp.keys_of(:'q_theta'), 'f.k, d.k', 'an inequality join: from the key columns, d.c stored');
SELECT is(pg_temp.digest(:'q_theta'), pg_temp.native_digest(:'q_theta'), 'an inequality join: the native result');

-- kept: something but the device quals reads the column
SELECT is(pg_temp.keys_of(:'q_rows_key'), 'd.k', 'f.k returned: stored; d.k from its key column');
SELECT is(pg_temp.digest(:'q_rows_key'), pg_temp.native_digest(:'q_rows_key'), 'f.k returned: the native rows');
SELECT is(pg_temp.keys_of(:'q_group_key'), 'd.k', 'grouping by f.k: stored (a group''s row); d.k from its key column');
SELECT is(pg_temp.digest(:'q_group_key'), pg_temp.native_digest(:'q_group_key'), 'grouping by the key: the native groups');
SELECT is(pg_temp.keys_of(:'q_sum_key'), 'none', 'sum(f.k), max(d.k): both arguments stored');
SELECT is(pg_temp.digest(:'q_sum_key'), pg_temp.native_digest(:'q_sum_key'), 'aggregates of the keys: the native result');
SELECT is(pg_temp.keys_of(:'q_host_qual'), 'd.k', 'a host qual reading f.k: stored; d.k from its key column');
SELECT is(pg_temp.digest(:'q_host_qual'), pg_temp.native_digest(:'q_host_qual'), 'a host qual on the key: the native result');
SELECT is(pg_temp.keys_of(:'q_text'), 'none', 'text keys (hashed): stored');
SELECT is(pg_temp.digest(:'q_text'), pg_temp.native_digest(:'q_text'), 'text keys: the native result');
SELECT is(pg_temp.keys_of(:'q_float'), 'none', 'float8 keys (NaN, -0.0): stored');
SELECT is(pg_temp.digest(:'q_float'), pg_temp.native_digest(:'q_float'), 'float8 keys with NaN and -0.0: the native rows');
SELECT is(pg_temp.keys_of(:'q_numeric'), 'none', 'numeric keys: stored');
SELECT is(pg_temp.digest(:'q_numeric'), pg_temp.native_digest(:'q_numeric'), 'numeric keys, some inexact: the native result');

-- the host reads the dropped columns from the key columns
SELECT is(pg_temp.keys_of(:'q_inexact'), 'f.k, d.k', 'an int4 key beside inexact numeric keys: int4 from the key columns');
SELECT matches(pg_temp.explain_analyze(:'q_inexact'), 'Pairs with Inexact Keys: [1-9]',
               'the host evaluates the pairs of the rows with inexact keys');
SELECT is(pg_temp.digest(:'q_inexact'), pg_temp.native_digest(:'q_inexact'),
          'the host''s pairs of rows with inexact keys read f.k, d.k from the key columns: the native rows');
-- the device's f.k8 * d.k8 overflows where PostgreSQL never computes it
-- (d.c < 0 is false first): the host rechecks those pairs, in PostgreSQL's
-- order, from the key columns
SELECT is(pg_temp.keys_of(:'q_recheck'), 'f.k, d.k, f.k8, d.k8', 'a recheck''s columns: from the key columns');
SELECT matches(pg_temp.explain_analyze(:'q_recheck'), 'Host Rechecks: [1-9]', 'pairs are rechecked on the host');
SELECT is(pg_temp.digest(:'q_recheck'), pg_temp.native_digest(:'q_recheck'), 'rechecked pairs: the native rows');
SELECT is(pg_temp.keys_of(:'q_recheck_count'), 'f.k, d.k, d.c, f.k8, d.k8, f.id',
          'count(*) with a recheck: every column from the key columns');
SELECT is(pg_temp.digest(:'q_recheck_count'), pg_temp.native_digest(:'q_recheck_count'),
          'count(*) of rechecked pairs: the native result');
SELECT throws_ok(:'q_overflow', '22003', 'bigint out of range',
                 'an overflow the native plan raises too: the recheck raises it');

-- outer, semi and anti joins: a null-extended row reads its keys too
SELECT is(pg_temp.keys_of(:'q_left'), 'f.k, d.k', 'LEFT JOIN: from the key columns');
SELECT is(pg_temp.digest(:'q_left'), pg_temp.native_digest(:'q_left'), 'LEFT JOIN with NULL and unmatched keys: the native rows');
SELECT is(pg_temp.digest(:'q_left_count'), pg_temp.native_digest(:'q_left_count'), 'LEFT JOIN counts: the native result');
SELECT is(pg_temp.keys_of(:'q_full'), 'f.k, d.k', 'FULL JOIN: from the key columns');
SELECT is(pg_temp.digest(:'q_full'), pg_temp.native_digest(:'q_full'), 'FULL JOIN: the native rows');
SELECT is(pg_temp.digest(:'q_semi'), pg_temp.native_digest(:'q_semi'), 'semi join: the native rows');
SELECT is(pg_temp.digest(:'q_anti'), pg_temp.native_digest(:'q_anti'), 'anti join, NULL keys: the native rows');

-- rescans: a correlated subquery over the join, run once per row of t
SELECT matches(pg_temp.plan_of(:'q_rescan'), 'GpuJoin', 'the correlated subquery is a GpuJoin');
SELECT is(pg_temp.digest(:'q_rescan'), pg_temp.native_digest(:'q_rescan'), 'rescans: the native result');

-- spilled joins: the keys go through the temporary files
SET LOCAL gpujoin.max_host_memory = '64kB';
SELECT is(pg_temp.digest(:'q_left'), pg_temp.native_digest(:'q_left'), 'LEFT JOIN, spilled: the native rows');
SELECT is(pg_temp.digest(:'q_inexact'), pg_temp.native_digest(:'q_inexact'), 'inexact keys, spilled: the native rows');
SET LOCAL gpujoin.max_host_memory TO DEFAULT;

-- parallel plans: every process reads the same columns from the keys
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT matches(pg_temp.plan_of(:'q_count'), 'Gather(.*\n)*.*Parallel Custom Scan \(GpuJoin\)', 'count(*): a parallel plan');
SELECT is(pg_temp.digest(:'q_count'), pg_temp.native_digest(:'q_count'), 'count(*) in parallel: the native result');
SELECT is(pg_temp.digest(:'q_left'), pg_temp.native_digest(:'q_left'), 'LEFT JOIN in parallel: the native rows');
SELECT is(pg_temp.digest(:'q_inexact'), pg_temp.native_digest(:'q_inexact'), 'inexact keys in parallel: the native rows');

SELECT * FROM finish();
ROLLBACK;
