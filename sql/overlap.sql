--
-- overlap: with gpujoin.overlap_steps (on by default) a join runs its next
-- step on a helper thread while the executor returns the rows of the
-- current one.  The rows must not change, whichever way the join ends: all
-- rows returned, LIMIT, a cursor closed half way, an ERROR raised while a
-- step runs.
--
SET client_min_messages = warning;
SET gpujoin.enable_aggregate = off;

CREATE TABLE t_ov AS
SELECT g AS id, (g * 7919) % 400 AS k, ((g * 104729) % 997)::float8 / 7 AS v
FROM generate_series(1, 2000) g;
ANALYZE t_ov;

-- a tiny budget: many tiles, many steps each
SET gpujoin.device_memory = '2kB';
-- tiles of the whole sorted sides here, not device partitions (partitions.sql)
SET gpujoin.device_partitions = off;

CREATE TEMP TABLE ov_queries (q) AS VALUES
    ('SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON x.k < y.k AND y.k < x.k + 3'),
    ('SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON x.k = y.k'),
    ('SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON abs(x.v - y.v) < 0.05 AND x.id <> y.id'),
    ('SELECT x.id, y.id FROM t_ov x LEFT JOIN t_ov y ON x.k + 395 < y.k'),
    ('SELECT x.id, y.id FROM t_ov x FULL JOIN t_ov y ON x.k = y.k + 390'),
    ('SELECT x.id FROM t_ov x WHERE NOT EXISTS (SELECT 1 FROM t_ov y WHERE y.k > x.k + 390)');

SELECT q, gj_compare(q) AS overlap_on FROM ov_queries ORDER BY q;
SET gpujoin.overlap_steps = off;
SELECT q, gj_compare(q) AS overlap_off FROM ov_queries ORDER BY q;
RESET gpujoin.overlap_steps;

-- EXPLAIN ANALYZE counts the steps that ran while rows were returned
BEGIN;
SELECT gj_force(true);
SELECT bool_or(line ~ 'Steps Overlapped: [1-9]') AS overlapped
FROM gj_explain('SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON x.k < y.k AND y.k < x.k + 3', true) AS line;
SET LOCAL gpujoin.overlap_steps = off;
SELECT bool_or(line ~ 'Steps Overlapped') AS overlapped
FROM gj_explain('SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON x.k < y.k AND y.k < x.k + 3', true) AS line;
COMMIT;

-- the scan ends with a step still running: LIMIT, and a cursor closed early
BEGIN;
SELECT gj_force(true);
SELECT gj_uses_gpujoin('SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON x.k < y.k LIMIT 7') AS limit_plan,
       count(*) AS limited
FROM (SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON x.k < y.k LIMIT 7) l;
DECLARE c_ov CURSOR FOR SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON x.k < y.k AND y.k < x.k + 3;
MOVE FORWARD 100 IN c_ov;
MOVE FORWARD 10 IN c_ov;
CLOSE c_ov;
COMMIT;

-- an ERROR raised by a host qual while the next step runs: the same error
-- as the native plan, and the next query works
SELECT gj_compare_error('SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON x.k < y.k AND y.k < x.k + 3 AND length(repeat(''a'', 10 / (y.id - 1500))) >= 0') AS result;
SELECT gj_compare('SELECT x.id, y.id FROM t_ov x JOIN t_ov y ON x.k < y.k AND y.k < x.k + 3') AS result;

-- an ERROR at the first row while the next step, a long one on the cpu
-- backend, still runs: the transaction's abort frees the drained rows the
-- step reads only after the step is done, and the session goes on
CREATE TABLE t_ov_long AS SELECT g AS id, (g * 7919) % 30000 AS k FROM generate_series(1, 30000) g;
ANALYZE t_ov_long;
SET gpujoin.device_memory = '4MB';
BEGIN;
SELECT gj_force(true);
SELECT count(*) FROM t_ov_long x JOIN t_ov_long y
    ON (x.k * 3 + y.k) % 7 = 0 AND length(repeat('a', 10 / (y.id - y.id))) >= 0;
ROLLBACK;
SELECT count(*) AS next_query FROM t_ov x JOIN t_ov y ON x.k = y.k;

RESET gpujoin.device_memory;
RESET gpujoin.device_partitions;
DROP TABLE t_ov, t_ov_long;
