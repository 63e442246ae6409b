--
-- emit: every way a joined row comes out gives PostgreSQL's rows.  A pair's
-- output row is filled straight from the stored columns when the target
-- list is plain columns and nothing is evaluated on the host; otherwise the
-- scan tuple is formed and projected.  Columns that only the device quals
-- read are filled only for pairs the device sends back for a recheck, and a
-- column without NULLs is read without its null flags.
--
SET client_min_messages = warning;
-- the join returns its rows even under an aggregate (aggregates.sql tests
-- aggregates computed in the join)
SET gpujoin.enable_aggregate = off;

CREATE TABLE emit_l (id int, k int, t text, n numeric, nulls text, z int);
INSERT INTO emit_l
SELECT g, g % 40, CASE WHEN g % 7 = 0 THEN NULL ELSE repeat('l', g % 5) || g END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g / 3.0 END, NULL, 0
FROM generate_series(1, 300) g;
CREATE TABLE emit_r (id int, k int, t text, w float8);
INSERT INTO emit_r
SELECT g, g % 50, 'r' || g, CASE WHEN g % 9 = 0 THEN NULL ELSE g * 0.5 END
FROM generate_series(1, 200) g;
ANALYZE emit_l, emit_r;

SELECT q, gj_compare(q) AS result
FROM (VALUES
    -- direct output: plain columns of both sides, by value and by
    -- reference, with and without NULLs, permuted and repeated
    ('SELECT l.id, r.id FROM emit_l l JOIN emit_r r ON l.k = r.k'),
    ('SELECT r.w, l.t, l.n, l.nulls, r.t, l.z FROM emit_l l JOIN emit_r r ON l.k = r.k'),
    ('SELECT r.id, l.id, r.id, l.t, l.t FROM emit_l l JOIN emit_r r ON l.k < r.k - 45'),
    ('SELECT count(*) FROM emit_l l JOIN emit_r r ON l.k = r.k'),
    ('SELECT sum(l.n * r.w::numeric), count(l.t), count(r.w) FROM emit_l l JOIN emit_r r ON l.k = r.k'),
    ('SELECT l.* FROM emit_l l WHERE EXISTS (SELECT 1 FROM emit_r r WHERE r.k = l.k + 20)'),
    ('SELECT l.* FROM emit_l l WHERE NOT EXISTS (SELECT 1 FROM emit_r r WHERE r.k = l.k + 20)'),
    ('SELECT l.id, r.t FROM emit_l l LEFT JOIN emit_r r ON l.k = r.k AND r.w > 40'),
    ('SELECT l.t, r.id FROM emit_l l RIGHT JOIN emit_r r ON l.k = r.k'),
    ('SELECT l.id, r.id, l.t FROM emit_l l FULL JOIN emit_r r ON l.k = r.k + 30'),
    -- projected: expressions, a host qual, a filter
    ('SELECT l.id + r.id, upper(l.t), r.w * 2 FROM emit_l l JOIN emit_r r ON l.k = r.k'),
    ('SELECT l.id, r.id FROM emit_l l JOIN emit_r r ON l.k = r.k AND l.t < r.t'),
    ('SELECT l.id, r.t FROM emit_l l LEFT JOIN emit_r r ON l.k = r.k WHERE r.w IS NULL OR r.w > 50')
) AS v(q)
ORDER BY q;

-- pairs the device sends back for a recheck read columns that only the
-- device quals use (x.b, y.b), whether the output is direct or projected
SELECT q, gj_compare(q) AS result
FROM (VALUES
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON (y.id > 240 OR x.b + y.b > 40) AND x.id <= 240'),
    ('SELECT count(*) FROM t_int x JOIN t_int y ON (y.id > 240 OR x.b + y.b > 40) AND x.id <= 240'),
    ('SELECT x.id * 1000 + y.id FROM t_int x JOIN t_int y ON (y.id > 240 OR x.b + y.b > 40) AND x.id <= 240')
) AS v(q)
ORDER BY q;
SELECT bool_or(line ~ 'GpuJoin') AS gpujoin, bool_or(line ~ 'Host Rechecks: [1-9]') AS rechecked
FROM gj_explain('SELECT count(*) FROM t_int x JOIN t_int y
    ON (y.id > 240 OR x.b + y.b > 40) AND x.id <= 240', true) AS line;

-- a rescan (the inner side of a nested loop over a parameter) resolves the
-- stored columns again
BEGIN;
SELECT gj_force(true);
SELECT gj_uses_gpujoin('SELECT o.id, (SELECT count(*) FROM emit_l l JOIN emit_r r
    ON l.k = r.k AND l.id <= o.id * 10) FROM generate_series(1, 4) o(id)') AS uses_gpujoin;
SELECT o.id, (SELECT count(*) || ':' || max(l.t) || ':' || max(r.t)
              FROM emit_l l JOIN emit_r r ON l.k = r.k AND l.id <= o.id * 10) AS c
FROM generate_series(1, 4) o(id);
ROLLBACK;
SELECT o.id, (SELECT count(*) || ':' || max(l.t) || ':' || max(r.t)
              FROM emit_l l JOIN emit_r r ON l.k = r.k AND l.id <= o.id * 10) AS c
FROM generate_series(1, 4) o(id);

DROP TABLE emit_l, emit_r;
RESET gpujoin.enable_aggregate;
