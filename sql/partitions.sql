--
-- partitions: a sort-merge or hash join whose sides do not fit the device
-- memory budget (three quarters of gpujoin.device_memory) is cut into
-- partition pairs that do: hash joins by the key's hash, range joins by
-- inner key ranges (an outer row in every partition its bounds touch), a
-- hot key's partition as a nested loop.  The cpu backend partitions under
-- the same rule, so this runs in CI.  Every join type, under every
-- algorithm, with duplicates, NULL keys, a hot key bigger than a
-- partition and NaN / -0.0 floats, has the native plan's answer (as a
-- multiset); so has the same with the inputs spilled to temporary files
-- (partitions inside each chunk pair), and no temporary file is left.
--
SET client_min_messages = warning;

CREATE TABLE pt_r AS
SELECT g AS id,
       CASE WHEN g % 17 = 0 THEN NULL WHEN g % 5 = 0 THEN 7 ELSE g % 900 END AS k,
       CASE WHEN g % 19 = 0 THEN NULL
            WHEN g % 23 = 0 THEN 'NaN'::float8
            WHEN g % 29 = 0 THEN '-0'::float8
            WHEN g % 31 = 0 THEN '0'::float8
            WHEN g % 37 = 0 THEN 'Infinity'::float8
            ELSE (g % 400) / 4.0 END AS f,
       'r' || (g % 3) AS t
FROM generate_series(1, 2000) g;
CREATE TABLE pt_s AS
SELECT g AS id,
       CASE WHEN g % 13 = 0 THEN NULL WHEN g % 6 = 0 THEN 7 ELSE (g * 7) % 1000 END AS k,
       CASE WHEN g % 11 = 0 THEN NULL
            WHEN g % 21 = 0 THEN 'NaN'::float8
            WHEN g % 27 = 0 THEN '0'::float8
            WHEN g % 33 = 0 THEN '-0'::float8
            WHEN g % 39 = 0 THEN '-Infinity'::float8
            ELSE (g % 500) / 4.0 END AS f,
       'r' || (g % 4) AS t
FROM generate_series(1, 1500) g;
ANALYZE pt_r;
ANALYZE pt_s;

