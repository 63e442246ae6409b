--
-- hash_probe: how the cpu backend's hash join finds an outer row's inner
-- rows, and that every way gives the native plan's rows.  The inner key
-- hashes are sorted by bucket (a counting sort on their top bits, then each
-- bucket in order, a large bucket of one hot key or of colliding keys by a
-- radix sort), and each outer key is looked up in its bucket.  When the
-- outer side is one tile its rows are probed in row order, unsorted; when
-- it is cut into tiles they are sorted by hash first, so tiles prune.  On a
-- single integer key, equal hashes are taken as equal keys (the hash is a
-- bijection there); other keys are compared by the device program.
--
SET client_min_messages = warning;
SET gpujoin.enable_aggregate = off;

-- keys with duplicates, NULLs, one hot key on both sides (a bucket of
-- 66 inner rows), the extremes of int4 and int8, and floats with NaN,
-- -0.0 and infinities
CREATE TABLE hp_outer AS
SELECT g AS id,
       CASE WHEN g % 41 = 0 THEN NULL WHEN g % 40 = 0 THEN 7 ELSE (g * 7919) % 3000 END AS k,
       (g % 9)::int8 AS k8,
       CASE WHEN g % 101 = 0 THEN 'NaN'::float8 WHEN g % 103 = 0 THEN '-0'::float8
            WHEN g % 107 = 0 THEN 'Infinity'::float8 ELSE (g % 1500)::float8 / 4 END AS f,
       CASE WHEN g % 97 = 0 THEN NULL ELSE 'key ' || (g % 700) END AS s,
       g % 100 AS t
FROM generate_series(1, 6000) g
UNION ALL SELECT 6001, 2147483647, 9223372036854775807, '-Infinity', '', 5
UNION ALL SELECT 6002, -2147483648, -9223372036854775808, 0, 'key 1', 6;
CREATE TABLE hp_inner AS
SELECT g AS id,
       CASE WHEN g % 37 = 0 THEN NULL WHEN g % 30 = 0 THEN 7 ELSE g % 2500 END AS k,
       (g % 11)::int8 AS k8,
       CASE WHEN g % 31 = 0 THEN 'NaN'::float8 WHEN g % 29 = 0 THEN '0'::float8
            WHEN g % 23 = 0 THEN '-Infinity'::float8 ELSE (g % 1600)::float8 / 4 END AS f,
       CASE WHEN g % 89 = 0 THEN NULL ELSE 'key ' || (g % 900) END AS s,
       g % 90 AS t
FROM generate_series(1, 2000) g
UNION ALL SELECT 2001, 2147483647, 9223372036854775807, '-Infinity', '', 5
UNION ALL SELECT 2002, -2147483648, -9223372036854775808, 'Infinity', 'key 1', 7;
ANALYZE hp_outer, hp_inner;

CREATE TABLE hp_queries (name text, q text);
INSERT INTO hp_queries VALUES
    ('int key', 'SELECT o.id, i.id FROM hp_outer o JOIN hp_inner i ON o.k = i.k'),
    ('int4 = int8', 'SELECT o.id, i.id FROM hp_outer o JOIN hp_inner i ON o.k = i.k8'),
    ('int8 extremes', 'SELECT o.id, i.id FROM hp_outer o JOIN hp_inner i ON o.k8 = i.k8 AND o.k8 > 8'),
    ('two keys', 'SELECT o.id, i.id FROM hp_outer o JOIN hp_inner i ON o.k = i.k AND o.k8 = i.k8'),
    ('key and theta', 'SELECT o.id, i.id FROM hp_outer o JOIN hp_inner i ON o.k = i.k AND o.t < i.t'),
    ('float key', 'SELECT o.id, i.id FROM hp_outer o JOIN hp_inner i ON o.f = i.f'),
    ('text key', 'SELECT o.id, i.id FROM hp_outer o JOIN hp_inner i ON o.s = i.s'),
    ('left', 'SELECT o.id, i.id FROM hp_outer o LEFT JOIN hp_inner i ON o.k = i.k'),
    ('semi', 'SELECT o.id FROM hp_outer o WHERE EXISTS (SELECT 1 FROM hp_inner i WHERE i.k = o.k)'),
    ('anti', 'SELECT o.id FROM hp_outer o WHERE NOT EXISTS (SELECT 1 FROM hp_inner i WHERE i.k = o.k)');

-- the tile shape of a forced GpuJoin: rows drained, tiles, tiles pruned
CREATE FUNCTION hp_tiles(query text) RETURNS text LANGUAGE sql AS $$
    SELECT gj_plan_lines(query, '(Algorithm|Rows Drained|Tiles Run|Tiles Pruned|Tile Rows):', ', ',
                         'ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF')
$$;

-- the outer side one tile (the default budget): probed in row order
SELECT name, gj_compare(q) AS result FROM hp_queries ORDER BY name;

-- the outer side one tile, the inner side cut into several: still in row
-- order, each outer row looked up once per inner tile.  The hash join's
-- costs put the larger side outer, so the larger side gets statistics that
-- call it small (analyzed with 20 of its rows) to become the inner side.
CREATE TABLE hp_outer_misestimated (LIKE hp_outer) WITH (autovacuum_enabled = false);
INSERT INTO hp_outer_misestimated SELECT * FROM hp_outer WHERE id <= 20;
ANALYZE hp_outer_misestimated;
INSERT INTO hp_outer_misestimated SELECT * FROM hp_outer WHERE id > 20;
SET gpujoin.device_memory = '100kB';
-- tiles of the whole sorted sides here, not device partitions (partitions.sql)
SET gpujoin.device_partitions = off;
SELECT hp_tiles('SELECT o.id, i.id FROM hp_inner o JOIN hp_outer_misestimated i ON o.k = i.k') AS tiles;
SELECT gj_compare('SELECT o.id, i.id FROM hp_inner o JOIN hp_outer_misestimated i ON o.k = i.k') AS result;
SELECT gj_compare('SELECT o.id, i.id FROM hp_inner o LEFT JOIN hp_outer_misestimated i ON o.k = i.k') AS result;
SELECT gj_compare('SELECT o.id, i.id FROM hp_inner o JOIN hp_outer_misestimated i ON o.s = i.s') AS result;
DROP TABLE hp_outer_misestimated;

-- both sides cut into tiles: the outer rows sorted by hash, tiles pruned
SET gpujoin.device_memory = '16kB';
SELECT hp_tiles('SELECT o.id, i.id FROM hp_outer o JOIN hp_inner i ON o.k = i.k') AS tiles;
SELECT name, gj_compare(q) AS result FROM hp_queries ORDER BY name;
RESET gpujoin.device_memory;
RESET gpujoin.device_partitions;

DROP TABLE hp_queries, hp_outer, hp_inner;
DROP FUNCTION hp_tiles(text);
