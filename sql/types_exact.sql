--
-- types_exact: numeric, interval and timetz in device comparisons.  The
-- host encodes each value into an int64 whose order and equality are
-- PostgreSQL's: timetz as (GMT time, zone), interval as its 128-bit span
-- where that fits 64 bits, numeric as fixed point at the largest scale the
-- join's values need (NaN, +-Infinity at the int64 extremes).  A row with a
-- value that has no exact encoding (a numeric too long, an interval too
-- large) has all its pairs evaluated by the host quals, which EXPLAIN
-- ANALYZE reports.  Every result is compared with the native plan.
--
SET client_min_messages = warning;

-- gj_compare under each gpujoin.algorithm, with the algorithm that ran
CREATE FUNCTION gj_compare_algo(algo text, query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
    ran text;
BEGIN
    PERFORM set_config('gpujoin.algorithm', algo, true);
    PERFORM gj_force(true);
    SELECT string_agg(btrim(l), ' ') INTO ran FROM gj_explain(query) l WHERE l ~ 'Algorithm:';
    result := gj_compare(query);
    PERFORM set_config('gpujoin.algorithm', 'auto', true);
    RETURN result || coalesce(' (' || ran || ')', '');
END $$;

-- numeric: one value at several scales (1 = 1.0 = 1.00), NaN, +-Infinity,
-- NULLs, duplicates, negative and fractional values, columns of different
-- declared scales
CREATE TABLE t_num (id int, n numeric, m numeric(12,3));
INSERT INTO t_num
SELECT g,
       CASE WHEN g % 17 = 0 THEN NULL ELSE ((g * 37) % 41 - 20) / 4.0 END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE ((g * 29) % 43 - 21) / 8.0 END
FROM generate_series(1, 120) g;
INSERT INTO t_num VALUES
    (201, 1, 1), (202, 1.0, 1.0), (203, 1.00, 1.00), (204, 1.000000, -1),
    (205, 'NaN', 0), (206, 'NaN', NULL), (207, 'Infinity', 99999999.999),
    (208, '-Infinity', -99999999.999), (209, 0, 0.001), (210, -0.000, -0.001),
    (211, 123456789012.123456, 0.5), (212, -123456789012.123456, -0.5),
    (213, NULL, NULL);
ANALYZE t_num;

SELECT col, op, algo,
       gj_compare_algo(algo, format('SELECT x.id AS xid, y.id AS yid FROM t_num x JOIN t_num y ON x.%s %s y.%s',
                                    l, op, r)) AS result
FROM (VALUES ('n', 'n', 'n'), ('m', 'm', 'm'), ('n-m', 'n', 'm')) AS c(col, l, r),
     unnest(ARRAY['=', '<>', '<', '<=', '>', '>=']) AS op,
     unnest(ARRAY['hash', 'sortmerge', 'nestloop']) AS algo
ORDER BY col, op, algo;

SELECT algo,
       gj_compare_algo(algo, 'SELECT x.id AS xid, y.id AS yid FROM t_num x JOIN t_num y ON y.n BETWEEN x.m AND x.n') AS result
FROM unnest(ARRAY['sortmerge', 'nestloop']) AS algo ORDER BY algo;

-- 1 = 1.0 = 1.00 = 1.000000: the four rows join each other
SELECT x.id, array_agg(y.id ORDER BY y.id) AS equal_ids
FROM t_num x JOIN t_num y ON x.n = y.n
WHERE x.id BETWEEN 201 AND 204 GROUP BY x.id ORDER BY x.id;

-- interval: '1 mon' = '30 days' = '720 hours', '-1 day +24 hours' = '0',
-- months, days and time of either sign
CREATE TABLE t_iv (id int, iv interval);
INSERT INTO t_iv
SELECT g, CASE WHEN g % 11 = 0 THEN NULL
               ELSE make_interval(months => (g * 7) % 5 - 2, days => (g * 13) % 61 - 30,
                                  hours => (g * 17) % 49 - 24) END
FROM generate_series(1, 120) g;
INSERT INTO t_iv VALUES
    (201, '1 mon'), (202, '30 days'), (203, '720 hours'), (204, '-1 day +24 hours'),
    (205, '0'), (206, '1 year'), (207, '360 days'), (208, '-1 mon +30 days'),
    (209, '178000000 years'), (210, '-178000000 years'), (211, NULL);
ANALYZE t_iv;

-- without the huge values, every key fits: the device decides
SELECT op, algo,
       gj_compare_algo(algo, format('SELECT x.id AS xid, y.id AS yid FROM t_iv x JOIN t_iv y ON x.iv %s y.iv WHERE x.id < 209 AND y.id < 209', op)) AS result
FROM unnest(ARRAY['=', '<>', '<', '<=', '>', '>=']) AS op,
     unnest(ARRAY['hash', 'sortmerge', 'nestloop']) AS algo
ORDER BY op, algo;

SELECT x.id, array_agg(y.id ORDER BY y.id) AS equal_ids
FROM t_iv x JOIN t_iv y ON x.iv = y.iv
WHERE x.id BETWEEN 201 AND 208 GROUP BY x.id ORDER BY x.id;

-- timetz: ordered by GMT time, then by zone; equal only with equal zones
CREATE TABLE t_ttz (id int, tt timetz);
INSERT INTO t_ttz
SELECT g, CASE WHEN g % 13 = 0 THEN NULL
               ELSE (make_time((g * 7) % 24, (g * 11) % 4 * 15, 0)::text ||
                     (ARRAY['+02', '-05', '+00', '+01'])[g % 4 + 1])::timetz END
FROM generate_series(1, 60) g;
INSERT INTO t_ttz VALUES
    (201, '10:00+02'), (202, '08:00+00'), (203, '09:00+01'), (204, '10:00+02'),
    (205, '07:00-01'), (206, '00:00+15:59'), (207, '23:59:59.999999-15:59'),
    (208, '24:00+00'), (209, '00:00-00'), (210, '12:00:00.5+05:30'), (211, NULL);
ANALYZE t_ttz;

SELECT op, algo,
       gj_compare_algo(algo, format('SELECT x.id AS xid, y.id AS yid FROM t_ttz x JOIN t_ttz y ON x.tt %s y.tt', op)) AS result
FROM unnest(ARRAY['=', '<>', '<', '<=', '>', '>=']) AS op,
     unnest(ARRAY['hash', 'sortmerge', 'nestloop']) AS algo
ORDER BY op, algo;

-- same GMT time, different zones: ordered by zone, not equal
SELECT x.id, x.tt, array_agg(y.id ORDER BY y.id) FILTER (WHERE x.tt = y.tt) AS equal_ids,
       array_agg(y.id ORDER BY y.id) FILTER (WHERE x.tt < y.tt) AS less_than
FROM t_ttz x JOIN t_ttz y ON x.tt <= y.tt
WHERE x.id BETWEEN 201 AND 205 AND y.id BETWEEN 201 AND 205
GROUP BY x.id, x.tt ORDER BY x.id;

-- what the device evaluates: the comparisons, with constants (a numeric
-- constant is rescaled to the join's fixed point when the join runs);
-- arithmetic stays on the host
BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num x JOIN t_num y ON x.n = y.n') AS line
WHERE line ~ 'Algorithm|Quals';
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num x JOIN t_num y ON y.n BETWEEN x.n AND x.m') AS line
WHERE line ~ 'Algorithm|Quals';
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num x JOIN t_num y ON x.n < y.n AND (x.m + y.m > 1 OR y.n = 2.5)') AS line
WHERE line ~ 'Algorithm|Quals';
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num x JOIN t_num y ON x.n < y.n AND (y.n = 2.50 OR x.m > 0.125 OR x.n = ''NaN'' OR y.n < ''-Infinity'')') AS line
WHERE line ~ 'Algorithm|Quals';
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num x LEFT JOIN t_num y ON x.n < y.n AND x.m <= 2.5', true) AS line
WHERE line ~ 'Algorithm|Quals|Rechecks';
-- 1e20 has no int64 at any scale: that qual stays on the host
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num x JOIN t_num y ON x.n = y.n AND (y.n <> 0.5 OR x.n = 1e20)') AS line
WHERE line ~ 'Algorithm|Quals';
-- 1e-17 fits, but not 123456789012.123456 at 17 decimal places: those
-- rows' pairs go to the host
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num x LEFT JOIN t_num y ON x.n < y.n AND x.n < 0.00000000000000001', true) AS line
WHERE line ~ 'Algorithm|Quals|Inexact';
-- two constants that need 10^-18 and 10^10: no scale holds both
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num x LEFT JOIN t_num y ON x.n < y.n AND x.n > 0.000000000000000001 AND x.n < 10000000000', true) AS line
WHERE line ~ 'Algorithm|Quals|Inexact';
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_iv x JOIN t_iv y ON x.iv < y.iv AND (y.iv > ''1 day'' OR x.iv IS NULL)') AS line
WHERE line ~ 'Algorithm|Quals';
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_ttz x JOIN t_ttz y ON x.tt = y.tt') AS line
WHERE line ~ 'Algorithm|Quals';
ROLLBACK;
SELECT q, gj_compare(q) AS result
FROM (VALUES
    ('SELECT x.id, y.id FROM t_num x JOIN t_num y ON x.n < y.n AND (x.m + y.m > 1 OR y.n = 2.5)'),
    ('SELECT x.id, y.id FROM t_num x JOIN t_num y ON x.n < y.n AND (y.n = 2.50 OR x.m > 0.125 OR x.n = ''NaN'' OR y.n < ''-Infinity'')'),
    ('SELECT x.id, y.id FROM t_num x LEFT JOIN t_num y ON x.n < y.n AND x.m <= 2.5'),
    ('SELECT x.id, y.id FROM t_num x LEFT JOIN t_num y ON x.n = y.m AND y.n >= -1.0625'),
    ('SELECT x.id, y.id FROM t_num x JOIN t_num y ON x.n = y.n AND (y.n <> 0.5 OR x.n = 1e20)'),
    ('SELECT x.id, y.id FROM t_num x LEFT JOIN t_num y ON x.n < y.n AND x.n < 0.00000000000000001'),
    ('SELECT x.id, y.id FROM t_num x LEFT JOIN t_num y ON x.n < y.n AND x.n > 0.000000000000000001 AND x.n < 10000000000'),
    ('SELECT x.id, y.id FROM t_num x LEFT JOIN t_num y ON x.n < y.n AND x.n <> ''Infinity'''),
    ('SELECT x.id, y.id FROM t_num x RIGHT JOIN t_num y ON y.n >= x.m AND y.n <= 1.25'),
    ('SELECT x.id, y.id FROM t_num x RIGHT JOIN t_num y ON y.m >= x.n AND y.m <= 1.2501')
) AS v(q) ORDER BY q;
SELECT gj_compare('SELECT x.id, y.id FROM t_iv x JOIN t_iv y ON x.iv < y.iv AND (y.iv > ''1 day'' OR x.iv IS NULL) WHERE x.id < 209') AS device_constant;

-- values with no exact int64: the device joins the other rows, and every
-- pair of a row with such a key is evaluated on the host
CREATE TABLE t_num_big (id int, n numeric);
INSERT INTO t_num_big SELECT id, n FROM t_num WHERE id > 200;
INSERT INTO t_num_big VALUES (301, 1e30), (302, -1e30), (303, 1e-30), (304, 9223372036854775807),
    (305, 1.000000000000000000000000000000001);
ANALYZE t_num_big;
SELECT op, algo,
       gj_compare_algo(algo, format('SELECT x.id AS xid, y.id AS yid FROM t_num_big x JOIN t_num y ON x.n %s y.n', op)) AS result
FROM unnest(ARRAY['=', '<', '>=']) AS op,
     unnest(ARRAY['hash', 'sortmerge']) AS algo
ORDER BY op, algo;
SELECT gj_compare('SELECT x.id, y.id FROM t_iv x JOIN t_iv y ON x.iv <= y.iv') AS huge_intervals;
SELECT gj_compare('SELECT x.id, y.id FROM t_iv x LEFT JOIN t_iv y ON x.iv = y.iv AND x.id <> y.id') AS huge_intervals_left;
BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num_big x JOIN t_num y ON x.n = y.n', true) AS line
WHERE line ~ 'Algorithm|Host Rechecks|Inexact|actual rows';
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_iv x JOIN t_iv y ON x.iv < y.iv', true) AS line
WHERE line ~ 'Algorithm|Host Rechecks|Inexact';
-- the aggregate node too reduces those rows' pairs on the host; the other
-- rows' pairs are still counted from range widths in the backend (the
-- values with no int64 are NULL to it)
SELECT line FROM gj_explain('SELECT count(*) FROM t_iv x JOIN t_iv y ON x.iv < y.iv', true) AS line
WHERE line ~ 'Algorithm|Host Rechecks|Inexact|GPU Aggregates|Pairs Aggregated|Reduced in Backend';
SELECT gj_compare('SELECT count(*) FROM t_iv x JOIN t_iv y ON x.iv < y.iv') AS agg_count_inexact;
-- without the huge rows the same join runs on the device
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_iv x JOIN t_iv y ON x.iv < y.iv WHERE x.id < 209 AND y.id < 209', true) AS line
WHERE line ~ 'Algorithm|Host Rechecks|Inexact';
ROLLBACK;
SELECT q, algo, gj_compare_algo(algo, q) AS result
FROM (VALUES
    ('SELECT x.id, y.id FROM t_num_big x LEFT JOIN t_num y ON x.n = y.n'),
    ('SELECT x.id, y.id FROM t_num x FULL JOIN t_num_big y ON x.n = y.n'),
    ('SELECT x.id, y.id FROM t_num_big x RIGHT JOIN t_num_big y ON x.n < y.n'),
    ('SELECT x.id FROM t_num_big x WHERE EXISTS (SELECT FROM t_num y WHERE y.n = x.n)'),
    ('SELECT x.id FROM t_num x WHERE NOT EXISTS (SELECT FROM t_num_big y WHERE y.n <= x.n)'),
    ('SELECT x.id, y.id FROM t_iv x FULL JOIN t_iv y ON x.iv = y.iv'),
    ('SELECT x.id FROM t_iv x WHERE NOT EXISTS (SELECT FROM t_iv y WHERE y.iv > x.iv)'),
    ('SELECT count(*), count(y.id) FROM t_iv x LEFT JOIN t_iv y ON x.iv < y.iv')
) AS v(q), unnest(ARRAY['hash', 'sortmerge', 'nestloop']) AS algo
ORDER BY q, algo;

-- the scale is the join's own: with 1e-18 the fixed point has 18 decimal
-- places, and +-9.223372036854775805 are the largest values that fit (the
-- int64 extremes above them are -Infinity, +Infinity and NaN)
CREATE TABLE t_num_fine (id int, n numeric);
INSERT INTO t_num_fine VALUES (1, 0.000000000000000001), (2, 0.5), (3, 9.223372036854775805),
    (4, 0.000000000000000002), (5, 'NaN'), (6, -9.223372036854775805), (7, 'Infinity'),
    (8, '-Infinity'), (9, 9.22337203685477580), (10, 0.5000);
SELECT op, gj_compare_algo('auto', format('SELECT x.id, y.id FROM t_num_fine x JOIN t_num_fine y ON x.n %s y.n', op)) AS result
FROM unnest(ARRAY['=', '<', '>']) AS op ORDER BY op;
BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num_fine x JOIN t_num_fine y ON x.n < y.n', true) AS line
WHERE line ~ 'Algorithm|Host Rechecks|Inexact|actual rows';
-- one unit of the last place more, and that row's pairs go to the host
INSERT INTO t_num_fine VALUES (11, 9.223372036854775806);
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num_fine x JOIN t_num_fine y ON x.n < y.n', true) AS line
WHERE line ~ 'Algorithm|Host Rechecks|Inexact|actual rows';
ROLLBACK;
INSERT INTO t_num_fine VALUES (11, 9.223372036854775806), (12, -9.223372036854775806);
SELECT op, gj_compare(format('SELECT x.id, y.id FROM t_num_fine x JOIN t_num_fine y ON x.n %s y.n', op)) AS result
FROM unnest(ARRAY['=', '<', '>']) AS op ORDER BY op;

-- outer, semi and anti joins, each algorithm
SELECT q, algo, gj_compare_algo(algo, q) AS result
FROM (VALUES
    ('SELECT x.id, y.id FROM t_num x LEFT JOIN t_num y ON x.n = y.m'),
    ('SELECT x.id, y.id FROM t_num x FULL JOIN t_num y ON x.n = y.m'),
    ('SELECT x.id, y.id FROM t_num x RIGHT JOIN t_num y ON x.n > y.m AND x.n < y.m + 0'),
    ('SELECT x.id FROM t_num x WHERE EXISTS (SELECT FROM t_num y WHERE y.m = x.n)'),
    ('SELECT x.id FROM t_num x WHERE NOT EXISTS (SELECT FROM t_num y WHERE y.m > x.n)'),
    ('SELECT x.id, y.id FROM t_iv x LEFT JOIN t_iv y ON x.iv = y.iv'),
    ('SELECT x.id FROM t_ttz x WHERE NOT EXISTS (SELECT FROM t_ttz y WHERE y.tt < x.tt)'),
    ('SELECT x.id, y.id FROM t_ttz x FULL JOIN t_ttz y ON x.tt = y.tt')
) AS v(q), unnest(ARRAY['hash', 'sortmerge', 'nestloop']) AS algo
ORDER BY q, algo;

-- numeric against integers: the integer cast to numeric is the integer
-- times 10^scale (an int8 overflow sends the pair to the host); the
-- extremes of each integer type are in t_int
CREATE TABLE t_num_int AS
SELECT i.id, i.a, i.b, i.c, n.n
FROM t_int i LEFT JOIN t_num n ON n.id = i.id
WHERE i.id > 200 OR i.id % 3 = 0;
INSERT INTO t_num_int VALUES (300, 1, 1, 1, 1.00), (301, 0, 0, 0, 'NaN'), (302, NULL, NULL, NULL, 'Infinity'),
    (303, 5, 5, 5000000000, 5000000000.5);
SELECT col, op, algo,
       gj_compare_algo(algo, format('SELECT x.id AS xid, y.id AS yid FROM t_num_int x JOIN t_num_int y ON x.%s %s y.%s',
                                    l, op, r)) AS result
FROM (VALUES ('n-int2', 'n', 'a'), ('int4-n', 'b', 'n'), ('n-int8', 'n', 'c'), ('int8-n', 'c', 'n')) AS c(col, l, r),
     unnest(ARRAY['=', '<>', '<', '>=']) AS op,
     unnest(ARRAY['sortmerge', 'nestloop']) AS algo
ORDER BY col, op, algo;
BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_num_int x JOIN t_num_int y ON x.n < y.c', true) AS line
WHERE line ~ 'Algorithm|Quals|Rechecks';
ROLLBACK;

-- many tiles
SET gpujoin.device_memory = '1kB';
SELECT q, gj_compare(q) AS result
FROM (VALUES
    ('SELECT x.id, y.id FROM t_num x JOIN t_num y ON x.n = y.n'),
    ('SELECT x.id, y.id FROM t_num x JOIN t_num y ON x.n < y.m'),
    ('SELECT x.id, y.id FROM t_num_big x JOIN t_num y ON x.n <= y.n'),
    ('SELECT x.id, y.id FROM t_iv x JOIN t_iv y ON x.iv >= y.iv'),
    ('SELECT x.id, y.id FROM t_ttz x JOIN t_ttz y ON x.tt <> y.tt')
) AS v(q)
ORDER BY q;
RESET gpujoin.device_memory;

-- rescans: the parameter reaches a child, so that side is drained again and
-- the numeric scale chosen again (large on some executions, small on others)
SELECT gj_compare('
    SELECT o.id, (SELECT count(*) FROM (SELECT * FROM t_num_big WHERE id > o.id) x
                  JOIN t_num y ON x.n < y.n) AS n
    FROM t_num_big o') AS rescan_numeric;
SELECT gj_compare('
    SELECT o.id, (SELECT count(*) FROM (SELECT * FROM t_iv WHERE id >= o.id) x
                  JOIN t_iv y ON x.iv = y.iv) AS n
    FROM t_iv o WHERE o.id > 100') AS rescan_interval;

-- aggregates: computed inside GpuJoin over such a join; an argument of an
-- encoded type stays with PostgreSQL's Agg
SELECT gj_compare('SELECT count(*) FROM t_num x JOIN t_num y ON x.n < y.m') AS agg_count;
SELECT gj_compare('SELECT count(*) FROM t_num_big x JOIN t_num y ON x.n < y.n') AS agg_count_fallback;
SELECT gj_compare('SELECT count(x.n), max(y.id) FROM t_num x JOIN t_num y ON x.n < y.m') AS agg_arg;
BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT count(x.n) FROM t_num x JOIN t_num y ON x.n < y.m') AS line
WHERE line ~ 'Aggregate|GPU Aggregates';
ROLLBACK;

-- a domain over numeric
CREATE DOMAIN price AS numeric(10,2) CHECK (VALUE >= 0);
CREATE TABLE t_price (id int, p price);
INSERT INTO t_price SELECT g, (g % 37) / 4.0 FROM generate_series(1, 80) g;
SELECT gj_compare('SELECT x.id, y.id FROM t_price x JOIN t_num y ON x.p = y.n') AS domain_eq;
SELECT gj_compare('SELECT x.id, y.id FROM t_price x JOIN t_price y ON x.p < y.p') AS domain_lt;

DROP TABLE t_num, t_iv, t_ttz, t_num_big, t_num_fine, t_num_int, t_price;
DROP DOMAIN price;
DROP FUNCTION gj_compare_algo(text, text);