-- gj_compare under an algorithm, and whether GpuJoin cut device
-- partitions (and ran some of them as nested loops) doing it
CREATE FUNCTION gj_part_compare(alg text, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
    line text;
    parts boolean := false;
    hot boolean := false;
    spilled boolean := false;
    aggregated boolean := false;
BEGIN
    PERFORM set_config('gpujoin.algorithm', alg, true);
    result := gj_compare(query);
    PERFORM gj_force(true);
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        IF line ~ 'Device Partitions: [1-9]' THEN
            parts := true;
        END IF;
        IF line ~ 'Partitions As Nested Loop: [1-9]' THEN
            hot := true;
        END IF;
        IF line ~ 'Chunks Spilled: [1-9]' THEN
            spilled := true;
        END IF;
        IF line ~ 'GPU Aggregates: ' THEN
            aggregated := true;
        END IF;
    END LOOP;
    PERFORM gj_force(false);
    PERFORM set_config('gpujoin.enabled', 'on', true);
    RETURN result || CASE WHEN parts THEN ', partitioned' ELSE '' END
                  || CASE WHEN hot THEN ', hot' ELSE '' END
                  || CASE WHEN spilled THEN ', spilled' ELSE '' END
                  || CASE WHEN aggregated THEN ', GPU aggregates' ELSE '' END;
END $$;

CREATE TABLE pt_queries (q text);
INSERT INTO pt_queries VALUES
  ('SELECT r.id, s.id, r.t, s.t FROM pt_r r JOIN pt_s s ON r.k = s.k'),
  ('SELECT r.id, s.id FROM pt_r r LEFT JOIN pt_s s ON r.k = s.k'),
  ('SELECT r.id, s.id FROM pt_r r RIGHT JOIN pt_s s ON r.k = s.k'),
  ('SELECT r.id, s.id FROM pt_r r FULL JOIN pt_s s ON r.k = s.k'),
  ('SELECT r.id FROM pt_r r WHERE EXISTS (SELECT 1 FROM pt_s s WHERE s.k = r.k)'),
  ('SELECT r.id FROM pt_r r WHERE NOT EXISTS (SELECT 1 FROM pt_s s WHERE s.k = r.k)'),
  ('SELECT r.id, s.id FROM pt_r r JOIN pt_s s ON r.k = s.k AND r.t = s.t'),
  ('SELECT r.id, s.id FROM pt_r r JOIN pt_s s ON r.k BETWEEN s.k - 2 AND s.k + 2'),
  ('SELECT r.id, s.id FROM pt_r r LEFT JOIN pt_s s ON r.k BETWEEN s.k - 2 AND s.k + 2 AND s.id % 3 = 0'),
  ('SELECT r.id, s.id FROM pt_r r RIGHT JOIN pt_s s ON r.k BETWEEN s.k - 2 AND s.k + 2'),
  ('SELECT r.id, s.id FROM pt_r r FULL JOIN pt_s s ON r.k = s.k AND r.t = s.t'),
  ('SELECT r.id FROM pt_r r WHERE EXISTS (SELECT 1 FROM pt_s s WHERE s.k BETWEEN r.k - 3 AND r.k + 3)'),
  ('SELECT r.id FROM pt_r r WHERE NOT EXISTS (SELECT 1 FROM pt_s s WHERE s.k BETWEEN r.k - 3 AND r.k + 3)'),
  ('SELECT r.id, s.id, r.f FROM pt_r r JOIN pt_s s ON r.f = s.f'),
  ('SELECT r.id, s.id FROM pt_r r FULL JOIN pt_s s ON r.f = s.f'),
  ('SELECT r.id, s.id FROM pt_r r JOIN pt_s s ON r.f BETWEEN s.f - 0.5 AND s.f + 0.5'),
  ('SELECT r.id, s.id FROM pt_r r LEFT JOIN pt_s s ON r.f BETWEEN s.f - 0.25 AND s.f'),
  ('SELECT r.id FROM pt_r r WHERE NOT EXISTS (SELECT 1 FROM pt_s s WHERE s.f BETWEEN r.f - 1 AND r.f)');

-- a tiny budget (4kB): a few dozen rows per partition
SET gpujoin.device_memory = '4kB';
SELECT alg, q, gj_part_compare(alg, q) AS result
FROM unnest(ARRAY['nestloop', 'sortmerge', 'hash']) AS alg, pt_queries
ORDER BY alg, q;

-- the smallest budget that is not "auto" (1kB): a few rows per partition
SET gpujoin.device_memory = '1kB';
SELECT alg, q, gj_part_compare(alg, q) AS result
FROM (VALUES
  ('hash', 'SELECT r.id, s.id FROM pt_r r FULL JOIN pt_s s ON r.k = s.k'),
  ('hash', 'SELECT r.id FROM pt_r r WHERE NOT EXISTS (SELECT 1 FROM pt_s s WHERE s.f = r.f)'),
  ('sortmerge', 'SELECT r.id, s.id FROM pt_r r LEFT JOIN pt_s s ON r.k BETWEEN s.k - 2 AND s.k + 2'),
  ('sortmerge', 'SELECT r.id FROM pt_r r WHERE EXISTS (SELECT 1 FROM pt_s s WHERE s.k BETWEEN r.k - 3 AND r.k + 3)')
) AS t(alg, q)
ORDER BY alg, q;

-- aggregates over a join over the budget (the aggregate node does not
-- partition: it runs the whole join), and rescans of a partitioned join:
-- a parameter in a child drains it again, each time partitioned anew
SET gpujoin.device_memory = '4kB';
SELECT alg, q, gj_part_compare(alg, q) AS result
FROM unnest(ARRAY['sortmerge', 'hash']) AS alg,
     unnest(ARRAY[
       'SELECT count(*), sum(r.id), min(s.f), max(r.t) FROM pt_r r JOIN pt_s s ON r.k = s.k',
       'SELECT r.k, count(*) FROM pt_r r LEFT JOIN pt_s s ON r.k = s.k GROUP BY r.k',
       'SELECT o.id, array_length(array(SELECT x.id * 10000 + y.id FROM (SELECT * FROM pt_r WHERE id > o.id * 300) x
                                        FULL JOIN pt_s y ON x.k = y.k), 1) AS n
        FROM pt_r o WHERE o.id <= 4'
     ]) AS q
