--
-- band_forms: every written form of a band or an inequality join runs as the
-- same sort-merge range (issue 35): "s.t BETWEEN r.t - 12 AND r.t + 12",
-- "abs(r.t - s.t) <= 12", "r.t - s.t BETWEEN -12 AND 12", "s.t + 12 >= r.t",
-- ... are rewritten so that the inner column stands alone.  The rows are the
-- native plan's, and so is the ERROR where the written form overflows on
-- some pair (the executor's band guard then runs a nested loop): over
-- NULLs, duplicates, both orientations and the integer extremes, where the
-- rewritten bound overflows while the written form does not.
--
SET client_min_messages = warning;

CREATE TABLE band_r (id int, t int4, c int8, a int2, f float8, d date);
INSERT INTO band_r
SELECT g,
       CASE WHEN g % 37 = 0 THEN NULL ELSE (g * 7919) % 2000 END,
       CASE WHEN g % 41 = 0 THEN NULL ELSE (g * 7919) % 2000 + 5000000000 END,
       CASE WHEN g % 43 = 0 THEN NULL ELSE ((g * 7919) % 600)::int2 END,
       CASE WHEN g % 47 = 0 THEN NULL ELSE ((g * 7919) % 2000) / 4.0 END,
       date '2024-01-01' + (g * 7919) % 400
FROM generate_series(1, 500) g;
-- duplicates: every value of band_s three times
CREATE TABLE band_s (id int, t int4, c int8, a int2, f float8, d date);
INSERT INTO band_s
SELECT g,
       CASE WHEN g % 31 = 0 THEN NULL ELSE (g / 3 * 104729) % 2000 END,
       CASE WHEN g % 29 = 0 THEN NULL ELSE (g / 3 * 104729) % 2000 + 5000000000 END,
       CASE WHEN g % 23 = 0 THEN NULL ELSE ((g / 3 * 104729) % 600)::int2 END,
       CASE WHEN g % 19 = 0 THEN NULL ELSE ((g / 3 * 104729) % 2000) / 4.0 END,
       date '2024-01-01' + (g / 3 * 104729) % 400
FROM generate_series(1, 300) g;
ANALYZE band_r, band_s;

CREATE TABLE band_forms (n serial, q text);
INSERT INTO band_forms (q) VALUES
    -- int4, the forms of one band
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.t BETWEEN r.t - 12 AND r.t + 12'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON abs(r.t - s.t) <= 12'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.t - s.t BETWEEN -12 AND 12'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.t - r.t BETWEEN -12 AND 12'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.t - s.t > -13 AND r.t - s.t < 13'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.t <= s.t + 12 AND r.t >= s.t - 12'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.t >= r.t - 12 AND r.t + 12 >= s.t'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON 12 >= r.t - s.t AND -12 <= r.t - s.t'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.t - r.t <= 12 AND r.t - s.t <= 12'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.t + 12 >= r.t AND 12 + r.t >= s.t'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.t - s.t + 12 >= 0 AND 12 - r.t + s.t >= 0'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON -(r.t - s.t) <= 12 AND -s.t <= 12 - r.t'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.t::int8 - r.t BETWEEN -12 AND 12'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON abs(s.t - r.t) < 13'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON 12 >= abs(r.t + 3 - s.t)'),
    -- one-sided inequalities and an equality
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.t - s.t > 1990'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.t - r.t >= 1900'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.t - s.t = 9'),
    -- a radius from the outer row
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.t - s.t BETWEEN -r.a / 40 AND r.a / 40'),
    -- int8 and int2, and int4 against int8
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.c - s.c BETWEEN -12 AND 12'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.c + 12 >= r.c AND s.c - 12 <= r.c'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.a - s.a BETWEEN -3 AND 3'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.t + 5000000000 - s.c BETWEEN -12 AND 12'),
    -- the other orientation: the small side outer
    ('SELECT r.id, s.id FROM band_s r JOIN band_r s ON r.t - s.t BETWEEN -12 AND 12'),
    ('SELECT r.id, s.id FROM band_s r JOIN band_r s ON s.t - 12 <= r.t AND s.t + 12 >= r.t'),
    -- with a filter left over, and an outer join
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.t - s.t BETWEEN -12 AND 12 AND r.id < s.id'),
    ('SELECT r.id, s.id FROM band_r r LEFT JOIN band_s s ON r.t - s.t BETWEEN -12 AND 12'),
    -- the aggregate node over the same range
    ('SELECT count(*), sum(s.t) FROM band_r r JOIN band_s s ON r.t - s.t BETWEEN -12 AND 12'),
    ('SELECT r.t, count(*) FROM band_r r JOIN band_s s ON s.t + 12 >= r.t AND s.t - 12 <= r.t GROUP BY r.t');

-- GpuJoin's orientation: the outer side is the one scanned first
SELECT n, gj_plan_lines(q, 'Algorithm|Seq Scan') AS plan, gj_compare(q) AS result
FROM band_forms ORDER BY n;

-- not rewritten: float arithmetic rounds (a - b <= c is not a <= b + c), and
-- date - date stays as written; the rows are still the native plan's
SELECT gj_plan_lines(q, 'Algorithm') AS plan, gj_compare(q) AS result FROM (VALUES
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.f BETWEEN r.f - 3 AND r.f + 3'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.f - s.f BETWEEN -3 AND 3'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON s.d BETWEEN r.d - 3 AND r.d + 3'),
    ('SELECT r.id, s.id FROM band_r r JOIN band_s s ON r.d - s.d BETWEEN -3 AND 3')) v(q);

