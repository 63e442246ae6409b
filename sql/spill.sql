--
-- spill: a GpuJoin whose inputs outgrow gpujoin.max_host_memory spills them
-- to temporary files and joins them chunk pair by chunk pair, with the
-- native plan's answer (as a multiset, NULLs and duplicate keys included)
-- for every algorithm, every join type and aggregates over the join;
-- EXPLAIN ANALYZE shows the chunks; a rescanned spilled join reads its
-- files again or drains again; statement_timeout and temp_file_limit end a
-- spilled join with a clean ERROR and leave no temporary file behind.
--
SET client_min_messages = warning;
-- every join column stored as a Datum too, as the sizes below were chosen
-- (test/pgtap/scan_keys.sql spills joins whose columns come from keys)
SET gpujoin.columns_from_keys = off;

-- about 5 chunks of each side at the smallest gpujoin.max_host_memory
CREATE TABLE sp_r AS
SELECT g AS id,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g % 700 END AS k,
       (g % 350)::numeric / 4 AS n,
       'r' || (g % 500) AS t
FROM generate_series(1, 3000) g;
CREATE TABLE sp_s AS
SELECT g AS id,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 3) % 900 END AS k,
       (g % 420)::numeric / 4 AS n,
       'r' || (g % 700) AS t
FROM generate_series(1, 2500) g;
ANALYZE sp_r;
ANALYZE sp_s;