ORDER BY alg, q;

-- the aggregate node's joins are partitioned too: each piece reduces with
-- its rows' argument values, pair columns and groups into the same
-- partials (no float sums: their last bits depend on the order of addition;
-- no min or max over both 0 and -0, equal values either of which PostgreSQL
-- may return)
CREATE TABLE pt_agg_queries (q text);
INSERT INTO pt_agg_queries VALUES
  ('SELECT count(*), sum(r.id), min(s.f), max(r.f), avg(s.id) FROM pt_r r JOIN pt_s s ON r.k = s.k'),
  ('SELECT r.k % 10 AS g, count(*), sum(s.id), max(s.f), min(r.id) FROM pt_r r JOIN pt_s s ON r.k = s.k GROUP BY 1'),
  ('SELECT count(*), sum(r.id + s.id), max(r.id - s.id) FROM pt_r r JOIN pt_s s ON r.k BETWEEN s.k - 2 AND s.k + 2'),
  ('SELECT s.t, count(*), min(r.id), max(s.id) FROM pt_r r JOIN pt_s s ON r.f BETWEEN s.f - 0.5 AND s.f + 0.5 GROUP BY s.t'),
  ('SELECT count(*), sum(s.id) FROM pt_r r JOIN pt_s s ON r.f = s.f'),
  ('SELECT count(*) FROM pt_r r JOIN pt_s s ON r.k = s.k AND r.id < s.id');
SELECT alg, q, gj_part_compare(alg, q) AS result
FROM unnest(ARRAY['sortmerge', 'hash']) AS alg, pt_agg_queries
ORDER BY alg, q;

-- EXPLAIN ANALYZE shows the partitions
CREATE FUNCTION gj_part_explain(alg text, query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    PERFORM set_config('gpujoin.algorithm', alg, true);
    PERFORM gj_force(true);
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        IF line ~ '(GpuJoin|Algorithm|Partition)' THEN
            RETURN NEXT line;
        END IF;
    END LOOP;
    PERFORM gj_force(false);
    PERFORM set_config('gpujoin.enabled', 'on', true);
END $$;
SET gpujoin.device_memory = '16kB';
SELECT gj_part_explain('hash', 'SELECT r.id, s.id FROM pt_r r FULL JOIN pt_s s ON r.k = s.k');
SELECT gj_part_explain('sortmerge', 'SELECT r.id, s.id FROM pt_r r JOIN pt_s s ON r.k BETWEEN s.k - 2 AND s.k + 2');

-- within the budget nothing is partitioned
SET gpujoin.device_memory = '64MB';
SELECT gj_part_compare('hash', 'SELECT r.id, s.id FROM pt_r r FULL JOIN pt_s s ON r.k = s.k') AS in_budget;

-- spilled and partitioned: device partitions inside each chunk pair (every
-- join column stored as a Datum too, as the host memory limit was sized)
SET gpujoin.device_memory = '4kB';
SET gpujoin.max_host_memory = '64kB';
SET gpujoin.columns_from_keys = off;
SELECT alg, q, gj_part_compare(alg, q) AS result
FROM unnest(ARRAY['sortmerge', 'hash']) AS alg, pt_queries
ORDER BY alg, q;
SELECT alg, q, gj_part_compare(alg, q) AS result
FROM unnest(ARRAY['sortmerge', 'hash']) AS alg, pt_agg_queries
ORDER BY alg, q;
SELECT count(*) AS temp_files_left FROM pg_ls_tmpdir();

RESET gpujoin.device_memory;
RESET gpujoin.max_host_memory;
RESET gpujoin.columns_from_keys;
DROP TABLE pt_r, pt_s, pt_queries, pt_agg_queries;
DROP FUNCTION gj_part_compare(text, text), gj_part_explain(text, text);
