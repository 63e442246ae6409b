--
-- rescan: a GpuJoin that is executed many times, inside a correlated
-- subquery (its host quals see a new parameter each time) and as the inner
-- side of a nested loop, gives the native plan's answer every time.
--
SET client_min_messages = warning;

-- correlated subquery: the parameter is a host qual of the inner GpuJoin
SELECT gj_compare('
    SELECT o.id, (SELECT count(*) FROM t_int x JOIN t_int y ON x.b < y.b
                  WHERE x.a = o.a AND y.id > o.id) AS n
    FROM t_int o WHERE o.id <= 40') AS result;

-- the parameter reaches a child of the GpuJoin: that side is drained again
SELECT gj_compare('
    SELECT o.id, (SELECT count(*) FROM (SELECT * FROM t_int WHERE b > o.b) x
                  JOIN t_int y ON x.b < y.b) AS n
    FROM t_int o WHERE o.id <= 40') AS result;

-- GpuJoin under a nested loop with a lateral reference
SELECT gj_compare('
    SELECT o.id, s.n
    FROM t_one o, LATERAL (SELECT count(*) AS n FROM t_int x JOIN t_int y
                           ON x.b < y.b AND x.a > o.b) s') AS result;

-- GpuJoin as the inner side of a native nested loop, rescanned per outer row
BEGIN;
SELECT gj_force(true);
SET LOCAL enable_nestloop = on;
SET LOCAL enable_material = off;
SELECT count(*), sum(x.id + y.id + z.id)
FROM t_one z
JOIN (t_int x JOIN t_int y ON x.b < y.b) ON z.b < x.id + y.id * 0;
COMMIT;
SELECT count(*), sum(x.id + y.id + z.id)
FROM t_one z
JOIN (t_int x JOIN t_int y ON x.b < y.b) ON z.b < x.id + y.id * 0;