-- gj_compare under an algorithm, and whether GpuJoin spilled doing it
CREATE FUNCTION gj_spill_compare(alg text, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
    line text;
    spilled boolean := false;
BEGIN
    PERFORM set_config('gpujoin.algorithm', alg, true);
    result := gj_compare(query);
    PERFORM gj_force(true);
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        IF line ~ 'Chunks Spilled: [1-9]' THEN
            spilled := true;
        END IF;
    END LOOP;
    PERFORM gj_force(false);
    PERFORM set_config('gpujoin.enabled', 'on', true);
    RETURN result || CASE WHEN spilled THEN ', spilled' ELSE '' END;
END $$;

-- the temporary files of this cluster's default tablespace
CREATE FUNCTION gj_temp_files() RETURNS bigint LANGUAGE sql AS
$$ SELECT count(*) FROM pg_ls_tmpdir() $$;

SET gpujoin.max_host_memory = '64kB';

-- every join type under every algorithm (one the join cannot use falls back)
SELECT alg, q, gj_spill_compare(alg, q) AS result
FROM unnest(ARRAY['nestloop', 'sortmerge', 'hash']) AS alg,
     unnest(ARRAY[
       'SELECT r.id, s.id, r.t, s.t FROM sp_r r JOIN sp_s s ON r.k = s.k',
       'SELECT r.id, s.id, s.t FROM sp_r r LEFT JOIN sp_s s ON r.k = s.k',
       'SELECT r.id, s.id, r.t FROM sp_r r RIGHT JOIN sp_s s ON r.k = s.k',
       'SELECT r.id, s.id FROM sp_r r FULL JOIN sp_s s ON r.k = s.k',
       'SELECT r.id, r.t FROM sp_r r WHERE EXISTS (SELECT 1 FROM sp_s s WHERE s.k = r.k)',
       'SELECT r.id, r.k FROM sp_r r WHERE NOT EXISTS (SELECT 1 FROM sp_s s WHERE s.k = r.k)',
       'SELECT r.id, s.id FROM sp_r r JOIN sp_s s ON r.k BETWEEN s.k - 1 AND s.k + 1',
       'SELECT r.id, s.id FROM sp_r r LEFT JOIN sp_s s ON r.k BETWEEN s.k - 1 AND s.k + 1 AND s.id % 3 = 0',
       'SELECT r.id, s.id FROM sp_r r JOIN sp_s s ON r.k = s.k AND r.t < s.t',
       'SELECT r.id, s.id FROM sp_r r LEFT JOIN sp_s s ON r.k = s.k WHERE coalesce(s.id, 0) % 2 = 0',
       'SELECT r.id, s.id, r.n FROM sp_r r JOIN sp_s s ON r.n = s.n',
       'SELECT r.id, s.id FROM sp_r r FULL JOIN sp_s s ON r.t = s.t'
     ]) AS q
ORDER BY alg, q;

-- aggregates over a spilled join add up their partials over the chunk pairs
SELECT alg, q, gj_spill_compare(alg, q) AS result
FROM unnest(ARRAY['nestloop', 'sortmerge', 'hash']) AS alg,
     unnest(ARRAY[
       'SELECT count(*), sum(r.id), min(s.k), max(r.t), avg(s.id) FROM sp_r r JOIN sp_s s ON r.k = s.k',
       'SELECT count(*), sum(s.id) FROM sp_r r JOIN sp_s s ON r.k < s.k',
       'SELECT count(*), sum(r.n) FROM sp_r r JOIN sp_s s ON r.n = s.n'
     ]) AS q
ORDER BY alg, q;

-- the aggregate node does not spill grouped aggregates: a native Agg over
-- a spilled GpuJoin runs them
SELECT gj_spill_compare('auto',
  'SELECT r.k, count(*), sum(s.id) FROM sp_r r JOIN sp_s s ON r.k = s.k GROUP BY r.k') AS grouped;

-- EXPLAIN ANALYZE shows the chunks and bytes spilled (and the partitions of
-- a hash join)
CREATE FUNCTION gj_spill_explain(query text, nestloop boolean DEFAULT false)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    PERFORM gj_force(true);
    IF nestloop THEN
        PERFORM set_config('enable_nestloop', 'on', true);
        PERFORM set_config('enable_material', 'off', true);
        PERFORM set_config('gpujoin.enable_aggregate', 'off', true);
    END IF;
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        IF line ~ '(GpuJoin|Rows Drained|Chunk|Spill|Join Type|Algorithm)' THEN
            RETURN NEXT line;
        END IF;
    END LOOP;
    PERFORM gj_force(false);
    PERFORM set_config('gpujoin.enabled', 'on', true);
END $$;
SELECT gj_spill_explain('SELECT r.id, s.id FROM sp_r r FULL JOIN sp_s s ON r.k = s.k');

-- an inner side the planner thinks about 80 times smaller than it is (four
-- filters it cannot see through): the hash partitions counted from the
-- estimate come out larger than the inner side's share, and it is cut
-- again into more before the outer side is drained (gpujoin.spill_resplit);
-- EXPLAIN ANALYZE shows the partitions planned and those joined
CREATE TABLE sp_est AS
SELECT g AS id, CASE WHEN g % 50 = 0 THEN NULL ELSE (g * 7) % 900 END AS k
FROM generate_series(1, 20000) g;
ANALYZE sp_est;
CREATE VIEW sp_est_v AS SELECT * FROM sp_est
WHERE coalesce(k, 0) % 1000 < 2000 AND id % 1000 < 2000
  AND (coalesce(k, 0) + id) % 1000 < 2000 AND (coalesce(k, 0) * 3) % 1000 < 2000;
SELECT gj_spill_explain('SELECT r.id, b.id FROM sp_r r JOIN sp_est_v b ON r.k = b.k');
SELECT gj_spill_compare('hash', 'SELECT r.id, b.id FROM sp_r r JOIN sp_est_v b ON r.k = b.k') AS resplit_inner,
       gj_spill_compare('hash', 'SELECT r.id, b.id FROM sp_r r LEFT JOIN sp_est_v b ON r.k = b.k') AS resplit_left,
       gj_spill_compare('hash', 'SELECT r.id, b.id FROM sp_r r FULL JOIN sp_est_v b ON r.k = b.k') AS resplit_full;
SELECT gj_spill_compare('hash', 'SELECT r.id FROM sp_r r WHERE EXISTS (SELECT 1 FROM sp_est_v b WHERE b.k = r.k)') AS resplit_semi,
       gj_spill_compare('hash', 'SELECT r.id FROM sp_r r WHERE NOT EXISTS (SELECT 1 FROM sp_est_v b WHERE b.k = r.k)') AS resplit_anti,
       gj_spill_compare('hash', 'SELECT count(*), sum(r.id + b.id) FROM sp_r r JOIN sp_est_v b ON r.k = b.k') AS resplit_agg;
-- off: the partitions stay as planned, each read chunk by chunk
SET gpujoin.spill_resplit = off;
SELECT gj_spill_explain('SELECT r.id, b.id FROM sp_r r FULL JOIN sp_est_v b ON r.k = b.k');
SELECT gj_spill_compare('hash', 'SELECT r.id, b.id FROM sp_r r FULL JOIN sp_est_v b ON r.k = b.k') AS planned_full;
RESET gpujoin.spill_resplit;

-- within the limit nothing spills
RESET gpujoin.max_host_memory;
SELECT gj_spill_compare('auto', 'SELECT r.id, s.id FROM sp_r r FULL JOIN sp_s s ON r.k = s.k') AS in_memory;
SET gpujoin.max_host_memory = '64kB';

-- rescans: a spilled join as the inner side of a nested loop reads its
-- files again; a parameter in a child drains that side again
BEGIN;
SELECT gj_force(true);
SET LOCAL enable_nestloop = on;
SET LOCAL enable_material = off;
SET LOCAL gpujoin.enable_aggregate = off;
CREATE TEMP TABLE sp_rescan_gpu AS
SELECT z.id AS z, j.x, j.y
FROM (SELECT id FROM sp_r WHERE id <= 3) z,
     (SELECT x.id AS x, y.id AS y FROM sp_r x RIGHT JOIN sp_s y ON x.k = y.k OFFSET 0) j
WHERE z.id < coalesce(j.x, 0) + 2;
COMMIT;
BEGIN;
SELECT gj_force(false);
CREATE TEMP TABLE sp_rescan_native AS
SELECT z.id AS z, j.x, j.y
FROM (SELECT id FROM sp_r WHERE id <= 3) z,
     (SELECT x.id AS x, y.id AS y FROM sp_r x RIGHT JOIN sp_s y ON x.k = y.k OFFSET 0) j
WHERE z.id < coalesce(j.x, 0) + 2;
COMMIT;
SELECT (SELECT count(*) FROM sp_rescan_gpu) AS nrows,
       (SELECT count(*) FROM ((TABLE sp_rescan_gpu EXCEPT ALL TABLE sp_rescan_native)
         UNION ALL (TABLE sp_rescan_native EXCEPT ALL TABLE sp_rescan_gpu)) d) AS differ;
-- (three loops, the chunks written once and read three times)
SELECT gj_spill_explain('
SELECT z.id AS z, j.x, j.y
FROM (SELECT id FROM sp_r WHERE id <= 3) z,
     (SELECT x.id AS x, y.id AS y FROM sp_r x RIGHT JOIN sp_s y ON x.k = y.k OFFSET 0) j
WHERE z.id < coalesce(j.x, 0) + 2', true);
SELECT gj_spill_compare('auto', '
    SELECT o.id, (SELECT count(*) FROM (SELECT * FROM sp_r WHERE id > o.id * 100) x
                  JOIN sp_s y ON x.k = y.k) AS n
    FROM sp_r o WHERE o.id <= 5') AS param_in_child;
-- the inner side drained again, spilled in some executions and not in others
SELECT q, gj_spill_compare('auto', q) AS result
FROM unnest(ARRAY[
  'SELECT o.id, (SELECT count(*) FROM sp_s y RIGHT JOIN (SELECT * FROM sp_r WHERE id > o.id * 600) x
                 ON x.k = y.k) AS n FROM sp_r o WHERE o.id <= 5',
  'SELECT o.id, (SELECT count(*) FROM sp_s y FULL JOIN (SELECT * FROM sp_r WHERE id > o.id * 600) x
                 ON x.k = y.k) AS n FROM sp_r o WHERE o.id <= 5']) AS q;

-- hash joins spill by partition (as Hash Join's batches): each side's rows
-- go to the partition of a hash of their equality keys, NULL keys to one of
-- their own, and partition i of the outer side meets partition i of the
-- inner side only.  Every join type, duplicates, NULL keys, a hot key whose
-- partition outgrows its share (a block nested loop within it), floats
-- where -0.0 = 0.0 and NaN = NaN, dates and timestamps, two keys; numeric
-- keys keep the block nested loop, and so does a join where one side stays
-- in memory (the spilled side's partitions are its chunks then).
CREATE TABLE sp_hr AS
SELECT g AS id,
       CASE WHEN g % 17 = 0 THEN NULL WHEN g % 50 = 0 THEN 7 ELSE g % 900 END AS k,
       CASE WHEN g % 97 = 0 THEN '-0'::float8 WHEN g % 97 = 1 THEN 'NaN'::float8
            WHEN g % 97 = 2 THEN 0::float8 WHEN g % 13 = 0 THEN NULL
            ELSE (g % 600) / 4.0 END AS f,
       '2020-01-01'::date + g % 300 AS d,
       '2020-01-01'::timestamp + (g % 800) * interval '1 hour' AS ts,
       (g % 350)::numeric / 4 AS n
FROM generate_series(1, 3000) g;
CREATE TABLE sp_hs AS
SELECT g AS id,
       CASE WHEN g % 19 = 0 THEN NULL WHEN g % 2 = 0 THEN 7 ELSE (g * 3) % 1200 END AS k,
       CASE WHEN g % 89 = 0 THEN 0::float8 WHEN g % 89 = 1 THEN 'NaN'::float8
            WHEN g % 89 = 2 THEN '-0'::float8 WHEN g % 11 = 0 THEN NULL
            ELSE ((g * 3) % 800) / 4.0 END AS f,
       '2020-01-01'::date + (g * 7) % 400 AS d,
       '2020-01-01'::timestamp + ((g * 3) % 900) * interval '1 hour' AS ts,
       (g % 420)::numeric / 4 AS n
FROM generate_series(1, 3000) g;
ALTER TABLE sp_hr ADD COLUMN f4 float4;
UPDATE sp_hr SET f4 = f;
ALTER TABLE sp_hs ADD COLUMN f4 float4;
UPDATE sp_hs SET f4 = f;
ANALYZE sp_hr;
ANALYZE sp_hs;

-- gj_spill_compare under an algorithm, and how its spill was partitioned
CREATE FUNCTION gj_partition_spill_compare(alg text, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    cut_by text := NULL;
BEGIN
    PERFORM gj_force(true);
    PERFORM set_config('gpujoin.algorithm', alg, true);
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        IF line ~ 'Spill Partitioned By: ' THEN
            cut_by := substring(line FROM 'Spill Partitioned By: (.*)$');
        END IF;
    END LOOP;
    PERFORM gj_force(false);
    RETURN gj_spill_compare(alg, query) ||
        CASE WHEN cut_by IS NOT NULL THEN ', partitioned by ' || cut_by ELSE '' END;
END $$;

SELECT gj_temp_files() AS temp_files_before_hash;
SELECT q, gj_partition_spill_compare('hash', q) AS result
FROM unnest(ARRAY[
  'SELECT r.id, s.id FROM sp_hr r JOIN sp_hs s ON r.k = s.k',
  'SELECT r.id, s.id FROM sp_hr r LEFT JOIN sp_hs s ON r.k = s.k',
  'SELECT r.id, s.id FROM sp_hr r RIGHT JOIN sp_hs s ON r.k = s.k',
  'SELECT r.id, s.id FROM sp_hr r FULL JOIN sp_hs s ON r.k = s.k',
  'SELECT r.id FROM sp_hr r WHERE EXISTS (SELECT 1 FROM sp_hs s WHERE s.k = r.k)',
  'SELECT r.id FROM sp_hr r WHERE NOT EXISTS (SELECT 1 FROM sp_hs s WHERE s.k = r.k)',
  'SELECT r.id, s.id, r.f FROM sp_hr r JOIN sp_hs s ON r.f = s.f',
  'SELECT r.id, s.id, r.f FROM sp_hr r LEFT JOIN sp_hs s ON r.f = s.f',
  'SELECT r.id, s.id, s.f FROM sp_hr r RIGHT JOIN sp_hs s ON r.f = s.f',
  'SELECT r.id, s.id FROM sp_hr r FULL JOIN sp_hs s ON r.f = s.f',
  'SELECT r.id FROM sp_hr r WHERE EXISTS (SELECT 1 FROM sp_hs s WHERE s.f = r.f)',
  'SELECT r.id FROM sp_hr r WHERE NOT EXISTS (SELECT 1 FROM sp_hs s WHERE s.f = r.f)',
  'SELECT r.id, s.id, r.f4 FROM sp_hr r FULL JOIN sp_hs s ON r.f4 = s.f4',
  'SELECT r.id, s.id, r.f4 FROM sp_hr r LEFT JOIN sp_hs s ON r.f4 = s.f',
  'SELECT r.id, s.id FROM sp_hr r FULL JOIN sp_hs s ON r.k = s.k AND r.d = s.d',
  'SELECT r.id, s.id FROM sp_hr r RIGHT JOIN sp_hs s ON r.ts = s.ts',
  'SELECT r.id, s.id FROM sp_hr r FULL JOIN sp_hs s ON r.n = s.n',
  'SELECT r.id, s.id FROM (SELECT * FROM sp_hr WHERE id <= 300) r FULL JOIN sp_hs s ON r.k = s.k',
  'SELECT r.id, s.id FROM sp_hr r FULL JOIN (SELECT * FROM sp_hs WHERE id <= 300) s ON r.k = s.k']) AS q;
-- the hot key's inner partition is read chunk by chunk: more chunk pairs
-- than partitions (without the re-split, which cuts the other partitions
-- finer but leaves the hot key's rows in one, as large as before)
SET gpujoin.spill_resplit = off;
SELECT gj_spill_explain('SELECT r.id, s.id FROM sp_hr r FULL JOIN sp_hs s ON r.k = s.k');
RESET gpujoin.spill_resplit;
SELECT gj_temp_files() AS temp_files_after_hash;

-- sort-merge joins spill by key range (gpujoin.spill_by_range): the inner
-- side is cut at quantiles of a sample of its keys once drained, an outer
-- row goes to every range its bounds touch, and range i of the outer side
-- meets range i of the inner side only.  Inner and right joins and
-- aggregates; NULL keys, duplicates, a hot key (7), floats with -0.0 and
-- NaN, dates.  LEFT, SEMI and ANTI joins cut the outer side instead (each
-- outer row in the range of its lower bound, so that its match flag is its
-- own) and copy each inner row into the ranges whose outer rows reach it.
-- Numeric keys, one-sided bounds and a band so wide that rows would be
-- copied into most ranges keep the block nested loop, with the same answer.
-- Rescans: the outer side drained again into the kept inner side's ranges;
-- the inner side drained again (spilled, or in memory) drains the outer side
-- again too, since its rows were cut by the old ranges, and for LEFT, SEMI
-- and ANTI the other way round.
-- an inner side of some 20 ranges, for a band narrow and wide
CREATE TABLE sp_wide AS SELECT g FROM generate_series(1, 20000) g;
ANALYZE sp_wide;
SELECT q, gj_partition_spill_compare('sortmerge', q) AS result
FROM unnest(ARRAY[
  'SELECT r.id, s.id FROM sp_hr r JOIN sp_hs s ON s.k BETWEEN r.k - 2 AND r.k + 1',
  'SELECT r.id, s.id FROM sp_hr r RIGHT JOIN sp_hs s ON s.k BETWEEN r.k - 2 AND r.k + 1',
  'SELECT count(*), sum(r.id - s.id), min(s.k), max(r.k) FROM sp_hr r JOIN sp_hs s ON s.k BETWEEN r.k - 2 AND r.k + 1',
  'SELECT r.id, s.id FROM sp_hr r JOIN sp_hs s ON s.k > r.k - 3 AND s.k < r.k + 3 AND r.id % 3 <> s.id % 4',
  'SELECT r.id, s.id, r.f, s.f FROM sp_hr r JOIN sp_hs s ON s.f BETWEEN r.f - 0.25 AND r.f + 0.25',
  'SELECT r.id, s.id FROM sp_hr r RIGHT JOIN sp_hs s ON s.f BETWEEN r.f - 0.25 AND r.f',
  'SELECT r.id, s.id FROM sp_hr r JOIN sp_hs s ON s.f4 BETWEEN r.f4 - 0.5 AND r.f4 + 0.5',
  'SELECT r.id, s.id FROM sp_hr r JOIN sp_hs s ON s.d BETWEEN r.d - 1 AND r.d + 1',
  'SELECT r.id, s.id FROM sp_hr r LEFT JOIN sp_hs s ON s.k BETWEEN r.k - 2 AND r.k + 1',
  'SELECT r.id FROM sp_hr r WHERE EXISTS (SELECT 1 FROM sp_hs s WHERE s.k BETWEEN r.k - 2 AND r.k + 1)',
  'SELECT r.id FROM sp_hr r WHERE NOT EXISTS (SELECT 1 FROM sp_hs s WHERE s.k BETWEEN r.k - 2 AND r.k + 1)',
  'SELECT count(*) FROM sp_hr r JOIN sp_hs s ON s.k < r.k',
  'SELECT count(*), sum(s.id) FROM sp_hr r JOIN sp_hs s ON s.k BETWEEN r.k - 600 AND r.k + 600',
  'SELECT count(*), sum(w.g) FROM sp_hr r JOIN sp_wide w ON w.g BETWEEN r.k * 20 - 3 AND r.k * 20 + 3',
  'SELECT count(*), sum(w.g) FROM sp_hr r JOIN sp_wide w ON w.g BETWEEN r.k * 20 - 6000 AND r.k * 20 + 6000',
  'SELECT o.id, (SELECT count(*) FROM (SELECT * FROM sp_hr WHERE id > o.id * 300) r
                 JOIN sp_hs s ON s.k BETWEEN r.k - 2 AND r.k + 1) AS n FROM sp_hr o WHERE o.id <= 4',
  'SELECT o.id, (SELECT count(*) FROM sp_hr r RIGHT JOIN (SELECT * FROM sp_hs WHERE id > o.id * 300) s
                 ON s.k BETWEEN r.k - 2 AND r.k + 1) AS n FROM sp_hr o WHERE o.id <= 4',
  'SELECT o.id, (SELECT count(*) FROM sp_hr r JOIN (SELECT * FROM sp_hs WHERE id > o.id * 1400) s
                 ON s.k BETWEEN r.k - 2 AND r.k + 1) AS n FROM sp_hr o WHERE o.id <= 3',
  'SELECT r.id, s.id, r.f FROM sp_hr r LEFT JOIN sp_hs s ON s.f BETWEEN r.f - 0.25 AND r.f + 0.25',
  'SELECT r.id FROM sp_hr r WHERE NOT EXISTS (SELECT 1 FROM sp_hs s WHERE s.d BETWEEN r.d + 395 AND r.d + 396)',
  'SELECT count(*), count(w.g), sum(w.g) FROM sp_hr r LEFT JOIN sp_wide w ON w.g BETWEEN r.k * 20 - 3 AND r.k * 20 + 3',
  'SELECT count(*), count(w.g) FROM sp_hr r LEFT JOIN sp_wide w ON w.g BETWEEN r.k * 20 - 6000 AND r.k * 20 + 6000',
  'SELECT o.id, (SELECT count(*) FROM (SELECT * FROM sp_hr WHERE id > o.id * 300) r
                 LEFT JOIN sp_hs s ON s.k BETWEEN r.k - 2 AND r.k + 1) AS n FROM sp_hr o WHERE o.id <= 4',
  'SELECT o.id, (SELECT count(*) FROM sp_hr r WHERE NOT EXISTS (SELECT 1 FROM sp_hs s
                 WHERE s.id > o.id * 300 AND s.k BETWEEN r.k - 2 AND r.k + 1)) AS n FROM sp_hr o WHERE o.id <= 4']) AS q;
-- EXPLAIN ANALYZE: the ranges, and the chunk pairs (one per range where it
-- fits; the hot key's range is read chunk by chunk)
SELECT gj_spill_explain('SELECT r.id, s.id FROM sp_hr r JOIN sp_hs s ON s.k BETWEEN r.k - 2 AND r.k + 1');
SELECT gj_spill_explain('SELECT count(*) FROM sp_hr r JOIN sp_wide w ON w.g BETWEEN r.k * 20 - 3 AND r.k * 20 + 3');
-- off: the block nested loop over the chunks, the same rows
SET gpujoin.spill_by_range = off;
SELECT gj_partition_spill_compare('sortmerge', 'SELECT r.id, s.id FROM sp_hr r RIGHT JOIN sp_hs s ON s.k BETWEEN r.k - 2 AND r.k + 1') AS result;
RESET gpujoin.spill_by_range;
SELECT gj_temp_files() AS temp_files_after_range;
DROP TABLE sp_hr, sp_hs, sp_wide;
DROP FUNCTION gj_partition_spill_compare(text, text);

-- statement_timeout cancels a spilled join: no temporary file is left
CREATE TABLE sp_big AS SELECT g AS id, g % 1000 AS k FROM generate_series(1, 30000) g;
ANALYZE sp_big;
SELECT gj_temp_files() AS temp_files_before;
BEGIN;
SELECT gj_force(true);
SET LOCAL gpujoin.algorithm = 'nestloop';
SET LOCAL gpujoin.enable_aggregate = off;
SET LOCAL statement_timeout = '300ms';
SELECT count(*) FROM sp_big x JOIN sp_big y ON x.k < y.k;
ROLLBACK;
SELECT gj_temp_files() AS temp_files_after_cancel;

-- temp_file_limit bounds the spill: a clean ERROR, no file left
BEGIN;
SELECT gj_force(true);
SET LOCAL temp_file_limit = '100kB';
SELECT count(*) FROM sp_big x JOIN sp_big y ON x.k = y.k;
ROLLBACK;
SELECT gj_temp_files() AS temp_files_after_limit;

-- gpujoin.enable_spill = off: not offered, and an underestimate ERRORs
SET gpujoin.enable_spill = off;
SELECT gj_spill_compare('auto', 'SELECT r.id, s.id FROM sp_r r JOIN sp_s s ON r.k = s.k') AS spill_off;
RESET gpujoin.enable_spill;

RESET gpujoin.max_host_memory;
RESET gpujoin.columns_from_keys;
DROP VIEW sp_est_v;
DROP TABLE sp_r, sp_s, sp_big, sp_est;
DROP FUNCTION gj_spill_compare(text, text), gj_temp_files(), gj_spill_explain(text, boolean);
