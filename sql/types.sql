--
-- types: every device type with every comparison operator, the cross-type
-- integer and float comparisons, and the arithmetic the device evaluates.
-- Each line is one join run with GpuJoin and natively; "N rows, GpuJoin"
-- means both gave the same N rows and GpuJoin was in the plan.
--
SET client_min_messages = warning;

-- same-type comparisons over every device type
SELECT tbl, col, op,
       gj_compare(format('SELECT x.id AS xid, y.id AS yid FROM %I x JOIN %I y ON x.%I %s y.%I',
                         tbl, tbl, col, op, col)) AS result
FROM (VALUES ('t_int', 'a'), ('t_int', 'b'), ('t_int', 'c'), ('t_int', 'flag'),
             ('t_flt', 'f4'), ('t_flt', 'f8'),
             ('t_time', 'd'), ('t_time', 'ts'), ('t_time', 'tz')) AS c(tbl, col),
     unnest(ARRAY['=', '<>', '<', '<=', '>', '>=']) AS op
ORDER BY tbl, col, op;

-- cross-type comparisons, as PostgreSQL's int24/int48/float48 operators do them
SELECT l, r, op,
       gj_compare(format('SELECT x.id AS xid, y.id AS yid FROM t_int x JOIN t_int y ON x.%I %s y.%I',
                         l, op, r)) AS result
FROM (VALUES ('a', 'b'), ('b', 'a'), ('a', 'c'), ('c', 'a'), ('b', 'c'), ('c', 'b')) AS c(l, r),
     unnest(ARRAY['=', '<', '>=']) AS op
ORDER BY l, r, op;

SELECT l, r, op,
       gj_compare(format('SELECT x.id AS xid, y.id AS yid FROM t_flt x JOIN t_flt y ON x.%I %s y.%I',
                         l, op, r)) AS result
FROM (VALUES ('f4', 'f8'), ('f8', 'f4')) AS c(l, r),
     unnest(ARRAY['=', '<>', '<', '>=']) AS op
ORDER BY l, r, op;

-- arithmetic and functions inside join conditions (the extreme rows are
-- left out here: overflow is the subject of errors.sql)
SELECT q, gj_compare(q) AS result
FROM (VALUES
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.a + y.a < 10 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b - y.b > 40 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b * 3 = y.b * 2 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.c / 1000000000 = y.b WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b % 7 = y.a % 7 AND x.id < y.id WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON abs(x.b - y.b) <= 3 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON -x.a = y.a WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON y.b BETWEEN x.b - 5 AND x.b + 5 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b::int8 * 2 > y.c / 1000000000 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON (x.c / 1000000000)::int4 = y.b WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b::int2 = y.a WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b::float8 / 2 < y.a::float8 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b::float4 = y.a::float4 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.flag AND x.b < y.b WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON (x.b < y.b OR x.a IS NULL) AND NOT x.flag WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.flag = y.flag AND x.a IS NOT NULL AND y.b IS NULL WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8 + y.f8 > 10 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f4 * y.f4 < 1 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON abs(x.f8 - y.f8) <= 0.5 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f4 - y.f4 = 0 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8 / 3 < y.f4 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8::float4 = y.f4 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON x.d + 3 < y.d WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON x.d - y.d BETWEEN -2 AND 2 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON x.d - 1 = y.d WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON y.ts BETWEEN x.ts AND x.ts + interval ''2 hours'' WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON x.tz > y.tz AND x.d = y.d WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_flt y ON x.b::float8 < y.f8 WHERE x.id <= 200 AND y.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_time y ON x.id = y.id AND x.b < 0 WHERE x.id <= 200 AND y.id <= 200')
) AS v(q)
ORDER BY q;

-- the device only sees the keys: columns of any type (text, numeric, arrays,
-- whole rows, long toastable values) come back exactly as stored
CREATE TABLE t_wide AS
SELECT g AS id, g % 50 AS k, repeat('x', (g * 37) % 3000) || g AS txt,
       (g / 7.0)::numeric AS num, ARRAY[g, g + 1] AS arr,
       CASE WHEN g % 9 = 0 THEN NULL ELSE md5(g::text) END AS h
FROM generate_series(1, 600) g;
ANALYZE t_wide;
SELECT q, gj_compare(q) AS result
FROM (VALUES
    ('SELECT x, y.txt, y.num, y.arr FROM t_wide x JOIN t_wide y ON x.k = y.k AND x.h > y.h'),
    ('SELECT x.txt, y.h, y FROM t_wide x JOIN t_wide y ON x.k < y.k AND y.id < 40'),
    ('SELECT x.num + y.c, x.arr || y.b FROM t_wide x JOIN t_int y ON x.k = y.b')
) AS v(q)
ORDER BY q;

-- time of day: microseconds in an int64, compared as PostgreSQL's time_cmp
CREATE TABLE t_tod (id int, t time);
INSERT INTO t_tod
SELECT g, CASE WHEN g % 13 = 0 THEN NULL
               ELSE time '00:00' + ((g * 7919) % 1440) * interval '1 minute' END
FROM generate_series(1, 300) g;
INSERT INTO t_tod VALUES (301, '00:00'), (302, '24:00:00'), (303, '23:59:59.999999');
ANALYZE t_tod;
SELECT op, gj_compare(format('SELECT x.id AS xid, y.id AS yid FROM t_tod x JOIN t_tod y ON x.t %s y.t', op)) AS result
FROM unnest(ARRAY['=', '<>', '<', '<=', '>', '>=']) AS op ORDER BY op;
BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_tod x JOIN t_tod y ON x.t = y.t') AS line
WHERE line ~ 'Algorithm|Device Quals';
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_tod x JOIN t_tod y ON y.t BETWEEN x.t AND x.t') AS line
WHERE line ~ 'Algorithm|Device Quals';
ROLLBACK;
SELECT gj_compare('SELECT x.id AS xid, y.id AS yid FROM t_tod x JOIN t_tod y ON y.t BETWEEN x.t AND x.t + interval ''10 minutes''') AS host_bound;
