--
-- jointypes: LEFT, RIGHT, FULL, SEMI and ANTI joins run as GpuJoin and give
-- the native plan's answer, on every algorithm: NULL keys on both sides,
-- empty sides, nothing or everything matched, many tiles, rescans, quals in
-- ON versus WHERE, and NOT EXISTS versus NOT IN.  The backends only return
-- matching pairs; the executor keeps the match flags and emits unmatched
-- rows null-extended, so each case is checked against the native plan.
--
SET client_min_messages = warning;

-- r and s: NULL keys on both sides, duplicates, keys only one side has
CREATE TABLE jt_r AS
SELECT g AS id,
       CASE WHEN g % 11 = 0 THEN NULL ELSE (g * 7) % 50 END AS a,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 3) % 40 END AS b,
       (g % 9)::float8 AS f
FROM generate_series(1, 300) g;
CREATE TABLE jt_s AS
SELECT g AS id,
       CASE WHEN g % 7 = 0 THEN NULL ELSE (g * 11) % 60 + 20 END AS a,
       CASE WHEN g % 5 = 0 THEN NULL ELSE (g * 17) % 45 END AS b,
       g % 10 AS c
FROM generate_series(1, 250) g;
ANALYZE jt_r, jt_s;

-- The join type and algorithm of the first GpuJoin in a query's plan, as
-- "Left/hash", or 'native'.
CREATE FUNCTION jt_gpujoin_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    jtype text := 'Inner';
    seen boolean := false;
