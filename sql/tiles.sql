--
-- tiles: a tiny gpujoin.device_memory cuts the join matrix into many tiles
-- and many steps per tile; the result must not change, and EXPLAIN ANALYZE
-- must show the tiles run.
--
SET client_min_messages = warning;
-- this file is about the join: aggregates over it stay in PostgreSQL
SET gpujoin.enable_aggregate = off;

CREATE TABLE t_big AS
SELECT g AS id, (g * 7919) % 1000 AS k, ((g * 104729) % 997)::float8 / 7 AS v
FROM generate_series(1, 1500) g;
ANALYZE t_big;

SET gpujoin.device_memory = '1kB';
-- tiles of the whole sorted sides here, not device partitions (partitions.sql)
SET gpujoin.device_partitions = off;

SELECT q, gj_compare(q) AS result
FROM (VALUES
    ('SELECT x.id, y.id FROM t_big x JOIN t_big y ON x.k < y.k AND y.k < x.k + 3'),
    ('SELECT x.id, y.id FROM t_big x JOIN t_big y ON x.k = y.k'),
    ('SELECT x.id, y.id FROM t_big x JOIN t_big y ON abs(x.v - y.v) < 0.01'),
    ('SELECT x.id, y.id FROM t_big x JOIN t_int y ON x.k % 50 = y.b'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_big y ON x.b >= y.k - 2 AND x.b <= y.k')
) AS v(q)
ORDER BY q;

-- a dense join: every pair matches, so every step fills its match buffer
SELECT gj_compare('SELECT x.id, y.id FROM t_big x JOIN t_int y ON x.k >= -1000 + y.id * 0') AS result;

BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT count(*) FROM t_big x JOIN t_big y ON x.k < y.k AND y.k < x.k + 3', true) AS line
WHERE line ~ '(GpuJoin|Tiles|Drained|Device Matches)';
SELECT (SELECT count(*) FROM t_big x JOIN t_big y ON x.k < y.k AND y.k < x.k + 3) AS many_tiles;
COMMIT;

RESET gpujoin.device_memory;
RESET gpujoin.device_partitions;
SELECT count(*) AS one_tile FROM t_big x JOIN t_big y ON x.k < y.k AND y.k < x.k + 3;
