--
-- page_decoder: the columnar heap reader decodes a page's visible tuples
-- with the page decoder (src/kernels/shared/gj_page_decode.h), the code a
-- device will run on raw pages.  Each query gives the native plan's answer
-- with the decoder on and off (off: the reader deforms each tuple itself),
-- on tables whose tuples take every path of the decoder: NULLs in the
-- needed attributes and in those before them (bitmaps of one byte and of
-- several), variable-width values before the keys (1-byte and 4-byte
-- headers, compressed and out-of-line TOAST pointers), columns added with
-- and without a default (missing values, by value and by reference), a
-- dropped column, HOT chains and deleted rows before VACUUM (redirect and
-- dead line pointers) and after it (all-visible pages), and every
-- fixed-width type the buffers hold by value or by reference.
--
SET client_min_messages = warning;

-- the decoder on and off against the native plan
CREATE FUNCTION pd_compare(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    on_result text;
    off_result text;
BEGIN
    PERFORM set_config('gpujoin.page_decoder', 'on', true);
    on_result := gj_compare(query);
    PERFORM set_config('gpujoin.page_decoder', 'off', true);
    off_result := gj_compare(query);
    PERFORM set_config('gpujoin.page_decoder', 'on', true);
    IF on_result = off_result THEN
        RETURN on_result;
    END IF;
    RETURN format('on: %s, off: %s', on_result, off_result);
END $$;

-- the input lines of EXPLAIN ANALYZE, pages masked
CREATE FUNCTION pd_inputs(query text) RETURNS text LANGUAGE sql AS $$
    SELECT regexp_replace(gj_plan_lines(query, '(Outer|Inner) Input', ' | ',
                                        'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF'),
                          '[0-9]+ pages', 'N pages', 'g')
$$;

-- the other side of the joins below
CREATE TABLE pd_small (k int4, tag int4);
INSERT INTO pd_small SELECT g, g * 10 FROM generate_series(0, 59) g;
ANALYZE pd_small;

-- NULLs before and in the needed attributes, of every fixed-width type
CREATE TABLE pd_nulls (i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, d date,
                       ts timestamp, tz timestamptz, b bool, ch "char", k int4);
INSERT INTO pd_nulls
SELECT CASE WHEN g % 3 = 0 THEN NULL ELSE (g % 200 - 100)::int2 END,
       CASE WHEN g % 5 = 0 THEN NULL ELSE -g END,
       CASE WHEN g % 7 = 0 THEN NULL ELSE g::int8 * -100000000000 END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g / -7.0 END,
       CASE WHEN g % 13 = 0 THEN NULL WHEN g % 17 = 0 THEN '-Infinity' ELSE g * -0.5 END,
       CASE WHEN g % 4 = 0 THEN NULL ELSE date '2000-01-01' - g END,
       CASE WHEN g % 6 = 0 THEN NULL ELSE timestamp '1990-06-01' - g * interval '1 hour' END,
       CASE WHEN g % 8 = 0 THEN NULL ELSE timestamptz '2020-01-01 UTC' + g * interval '1 min' END,
       CASE WHEN g % 9 = 0 THEN NULL ELSE g % 2 = 0 END,
       CASE WHEN g % 10 = 0 THEN NULL ELSE chr(60 + g % 60)::"char" END,
       CASE WHEN g % 19 = 0 THEN NULL ELSE g % 60 END
FROM generate_series(1, 5000) g;
-- a row without NULLs now and then: some tuples at fixed offsets
INSERT INTO pd_nulls SELECT -1, g, g, 1, 1, '2001-01-01', '2001-01-01', '2001-01-01', true, 'x', g % 60
FROM generate_series(1, 500) g;
VACUUM ANALYZE pd_nulls;

SELECT pd_compare('SELECT n.*, s.tag FROM pd_nulls n JOIN pd_small s ON n.k = s.k') AS nulls_equi;
SELECT pd_compare('SELECT n.*, s.tag FROM pd_nulls n LEFT JOIN pd_small s ON n.k = s.k') AS nulls_left;
SELECT pd_compare('SELECT n.i2, n.i8, n.f4, s.tag FROM pd_nulls n JOIN pd_small s
                   ON n.i2 < s.k - 95 AND s.tag < 20') AS int2_key;
SELECT pd_compare('SELECT n.d, n.ts, n.tz, s.k FROM pd_nulls n JOIN pd_small s
                   ON n.d < date ''2000-01-01'' - s.k * 80 AND s.tag < 30') AS date_key;
SELECT pd_compare('SELECT count(*), sum(n.f8), min(n.ts), max(n.i8) FROM pd_nulls n JOIN pd_small s
                   ON n.f8 < s.k * -30.0::float8') AS float_key;
SELECT pd_inputs('SELECT count(*) FROM pd_nulls n JOIN pd_small s ON n.k = s.k') AS inputs;

-- more than eight attributes: NULL bitmaps of several bytes
CREATE TABLE pd_many (c1 int4, c2 int8, c3 int2, c4 int4, c5 int8, c6 int2, c7 int4, c8 int8,
                      c9 int4, c10 int8, c11 int2, c12 int4, c13 int8, c14 int4, c15 int8,
                      c16 int2, c17 int4, k int4, v float8);
INSERT INTO pd_many
SELECT NULLIF(g % 2, 0), NULLIF(g % 3, 0), NULLIF(g % 4, 0)::int2, NULLIF(g % 5, 0),
       NULLIF(g % 6, 0), NULLIF(g % 7, 0)::int2, NULLIF(g % 8, 0), NULLIF(g % 9, 0),
       NULLIF(g % 10, 0), NULLIF(g % 11, 0), NULLIF(g % 12, 0)::int2, NULLIF(g % 13, 0),
       NULLIF(g % 14, 0), NULLIF(g % 15, 0), NULLIF(g % 16, 0), NULLIF(g % 17, 0)::int2,
       NULLIF(g % 18, 0), NULLIF(g % 61, 60), g * 0.125
FROM generate_series(1, 4000) g;
VACUUM ANALYZE pd_many;
SELECT pd_compare('SELECT m.*, s.tag FROM pd_many m JOIN pd_small s ON m.k = s.k') AS wide_bitmap;
SELECT pd_compare('SELECT m.c16, m.c3, m.v, s.tag FROM pd_many m JOIN pd_small s
                   ON m.c17 < s.k AND s.k < 3') AS wide_bitmap_theta;

-- variable-width values before the key: NULL, short (1-byte header, up to
-- the 126-byte limit and past it), 4-byte headers, compressed inline,
-- TOASTed out of line (random strings that do not compress), and a
-- column stored EXTERNAL
CREATE TABLE pd_text (id int4, t text, k int4, u text, v float8, x text);
ALTER TABLE pd_text ALTER COLUMN x SET STORAGE EXTERNAL;
CREATE FUNCTION pd_random_text(n int) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(md5(random()::text), '') FROM generate_series(1, (n + 31) / 32)
$$;
INSERT INTO pd_text
SELECT g,
       CASE g % 8
           WHEN 0 THEN NULL
           WHEN 1 THEN ''
           WHEN 2 THEN repeat('s', g % 126)
           WHEN 3 THEN repeat('b', 125 + g % 4)
           WHEN 4 THEN repeat('l', 200 + g % 300)
           WHEN 5 THEN repeat('compressible ', 400)
           WHEN 6 THEN left(pd_random_text(3000), 3000)
           ELSE 'x' || g
       END,
       CASE WHEN g % 23 = 0 THEN NULL ELSE g % 60 END,
       CASE WHEN g % 3 = 0 THEN NULL ELSE 'u' || g END,
       g * 0.5,
       CASE WHEN g % 5 = 0 THEN left(pd_random_text(2500), 2500) ELSE 'short x' END
FROM generate_series(1, 1200) g;
VACUUM ANALYZE pd_text;
SELECT count(*) FILTER (WHERE pg_column_size(t) < octet_length(t)) > 0 AS some_compressed,
       (SELECT relpages FROM pg_class WHERE oid = (SELECT reltoastrelid FROM pg_class
                                                   WHERE relname = 'pd_text')) > 0 AS some_toasted
FROM pd_text;
SELECT pd_compare('SELECT p.id, p.k, p.v, length(p.t), md5(p.t), p.u, s.tag FROM pd_text p
                   JOIN pd_small s ON p.k = s.k') AS text_before_key;
SELECT pd_compare('SELECT p.id, md5(p.x), length(p.x), s.tag FROM pd_text p
                   JOIN pd_small s ON p.k = s.k') AS external_after_key;
SELECT pd_compare('SELECT p.v, p.u, s.k FROM pd_text p JOIN pd_small s
                   ON p.v < s.k * 5.0::float8 AND s.k < 5') AS text_theta;
SELECT pd_compare('SELECT p.id, s.id FROM pd_text p JOIN pd_text s ON p.u = s.u') AS text_key;
SELECT pd_compare('SELECT count(*), sum(p.id - s.id) FROM pd_text p JOIN pd_text s ON p.t = s.t') AS long_text_key;
SELECT pd_inputs('SELECT count(*) FROM pd_text p JOIN pd_small s ON p.k = s.k') AS inputs;

-- fixed-length values passed by reference (uuid, name) and char(n), and a
-- dropped column before the key
CREATE TABLE pd_byref (id int4, gone int8, n name, u uuid, c char(5), k int4);
INSERT INTO pd_byref
SELECT g, g, CASE WHEN g % 4 = 0 THEN NULL ELSE 'name' || g END,
       CASE WHEN g % 6 = 0 THEN NULL ELSE md5(g::text)::uuid END,
       CASE WHEN g % 5 = 0 THEN NULL ELSE (g % 1000)::text END, g % 60
FROM generate_series(1, 3000) g;
ALTER TABLE pd_byref DROP COLUMN gone;
INSERT INTO pd_byref SELECT g, 'later' || g, md5((g * 7)::text)::uuid, 'ab', g % 60
FROM generate_series(3001, 3300) g;
VACUUM ANALYZE pd_byref;
SELECT pd_compare('SELECT b.id, b.n, b.u, b.c, s.tag FROM pd_byref b JOIN pd_small s
                   ON b.k = s.k') AS byref_fixed;
SELECT pd_compare('SELECT b.id, s.id FROM pd_byref b JOIN pd_byref s ON b.u = s.u') AS uuid_key;

-- columns added after rows were written: the older tuples are shorter and
-- take the missing value (a value by value, NULL without a default, a value
-- by reference, which the decoder leaves to the host)
CREATE TABLE pd_added (id int4, k int4);
INSERT INTO pd_added SELECT g, g % 60 FROM generate_series(1, 2000) g;
ALTER TABLE pd_added ADD COLUMN a_int int4 DEFAULT 42;
ALTER TABLE pd_added ADD COLUMN a_null int8;
ALTER TABLE pd_added ADD COLUMN a_text text DEFAULT 'added later';
ALTER TABLE pd_added ADD COLUMN a_float float8 DEFAULT -2.5;
ALTER TABLE pd_added ADD COLUMN a_ts timestamp DEFAULT '2021-02-03 04:05:06';
INSERT INTO pd_added SELECT g, g % 60, g % 50, g, 'row ' || g, g * 0.5, '2022-01-01'
FROM generate_series(2001, 2600) g;
INSERT INTO pd_added (id, k) SELECT g, g % 60 FROM generate_series(2601, 2700) g;
UPDATE pd_added SET a_null = NULL WHERE id % 97 = 0;
VACUUM ANALYZE pd_added;
SELECT pd_compare('SELECT a.*, s.tag FROM pd_added a JOIN pd_small s ON a.k = s.k') AS added_all;
SELECT pd_compare('SELECT a.id, a.a_int, a.a_float, a.a_ts, s.tag FROM pd_added a JOIN pd_small s
                   ON a.a_int = s.k') AS added_int_key;
SELECT pd_compare('SELECT a.id, a.a_null, s.tag FROM pd_added a JOIN pd_small s
                   ON a.a_null % 60 = s.k') AS added_null_key;
SELECT pd_compare('SELECT a.id, s.k FROM pd_added a JOIN pd_small s
                   ON a.a_float < s.k - 55 AND s.k > 56') AS added_float_theta;

-- HOT chains, deleted and aborted rows before VACUUM (redirect and dead
-- line pointers among the visible tuples), then the same pages all-visible
CREATE TABLE pd_hot (id int4, k int4, v float8, pad text) WITH (fillfactor = 40);
CREATE INDEX ON pd_hot (id);
INSERT INTO pd_hot SELECT g, g % 60, g, 'pad' FROM generate_series(1, 4000) g;
VACUUM ANALYZE pd_hot;
UPDATE pd_hot SET v = v + 0.25 WHERE id % 3 = 0;
UPDATE pd_hot SET v = v + 0.25, k = (k + 1) % 60 WHERE id % 6 = 0;
DELETE FROM pd_hot WHERE id % 10 = 0;
BEGIN;
INSERT INTO pd_hot SELECT -g, 1, -1, 'aborted' FROM generate_series(1, 300) g;
ROLLBACK;
-- a seq scan prunes the HOT chains it meets: redirect line pointers
SELECT count(*) FROM pd_hot;
SELECT count(*) > 0 AS some_hot_updated FROM pd_hot WHERE id % 3 = 0;
SELECT pd_compare('SELECT h.id, h.v, s.tag FROM pd_hot h JOIN pd_small s ON h.k = s.k') AS before_vacuum;
SELECT pd_compare('SELECT count(*), sum(h.v) FROM pd_hot h JOIN pd_small s ON h.k < s.k') AS before_vacuum_agg;
VACUUM (FREEZE, ANALYZE) pd_hot;
SELECT relallvisible > 0 AS some_all_visible FROM pg_class WHERE relname = 'pd_hot';
SELECT pd_compare('SELECT h.id, h.v, s.tag FROM pd_hot h JOIN pd_small s ON h.k = s.k') AS after_vacuum;
SELECT pd_compare('SELECT count(*), sum(h.v) FROM pd_hot h JOIN pd_small s ON h.k < s.k') AS after_vacuum_agg;

-- a scan with quals deforms tuple by tuple, decoder on or off
SELECT pd_compare('SELECT h.id, s.tag FROM pd_hot h JOIN pd_small s ON h.k = s.k
                   WHERE h.id % 7 = 1') AS scan_quals;
-- both sides read by the columnar reader
SELECT pd_inputs('SELECT count(*) FROM pd_hot h JOIN pd_small s ON h.k = s.k') AS inputs;

-- all-visible pages between pages that are not: the reader decodes an
-- all-visible page after it read the next page, and first decodes the one
-- pending when the next is deformed tuple by tuple; empty all-visible pages
-- between them
CREATE TABLE pd_mixed (id int4, k int4, v float8) WITH (fillfactor = 50);
INSERT INTO pd_mixed SELECT g, g % 60, g FROM generate_series(1, 6000) g;
DELETE FROM pd_mixed WHERE (ctid::text::point)[0]::int % 5 = 4;
VACUUM (FREEZE, ANALYZE) pd_mixed;
UPDATE pd_mixed SET v = v + 0.5 WHERE (ctid::text::point)[0]::int % 3 = 0 AND id % 4 = 0;
SELECT count(DISTINCT (ctid::text::point)[0]) AS pages_with_rows FROM pd_mixed;
SELECT pd_compare('SELECT m.id, m.v, s.tag FROM pd_mixed m JOIN pd_small s ON m.k = s.k') AS mixed_pages;
SELECT pd_compare('SELECT count(*), sum(m.v) FROM pd_mixed m JOIN pd_small s ON m.k < s.k') AS mixed_pages_agg;