BEGIN
    PERFORM gj_force(true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line ~ 'Custom Scan \(GpuJoin\)' THEN
            seen := true;
        ELSIF seen AND line ~ 'Join Type: ' THEN
            jtype := regexp_replace(line, '^.*Join Type: ', '');
        ELSIF seen AND line ~ 'Algorithm: ' THEN
            RETURN jtype || '/' || regexp_replace(line, '^.*Algorithm: ', '');
        END IF;
    END LOOP;
    RETURN 'native';
END $$;

-- Run a query with each algorithm forced, and compare with the native plan;
-- say what GpuJoin ran (forcing an algorithm the condition does not allow
-- falls back, and the preserved side may be either input).
CREATE FUNCTION jt_each_algorithm(query text)
RETURNS TABLE (forced text, gpujoin text, result text) LANGUAGE plpgsql AS $$
BEGIN
    FOREACH forced IN ARRAY ARRAY['nestloop', 'sortmerge', 'hash'] LOOP
        PERFORM set_config('gpujoin.algorithm', forced, true);
        gpujoin := jt_gpujoin_of(query);
        result := gj_compare(query);
        RETURN NEXT;
    END LOOP;
    PERFORM set_config('gpujoin.algorithm', 'auto', true);
END $$;

-- each join type x algorithm: an equality plus a theta qual (hash can run it)
SELECT sql_join, (jt_each_algorithm(q)).*
FROM (VALUES
    ('left', 'SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a = s.a AND r.b <= s.b'),
    ('right', 'SELECT r.id, s.id FROM jt_s s RIGHT JOIN jt_r r ON r.a = s.a AND r.b <= s.b'),
    ('full', 'SELECT r.id, s.id FROM jt_r r FULL JOIN jt_s s ON r.a = s.a AND r.b <= s.b'),
    ('exists', 'SELECT r.id FROM jt_r r WHERE EXISTS (SELECT 1 FROM jt_s s WHERE r.a = s.a AND r.b <= s.b)'),
    ('not exists', 'SELECT r.id FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM jt_s s WHERE r.a = s.a AND r.b <= s.b)')
) AS v(sql_join, q);

-- each join type x algorithm: a band (hash falls back to sortmerge)
SELECT sql_join, (jt_each_algorithm(q)).*
FROM (VALUES
    ('left', 'SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON s.a BETWEEN r.a - 1 AND r.a + 1'),
    ('right', 'SELECT r.id, s.id FROM jt_r r RIGHT JOIN jt_s s ON s.a BETWEEN r.a - 1 AND r.a + 1'),
    ('exists', 'SELECT r.id FROM jt_r r WHERE EXISTS (SELECT 1 FROM jt_s s WHERE s.a BETWEEN r.a - 1 AND r.a + 1)'),
    ('not exists', 'SELECT r.id FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM jt_s s WHERE s.a BETWEEN r.a - 1 AND r.a + 1)')
) AS v(sql_join, q);

-- the preserved side as the hook's outer side (Left) and as its inner side
-- (Right): GpuJoin takes whichever costs less, so choose the sizes
SELECT q, (jt_each_algorithm(q)).*
FROM (VALUES
    ('SELECT x.id, y.id FROM t_one x LEFT JOIN jt_r y ON x.b = y.b AND x.f8 < y.f'),
    ('SELECT x.id, y.id FROM jt_r x LEFT JOIN t_one y ON x.b = y.b AND x.f > y.f8')
) AS v(q);

-- whole-row Vars of the nullable side are NULL, not a row of NULLs
SELECT gj_compare('SELECT r.id, s FROM jt_r r LEFT JOIN jt_s s ON r.a = s.a AND r.b < s.b') AS result;
SELECT gj_compare('SELECT r, s FROM jt_r r FULL JOIN jt_s s ON r.a = s.a AND r.b < s.b') AS result;
SELECT gj_compare('SELECT r.id, s.id, s IS NULL AS all_null FROM jt_r r LEFT JOIN jt_s s ON r.a > s.a + 25') AS result;

-- a FULL JOIN with no hash- or merge-joinable condition is an ERROR in
-- PostgreSQL; GpuJoin runs it where the device evaluates a qual linking the
-- sides (full_theta.sql), and the ERROR stays where it cannot
SELECT gj_compare_error('SELECT r.id, s.id FROM jt_r r FULL JOIN jt_s s ON r.a::text < s.a::text') AS result;
SELECT jt_gpujoin_of('SELECT r.id, s.id FROM jt_r r FULL JOIN jt_s s ON s.a BETWEEN r.a - 1 AND r.a + 1') AS full_band;
SELECT jt_gpujoin_of('SELECT r.id, s.id FROM jt_r r FULL JOIN jt_s s ON r.a = s.a AND r.b <= s.b') AS full_with_equality;

-- empty sides: every preserved row comes back, or none
SELECT q, gj_compare(q) AS result
FROM (VALUES
    ('SELECT r.id, e.id FROM jt_r r LEFT JOIN t_empty e ON r.a < e.b'),
    ('SELECT r.id, e.id FROM t_empty e LEFT JOIN jt_r r ON r.a < e.b'),
    ('SELECT r.id, e.id FROM jt_r r RIGHT JOIN t_empty e ON r.a < e.b'),
    ('SELECT r.id, e.id FROM t_empty e RIGHT JOIN jt_r r ON r.a < e.b'),
    ('SELECT r.id, e.id FROM jt_r r FULL JOIN t_empty e ON r.a = e.b'),
    ('SELECT r.id, e.id FROM t_empty e FULL JOIN jt_r r ON r.a = e.b'),
    ('SELECT r.id FROM jt_r r WHERE EXISTS (SELECT 1 FROM t_empty e WHERE r.a < e.b)'),
    ('SELECT r.id FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM t_empty e WHERE r.a < e.b)'),
    ('SELECT e.id FROM t_empty e WHERE NOT EXISTS (SELECT 1 FROM jt_r r WHERE r.a < e.b)')
) AS v(q)
ORDER BY q;

-- nothing matches, everything matches
SELECT q, gj_compare(q) AS result
FROM (VALUES
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a > s.a + 1000'),
    ('SELECT r.id, s.id FROM jt_r r RIGHT JOIN jt_s s ON r.a > s.a + 1000'),
    ('SELECT r.id, s.id FROM jt_r r FULL JOIN jt_s s ON r.a = s.a + 1000'),
    ('SELECT r.id FROM jt_r r WHERE EXISTS (SELECT 1 FROM jt_s s WHERE r.a > s.a + 1000)'),
    ('SELECT r.id FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM jt_s s WHERE r.a > s.a + 1000)'),
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.id > s.id - 1000'),
    ('SELECT r.id, s.id FROM jt_r r RIGHT JOIN jt_s s ON r.id > s.id - 1000'),
    ('SELECT r.id, s.id FROM jt_r r FULL JOIN jt_s s ON r.id % 1 = s.id % 1'),
    ('SELECT r.id FROM jt_r r WHERE EXISTS (SELECT 1 FROM jt_s s WHERE r.id > s.id - 1000)'),
    ('SELECT r.id FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM jt_s s WHERE r.id > s.id - 1000)')
) AS v(q)
ORDER BY q;

-- quals in ON decide matching; quals in WHERE filter the joined rows
SELECT q, jt_gpujoin_of(q) AS gpujoin, gj_compare(q) AS result
FROM (VALUES
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a < s.a AND s.c > 5'),
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a < s.a WHERE s.c > 5'),
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a < s.a WHERE s.c IS NULL'),
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a < s.a WHERE s.a IS NULL'),
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a < s.a AND r.b > 30'),
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a < s.a WHERE coalesce(s.c, -1) < 2'),
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a < s.a AND r.id::text < s.id::text'),
    ('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a = s.a WHERE coalesce(s.b, r.b) > 20'),
    ('SELECT r.id, s.id FROM jt_r r FULL JOIN jt_s s ON r.a = s.a AND r.b < 10 AND s.c < 5'),
    ('SELECT r.id, s.id FROM jt_r r FULL JOIN jt_s s ON r.a = s.a WHERE coalesce(r.b, 0) + coalesce(s.b, 0) > 40'),
    ('SELECT r.id FROM jt_r r WHERE EXISTS (SELECT 1 FROM jt_s s WHERE r.a < s.a AND s.c = r.id % 10 AND r.f > 2)')
) AS v(q)
ORDER BY q;

-- the filter sees the null-extended row: show the rows themselves once
-- (s.a is at least 20, so exactly the rows with r.a <= 25 or NULL match
-- nothing), and the counters of EXPLAIN ANALYZE
BEGIN;
SELECT gj_force(true);
SELECT * FROM gj_explain('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a > s.a + 5 WHERE s.c IS NULL AND r.id < 60');
SELECT r.id, r.a, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a > s.a + 5 WHERE s.c IS NULL AND r.id < 60 ORDER BY r.id;
SELECT * FROM gj_explain('SELECT r.id, s.id FROM jt_r r LEFT JOIN jt_s s ON r.a > s.a + 5 WHERE s.c IS NULL AND r.id < 60', true);
SELECT * FROM gj_explain('SELECT r.id, s.id FROM jt_r r FULL JOIN jt_s s ON r.a = s.a WHERE coalesce(r.b, 0) + coalesce(s.b, 0) > 40', true);
SELECT * FROM gj_explain('SELECT r.id FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM jt_s s WHERE s.a > r.a + 20)', true);
COMMIT;

-- expressions of the nullable side computed below the join become
-- PlaceHolderVars: GpuJoin declines those, the results stay right
SELECT q, jt_gpujoin_of(q) AS gpujoin, gj_compare(q) AS result
FROM (VALUES
    ('SELECT r.id, ss.k FROM jt_r r LEFT JOIN (SELECT s.a, 42 AS k FROM jt_s s) ss ON r.a < ss.a'),
    ('SELECT r.id, ss.a1 FROM jt_r r LEFT JOIN (SELECT s.a + 1 AS a1 FROM jt_s s) ss ON r.a < ss.a1'),
    ('SELECT r.id, ss.a1 FROM jt_r r LEFT JOIN (SELECT s.a, s.a + 1 AS a1 FROM jt_s s) ss ON r.a < ss.a')
) AS v(q)
ORDER BY q;

-- NOT EXISTS returns the rows whose key is NULL (they match nothing); NOT IN
-- is no anti join in PostgreSQL 15: a NULL in the subquery empties it, and a
-- NULL key on the left is never returned
SELECT q, jt_gpujoin_of(q) AS gpujoin, gj_compare(q) AS result
FROM (VALUES
    ('SELECT r.id FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM jt_s s WHERE s.a = r.a)'),
    ('SELECT r.id FROM jt_r r WHERE r.a NOT IN (SELECT s.a FROM jt_s s)'),
    ('SELECT r.id FROM jt_r r WHERE r.a NOT IN (SELECT s.a FROM jt_s s WHERE s.a IS NOT NULL)'),
    ('SELECT r.id FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM jt_s s WHERE s.a > r.a + 20)'),
    ('SELECT r.id FROM jt_r r WHERE r.a IN (SELECT s.a - 20 FROM jt_s s)'),
    ('SELECT r.id FROM jt_r r WHERE EXISTS (SELECT 1 FROM jt_s s WHERE s.a = r.a)')
) AS v(q)
ORDER BY q;
SELECT count(*) AS not_exists FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM jt_s s WHERE s.a = r.a);
SELECT count(*) AS not_in FROM jt_r r WHERE r.a NOT IN (SELECT s.a FROM jt_s s);
SELECT count(*) AS not_in_without_nulls FROM jt_r r WHERE r.a NOT IN (SELECT s.a FROM jt_s s WHERE s.a IS NOT NULL);

