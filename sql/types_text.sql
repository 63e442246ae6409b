--
-- types_text: equality joins on text, varchar, bpchar (char(n)), uuid and
-- bytea.  The host hashes each key value while it drains the input, with
-- PostgreSQL's own hash function for the type and the operator's collation;
-- the device compares the 64-bit hashes; the host evaluates the equality
-- itself on every pair the device returns, so the qual is both a device and
-- a host qual.  Each line is one join run with GpuJoin and natively; "N rows,
-- GpuJoin" means both gave the same N rows and GpuJoin was in the plan.
--
SET client_min_messages = warning;

-- NULLs, empty strings, trailing spaces, case differences, duplicates, one
-- hot key, long (compressed) values that differ only at their end.
CREATE TABLE t_txt (id int PRIMARY KEY, t text, v varchar(12), c char(5), u uuid, b bytea,
                    a int4, z int4);
INSERT INTO t_txt
SELECT g,
       CASE WHEN g % 11 = 0 THEN NULL ELSE 'k' || (g * 7) % 37 END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE 'k' || (g * 5) % 41 END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE 'k' || (g * 3) % 29 END,
       CASE WHEN g % 19 = 0 THEN NULL
            ELSE ('00000000-0000-0000-0000-' || lpad(((g * 11) % 43)::text, 12, '0'))::uuid END,
       CASE WHEN g % 23 = 0 THEN NULL ELSE decode(lpad(to_hex((g * 13) % 47), 4, '0'), 'hex') END,
       g % 7, 0
FROM generate_series(1, 300) g;
INSERT INTO t_txt VALUES
    (301, '', '', '', '00000000-0000-0000-0000-000000000000', '', 1, 0),
    (302, '', '', ' ', NULL, '\x00', 2, 0),
    (303, 'ab', 'ab', 'ab', NULL, '\x0000', 3, 0),
    (304, 'ab ', 'ab ', 'ab ', NULL, '\x00', 4, 0),
    (305, 'ab  ', 'ab  ', 'ab  ', NULL, NULL, 5, 0),
    (306, 'a', 'a', 'a', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '\xff', 6, 0),
    (307, 'A', 'A', 'A', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '\xFF', 0, 0),
    (308, repeat('xy', 3000) || 'a', NULL, NULL, NULL, decode(repeat('ab', 3000) || '01', 'hex'), 1, 0),
    (309, repeat('xy', 3000) || 'b', NULL, NULL, NULL, decode(repeat('ab', 3000) || '02', 'hex'), 2, 0),
    (310, repeat('xy', 3000) || 'a', NULL, NULL, NULL, decode(repeat('ab', 3000) || '01', 'hex'), 3, 0);
-- one hot key
INSERT INTO t_txt
SELECT 400 + g, 'hot', 'hot', 'hot', 'aaaaaaaa-0000-0000-0000-000000000001', '\x686f74', g % 5, 0
FROM generate_series(1, 60) g;
CREATE TABLE t_txt_empty (LIKE t_txt);
ANALYZE t_txt, t_txt_empty;

-- same-type equality, each column
SELECT col, gj_compare(format('SELECT x.id AS xid, y.id AS yid FROM t_txt x JOIN t_txt y ON x.%I = y.%I',
                              col, col)) AS result
FROM unnest(ARRAY['t', 'v', 'c', 'u', 'b']) AS col
ORDER BY col;

-- case and trailing spaces, with GpuJoin: 'a' <> 'A' in every deterministic
-- collation; char(n) ignores trailing spaces, text and varchar do not
BEGIN;
SELECT gj_force(true);
SELECT gj_uses_gpujoin('SELECT * FROM t_txt x JOIN t_txt y ON x.t = y.t') AS text_gpujoin,
       gj_uses_gpujoin('SELECT * FROM t_txt x JOIN t_txt y ON x.c = y.c') AS char_gpujoin;
SELECT x.id, left(x.t, 6) AS t, length(x.t) AS len, y.id
FROM t_txt x JOIN t_txt y ON x.t = y.t
WHERE x.id BETWEEN 301 AND 310 ORDER BY x.id, y.id;
SELECT x.id, x.c, y.id, y.c FROM t_txt x JOIN t_txt y ON x.c = y.c
WHERE x.id BETWEEN 301 AND 310 ORDER BY x.id, y.id;
SELECT x.id, x.v, y.id, y.c FROM t_txt x JOIN t_txt y ON x.v::bpchar = y.c
WHERE x.id BETWEEN 301 AND 310 ORDER BY x.id, y.id;
SELECT x.id, y.id, x.u, x.b FROM t_txt x JOIN t_txt y ON x.u = y.u AND x.b = y.b
WHERE x.id BETWEEN 301 AND 310 ORDER BY x.id, y.id;
SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.b = y.b
WHERE x.id BETWEEN 301 AND 310 ORDER BY x.id, y.id;
ROLLBACK;

