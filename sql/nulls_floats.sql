--
-- nulls_floats: NULL keys never match; NaN equals NaN and sorts above
-- everything; -0.0 equals 0.0; infinities compare; duplicates multiply;
-- empty and one-row inputs; the values a join returns are the stored ones.
--
SET client_min_messages = warning;

SELECT q, gj_compare(q) AS result
FROM (VALUES
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8 = y.f8'),
    ('SELECT x.id, y.id, x.f8, y.f8 FROM t_flt x JOIN t_flt y ON x.f8 > y.f8'),
    ('SELECT x.id, y.id, x.f4, y.f4 FROM t_flt x JOIN t_flt y ON x.f4 <= y.f4'),
    ('SELECT x.f8, y.f8 FROM t_flt x JOIN t_flt y ON x.f8 = y.f8 AND x.id <> y.id'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8 <> y.f8'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b = y.b'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b < y.b OR y.b IS NULL'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON (x.b < y.b) IS NULL'),
    ('SELECT x.*, y.* FROM t_int x JOIN t_one y ON x.b < y.b'),
    ('SELECT x.*, y.* FROM t_one x JOIN t_int y ON x.b < y.b'),
    ('SELECT x.*, y.* FROM t_int x JOIN t_empty y ON x.b < y.b'),
    ('SELECT x.*, y.* FROM t_empty x JOIN t_int y ON x.b < y.b'),
    ('SELECT x.*, y.* FROM t_empty x JOIN t_empty y ON x.b < y.b'),
    ('SELECT x.*, y.* FROM t_one x JOIN t_one y ON x.f8 >= y.f8')
) AS v(q)
ORDER BY q;

-- -0.0 and 0.0 join each other, and each side keeps its own sign
BEGIN;
SELECT gj_force(true);
SELECT x.id, x.f8::text AS x_f8, y.id, y.f8::text AS y_f8
FROM t_flt x JOIN t_flt y ON x.f8 = y.f8
WHERE x.id IN (205, 206)
ORDER BY 1, 3;

-- NaN joins NaN and is greater than +Infinity
SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8 > y.f8
WHERE x.id IN (201, 203) AND y.id IN (201, 202, 203, 204)
ORDER BY 1, 2;
SELECT count(*) FROM gj_explain('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f8 > y.f8
WHERE x.id IN (201, 203) AND y.id IN (201, 202, 203, 204)') AS line
WHERE line LIKE '%GpuJoin%';
COMMIT;