-- the extremes: int4 and int8 around their minimum and maximum, and NULLs
CREATE TABLE band_x (id int, t int4, c int8, a int2);
INSERT INTO band_x VALUES
    (1, 2147483647, 9223372036854775807, 32767),
    (2, 2147483640, 9223372036854775800, 32760),
    (3, 2147483600, 9223372036854775000, 32700),
    (4, -2147483648, -9223372036854775808, -32768),
    (5, -2147483641, -9223372036854775801, -32761),
    (6, 0, 0, 0),
    (7, NULL, NULL, NULL),
    (8, 2147483647, 9223372036854775807, 32767);
ANALYZE band_x;

-- the rewritten bound overflows (r.c + 12 past 2^63 - 1) where the written
-- form does not: those rows compare with every inner row, exactly
SELECT gj_plan_lines(q, 'Algorithm') AS plan, gj_compare(q) AS result FROM (VALUES
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.c - s.c BETWEEN -12 AND 12 WHERE r.c > 0 AND s.c > 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.c - s.c BETWEEN -12 AND 12 WHERE r.c < 0 AND s.c < 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON s.c - r.c <= 12 AND s.c - r.c >= -12 WHERE r.c < 0 AND s.c < 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON abs(s.c - r.c) <= 12 WHERE r.c > 0 AND s.c > 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.t - s.t BETWEEN -12 AND 12 WHERE r.t > 0 AND s.t > 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.t - s.t BETWEEN -12 AND 12 WHERE r.t < 0 AND s.t < 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.a - s.a BETWEEN -12 AND 12 WHERE r.a > 0 AND s.a > 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.t - s.t >= -100 WHERE r.t >= 0 AND s.t >= 0'),
    ('SELECT count(*), sum(s.id) FROM band_x r JOIN band_x s ON r.c - s.c BETWEEN -12 AND 12 WHERE r.c > 0 AND s.c > 0'),
    ('SELECT r.id, count(*) FROM band_x r JOIN band_x s ON s.c - r.c <= 12 AND s.c - r.c >= -12 WHERE r.c < 0 AND s.c < 0 GROUP BY r.id')) v(q);

-- the written form overflows on some pair: the native plan raises the
-- ERROR, and so does GpuJoin (its band guard runs a nested loop)
SELECT gj_compare_error(q) AS result FROM (VALUES
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.t - s.t BETWEEN -12 AND 12'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON s.t - r.t <= 12'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.c - s.c BETWEEN -12 AND 12'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.a - s.a BETWEEN -12 AND 12'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON s.t + 12 >= r.t WHERE r.t > 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON s.t - 12 <= r.t WHERE r.t < 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON -s.t <= 12 - r.t'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON s.c + 12 >= r.c AND s.c - 12 <= r.c WHERE r.c > 0 AND s.c > 0'),
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.t - s.t BETWEEN -12 AND 12 WHERE r.t > 0 AND s.id IN (4, 6)'),
    ('SELECT count(*) FROM band_x r JOIN band_x s ON r.t - s.t BETWEEN -12 AND 12'),
    -- the BETWEEN form's own bound overflows: the same ERROR
    ('SELECT r.id, s.id FROM band_x r JOIN band_x s ON s.t BETWEEN r.t - 12 AND r.t + 12')) v(q);

-- where no pair overflows the guard holds: EXPLAIN ANALYZE still says
-- sortmerge; where one might, the native plan's cheaper qual spares the
-- pairs, and so does GpuJoin's nested loop (EXPLAIN's reason still names
-- the abs() band, whichever form the guard came from)
BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT r.id, s.id FROM band_x r JOIN band_x s ON r.t - s.t BETWEEN -12 AND 12 WHERE r.t > 0 AND s.t > 0', true) AS line
WHERE line ~ 'Algorithm';
SELECT line FROM gj_explain('SELECT r.id, s.id FROM band_x r JOIN band_x s ON greatest(r.id, s.id) < 4 AND r.t - s.t BETWEEN -12 AND 12', true) AS line
WHERE line ~ 'Algorithm';
COMMIT;
SELECT gj_compare('SELECT r.id, s.id FROM band_x r JOIN band_x s ON greatest(r.id, s.id) < 4 AND r.t - s.t BETWEEN -12 AND 12') AS result;

-- spilled past gpujoin.max_host_memory: a guarded band is not spilled by
-- key range, whose chunk pairs of ranges that cannot meet are never opened
-- (the guard would not see the overflow between them)
CREATE TABLE band_big (id int, t int4);
INSERT INTO band_big SELECT g, g * 10 FROM generate_series(1, 20000) g;
INSERT INTO band_big VALUES (20001, 2147483647), (20002, -100);
ANALYZE band_big;
SET gpujoin.max_host_memory = '64kB';
SELECT gj_compare_error('SELECT count(*) FROM band_big r JOIN band_big s ON r.t - s.t BETWEEN -12 AND 12') AS result;
SELECT gj_compare_error('SELECT count(*) FROM band_big r JOIN band_big s ON abs(r.t - s.t) <= 12') AS result;
SELECT gj_compare('SELECT count(*) FROM band_big r JOIN band_big s ON r.t - s.t BETWEEN -12 AND 12 WHERE r.id <= 20000 AND s.id <= 20000') AS result;
RESET gpujoin.max_host_memory;

DROP TABLE band_r, band_s, band_x, band_forms, band_big;