-- pairs the device cannot decide (an overflow) are rechecked by the host
-- with all join quals, in PostgreSQL's order, and set the match flags
SELECT gj_compare('SELECT x.id, y.id FROM t_int x LEFT JOIN t_int y
    ON (y.id > 240 OR x.b + y.b > 40) AND x.id <= 240') AS result;
SELECT gj_compare_error('SELECT x.id, y.id FROM t_int x LEFT JOIN t_int y ON x.b + y.b > 40') AS result;

-- many tiles: a semi join emits an outer row once, however many tiles match
CREATE TABLE jt_big AS
SELECT g AS id, CASE WHEN g % 31 = 0 THEN NULL ELSE (g * 7919) % 400 END AS k
FROM generate_series(1, 1200) g;
ANALYZE jt_big;
SET gpujoin.device_memory = '1kB';
-- tiles of the whole sorted sides here, not device partitions (partitions.sql)
SET gpujoin.device_partitions = off;
SELECT q, (jt_each_algorithm(q)).*
FROM (VALUES
    ('SELECT x.id, y.id FROM jt_big x LEFT JOIN jt_r y ON x.k = y.a * 9'),
    ('SELECT x.id, y.id FROM jt_r x RIGHT JOIN jt_big y ON x.a * 9 = y.k'),
    ('SELECT x.id, y.id FROM jt_big x FULL JOIN jt_r y ON x.k = y.a * 9'),
    ('SELECT x.id FROM jt_big x WHERE EXISTS (SELECT 1 FROM jt_big y WHERE y.k = x.k AND y.id < x.id)'),
    ('SELECT x.id FROM jt_big x WHERE NOT EXISTS (SELECT 1 FROM jt_big y WHERE y.k = x.k AND y.id < x.id)')
) AS v(q)
ORDER BY q;
BEGIN;
SELECT gj_force(true);
SELECT line FROM gj_explain('SELECT count(*) FROM jt_big x WHERE EXISTS (SELECT 1 FROM jt_big y WHERE y.k < x.k + 1 AND y.k > x.k - 1)', true) AS line
WHERE line ~ '(GpuJoin|Join Type|Tiles Run|Device Matches|Pairs Skipped)';
SELECT line FROM gj_explain('SELECT count(*) FROM jt_big x LEFT JOIN jt_r y ON x.k = y.a * 9', true) AS line
WHERE line ~ '(GpuJoin|Join Type|Tiles Run|Null-Extended)';
SELECT count(*) AS semi_many_tiles FROM jt_big x WHERE EXISTS (SELECT 1 FROM jt_big y WHERE y.k < x.k + 1 AND y.k > x.k - 1);
COMMIT;
SELECT count(*) AS semi_native FROM jt_big x WHERE EXISTS (SELECT 1 FROM jt_big y WHERE y.k = x.k);
RESET gpujoin.device_memory;
RESET gpujoin.device_partitions;

-- rescans: the match flags start over each time
SELECT q, gj_compare(q) AS result
FROM (VALUES
    -- the parameter reaches a host qual of the join
    ('SELECT o.id, (SELECT count(*) FROM jt_r r LEFT JOIN jt_s s ON r.a = s.a AND r.id + o.id < s.id * 2 WHERE r.id < 50) AS n FROM jt_r o WHERE o.id <= 30'),
    -- the parameter reaches the nullable side: it is drained again
    ('SELECT o.id, (SELECT count(s.id) FROM jt_r r LEFT JOIN (SELECT * FROM jt_s WHERE c < o.id % 10) s ON r.a < s.a) AS n FROM jt_r o WHERE o.id <= 30'),
    -- ... and the preserved side
    ('SELECT o.id, (SELECT count(*) FROM (SELECT * FROM jt_r WHERE id < o.id) r LEFT JOIN jt_s s ON r.a > s.a) AS n FROM jt_r o WHERE o.id <= 30'),
    ('SELECT o.id, (SELECT count(*) FROM jt_r r FULL JOIN (SELECT * FROM jt_s WHERE c < o.id % 10) s ON r.a = s.a) AS n FROM jt_r o WHERE o.id <= 30'),
    ('SELECT o.id, (SELECT count(*) FROM jt_r r WHERE r.id < o.id AND EXISTS (SELECT 1 FROM jt_s s WHERE s.a BETWEEN r.a AND r.a + 1)) AS n FROM jt_r o WHERE o.id <= 30'),
    ('SELECT o.id, (SELECT count(*) FROM jt_r r WHERE NOT EXISTS (SELECT 1 FROM jt_s s WHERE s.a > r.a AND s.c < o.id % 10)) AS n FROM jt_r o WHERE o.id <= 30')
) AS v(q)
ORDER BY q;

-- an outer GpuJoin as the inner side of a native nested loop
BEGIN;
SELECT gj_force(true);
SET LOCAL enable_nestloop = on;
SET LOCAL enable_material = off;
SELECT count(*), count(s.id), sum(r.id) FROM t_one z
JOIN (jt_r r LEFT JOIN jt_s s ON r.a > s.a) ON z.b < r.id + coalesce(s.id, 0) * 0;
COMMIT;
SELECT count(*), count(s.id), sum(r.id) FROM t_one z
JOIN (jt_r r LEFT JOIN jt_s s ON r.a > s.a) ON z.b < r.id + coalesce(s.id, 0) * 0;

--
-- Cases of PostgreSQL's own join regression suite (join.sql) in scope,
-- rewritten over a tenk1-like table.
--
CREATE TABLE jt_tenk AS
SELECT g AS unique1, (g * 7919) % 1000 AS unique2, g % 2 AS two, g % 10 AS ten,
       g % 100 AS hundred, (g * 31) % 1000 AS thousand, g % 1000 AS tenthous
FROM generate_series(0, 999) g;
CREATE TABLE jt_int4 (f1 int4);
INSERT INTO jt_int4 VALUES (0), (123456), (-123456), (2147483647), (-2147483647), (NULL), (7);
ANALYZE jt_tenk, jt_int4;

SELECT q, gj_compare(q) AS result
FROM (VALUES
    -- a left join whose WHERE clause tests both sides, with IS NULL
    ('SELECT a.unique1, b.unique1 FROM jt_tenk a LEFT JOIN jt_tenk b ON a.unique2 = b.tenthous
      WHERE a.unique1 < 42 AND ((b.unique2 IS NULL AND a.ten = 2) OR b.hundred = 3)'),
    -- a left join reduced to an anti join
    ('SELECT a.f1 FROM jt_int4 a LEFT JOIN jt_tenk b ON a.f1 = b.unique2 WHERE b.unique2 IS NULL'),
    -- a left join over an inner join, the ON clause referencing both
    ('SELECT t1.unique1, t2.unique1, t3.unique1 FROM jt_tenk t1
      LEFT JOIN (jt_tenk t2 JOIN jt_tenk t3 ON t2.thousand = t3.unique2)
      ON t1.hundred = t2.hundred AND t1.ten = t3.ten WHERE t1.unique1 < 3'),
    -- IN over a join
    ('SELECT count(*) FROM jt_tenk a WHERE unique1 IN
      (SELECT b.unique1 FROM jt_tenk b JOIN jt_tenk c USING (unique1) WHERE b.unique2 < 42)'),
    -- FULL JOIN USING: merged columns
    ('SELECT * FROM (SELECT unique2 AS k, ten FROM jt_tenk WHERE unique1 < 20) a
      FULL JOIN (SELECT thousand AS k, hundred FROM jt_tenk WHERE unique1 >= 990) b USING (k)'),
    -- nested outer joins
    ('SELECT a.f1, b.unique1, c.unique1 FROM jt_int4 a
      LEFT JOIN jt_tenk b ON a.f1 = b.unique2
      LEFT JOIN jt_tenk c ON b.unique1 < c.ten'),
    -- an anti join with a theta condition
    ('SELECT a.unique1 FROM jt_tenk a WHERE NOT EXISTS
      (SELECT 1 FROM jt_tenk b WHERE b.hundred = a.ten AND b.thousand > a.unique2)')
) AS v(q);

-- the order of the quals: a native FULL hash join tests every hash-joinable
-- equality (r.i4 = s.f8 too) before the other quals, so the overflow in the
-- last qual never happens natively; GpuJoin tests them first as well
CREATE TABLE jt_qo_r AS SELECT g AS id, g % 5 AS k, g AS i4, g::float8 + 0.5 AS f8 FROM generate_series(1, 60) g;
CREATE TABLE jt_qo_s AS
SELECT g AS id, g % 5 AS k, CASE WHEN g % 7 = 0 THEN 2147483647 ELSE g END AS i4, g::float8 AS f8
FROM generate_series(1, 60) g;
ANALYZE jt_qo_r, jt_qo_s;
SELECT gj_compare('SELECT r.id, s.id FROM jt_qo_r r FULL JOIN jt_qo_s s ON r.k = s.k AND (r.f8 = s.i4 AND s.i4 + 1 > r.i4)') AS full_join;
SELECT gj_compare('SELECT r.id, s.id FROM jt_qo_r r JOIN jt_qo_s s ON r.k = s.k AND r.f8 = s.i4 AND s.i4 + 1 > r.i4') AS inner_join;
DROP TABLE jt_qo_r, jt_qo_s;
