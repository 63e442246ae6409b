--
-- explain: the plan shape of GpuJoin, which quals run on the device and which
-- on the host, and the counters of EXPLAIN ANALYZE.
--
SET client_min_messages = warning;
-- this file is about the join: aggregates over it stay in PostgreSQL
SET gpujoin.enable_aggregate = off;
BEGIN;
SELECT gj_force(true);

-- one device qual
SELECT * FROM gj_explain('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b < y.b');

-- device and host quals mixed: text comparison and a volatile function stay on the host
SELECT * FROM gj_explain('SELECT x.id, y.id FROM t_int x JOIN t_int y
    ON x.b < y.b AND x.id::text > y.id::text AND x.c <= y.c');

-- no device-evaluable qual linking the sides: no GpuJoin
SELECT * FROM gj_explain('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.id::text < y.id::text');

-- three tables: GpuJoin over GpuJoin
SELECT * FROM gj_explain('SELECT count(*) FROM t_int x JOIN t_int y ON x.b < y.b JOIN t_one z ON z.b > y.a');

-- EXPLAIN ANALYZE counters (timings masked)
SELECT * FROM gj_explain('SELECT count(*) FROM t_int x JOIN t_int y ON x.b < y.b AND x.id::text > y.id::text', true);
COMMIT;

-- disabled: never GpuJoin
SET gpujoin.enabled = off;
BEGIN;
SELECT gj_force(true);
SELECT set_config('gpujoin.enabled', 'off', true);
SELECT * FROM gj_explain('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b < y.b');
COMMIT;
RESET gpujoin.enabled;