-- across types: varchar against text (a relabel: text's equality), varchar
-- cast to char(n) (bpchar's equality, trailing spaces ignored), and explicit
-- collations
SELECT q, gj_compare(q) AS result FROM (VALUES
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.v = y.t'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.v::text'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.c = y.v::bpchar'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.v::bpchar = y.t::bpchar'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.t COLLATE "C"'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t COLLATE "POSIX" = y.v'),
    -- char(n) cast to text is a function (rtrim): a host qual, no device qual
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.c::text = y.t'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.c::text = y.t AND x.a = y.a')
) AS c(q);

-- mixed with other device quals: a theta filter, several keys, an OR
SELECT q, gj_compare(q) AS result FROM (VALUES
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.t AND x.a < y.a'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.t AND x.a = y.a'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.u = y.u AND x.b = y.b AND x.c = y.c'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.t AND x.v = y.v'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.t AND x.t <> y.v'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.a = y.a AND (x.t = y.t OR x.v = y.v)'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.a < y.a AND NOT (x.t = y.t)')
) AS c(q);

-- every algorithm, every join type, one tile and many tiles
CREATE TEMP TABLE txt_queries (q text);
INSERT INTO txt_queries VALUES
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.t'),
    ('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.c = y.c AND x.a <= y.a'),
    ('SELECT x.id, y.id FROM t_txt x LEFT JOIN t_txt y ON x.v = y.v AND x.a < y.a'),
    ('SELECT x.id, y.id FROM t_txt x RIGHT JOIN t_txt y ON x.u = y.u'),
    ('SELECT x.id, y.id FROM t_txt x FULL JOIN t_txt y ON x.b = y.b AND x.a > y.a'),
    ('SELECT x.id FROM t_txt x WHERE EXISTS (SELECT FROM t_txt y WHERE y.t = x.v AND y.a > x.a)'),
    ('SELECT x.id FROM t_txt x WHERE NOT EXISTS (SELECT FROM t_txt y WHERE y.c = x.c AND y.a > x.a)'),
    ('SELECT x.id, y.id FROM t_txt x LEFT JOIN t_txt_empty y ON x.t = y.t'),
    ('SELECT x.id FROM t_txt x WHERE NOT EXISTS (SELECT FROM t_txt_empty y WHERE y.u = x.u)'),
    ('SELECT count(*), sum(x.a) FROM t_txt x JOIN t_txt y ON x.t = y.t');
SELECT algo, mem, q, gj_compare(q) AS result
FROM unnest(ARRAY['hash', 'sortmerge', 'nestloop']) AS algo,
     unnest(ARRAY['0', '1kB']) AS mem,
     txt_queries,
     LATERAL (SELECT set_config('gpujoin.algorithm', algo, false),
                     set_config('gpujoin.device_memory', mem, false)) AS s
ORDER BY algo, mem, q;
RESET gpujoin.algorithm;
RESET gpujoin.device_memory;

-- rescans: the hashed key columns are filled again from a side drained again
SELECT gj_compare('
    SELECT o.id, (SELECT count(*) FROM (SELECT * FROM t_txt WHERE a > o.a) x
                  JOIN t_txt y ON x.t = y.t AND x.c = y.c) AS n
    FROM t_txt o WHERE o.id % 10 = 1') AS result;
SELECT gj_compare('
    SELECT o.id, (SELECT count(*) FROM t_txt x JOIN t_txt y ON x.u = y.u
                  WHERE x.b = o.b) AS n
    FROM t_txt o WHERE o.id % 10 = 2') AS result;

-- errors: a qual next to the equality is evaluated only on pairs whose keys
-- are equal, as in PostgreSQL's hash join (no such pair in the first query:
-- no error; the second raises PostgreSQL's error)
SELECT gj_compare_error('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.t AND x.a / y.z > 0 WHERE x.id > 400 AND y.id < 400');
SELECT gj_compare_error('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.t AND x.a / y.z > 0');

-- EXPLAIN: the equality is a device qual (on the hashes) and a host qual
BEGIN;
SELECT gj_force(true);
SELECT gj_explain('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.t = y.t AND x.a < y.a');
SET LOCAL gpujoin.algorithm = sortmerge;
SELECT gj_explain('SELECT x.id, y.id FROM t_txt x JOIN t_txt y ON x.u = y.u', true);
SET LOCAL gpujoin.algorithm = nestloop;
SELECT gj_explain('SELECT x.id FROM t_txt x WHERE EXISTS (SELECT FROM t_txt y WHERE y.b = x.b)');
ROLLBACK;

DROP TABLE t_txt, t_txt_empty;
