--
-- columnar_input: the columnar heap reader (gpujoin.columnar_input) reads a
-- Seq Scan input itself.  Every query gives the native plan's answer with
-- the reader on and off, on tables whose tuples take every path of the
-- reader: dropped and added (missing-value) columns, TOASTed and compressed
-- values, NULLs before and after the keys, variable-width columns before
-- the keys, pages that are not all-visible (dead, updated and aborted
-- tuples), temp and unlogged tables, partitions, empty tables, scans with
-- their own quals; EXPLAIN ANALYZE names each input's path, the child scan
-- counts the rows, and pg_stat_user_tables counts the scan as a seq scan.
--
SET client_min_messages = warning;

-- both settings of the reader against the native plan
CREATE FUNCTION ci_compare(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    on_result text;
    off_result text;
BEGIN
    PERFORM set_config('gpujoin.columnar_input', 'on', true);
    on_result := gj_compare(query);
    PERFORM set_config('gpujoin.columnar_input', 'off', true);
    off_result := gj_compare(query);
    PERFORM set_config('gpujoin.columnar_input', 'on', true);
    IF on_result = off_result THEN
        RETURN on_result;
    END IF;
    RETURN format('on: %s, off: %s', on_result, off_result);
END $$;

-- the input lines of EXPLAIN ANALYZE, pages masked, with the scans' lines
-- (whose rows a parallel plan's processes share out as they go: without)
CREATE FUNCTION ci_inputs(query text, with_scans boolean DEFAULT true) RETURNS text
LANGUAGE sql AS $$
    SELECT regexp_replace(gj_plan_lines(query,
                                        CASE WHEN with_scans
                                             THEN '(Outer|Inner) Input|Seq Scan|Rows Removed by Filter'
                                             ELSE '(Outer|Inner) Input' END,
                                        ' | ', 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF'),
                          '[0-9]+ pages', 'N pages', 'g')
$$;

-- A table with a varlena before the keys, a dropped column, NULLs, and
-- columns added later with and without a default (rows written before
-- have no such attribute: they take its missing value, or NULL).
CREATE TABLE ci_wide (id int, label text, gone int8, k int4, v float8, n numeric);
INSERT INTO ci_wide
SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE repeat('x', g % 40) END, g,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g % 50 END,
       CASE WHEN g % 13 = 0 THEN NULL WHEN g % 17 = 0 THEN 'NaN' ELSE g * 0.25 END,
       g * 1.5
FROM generate_series(1, 3000) g;
ALTER TABLE ci_wide DROP COLUMN gone;
ALTER TABLE ci_wide ADD COLUMN added_default int4 DEFAULT 7;
ALTER TABLE ci_wide ADD COLUMN added_null int4;
INSERT INTO ci_wide (id, label, k, v, n, added_default, added_null)
SELECT g, 'new', g % 50, g, g, g % 5, g % 3 FROM generate_series(3001, 3500) g;
-- the fixed-width table: every tuple on the fast path
CREATE TABLE ci_fixed (a int4, b float8, c int8);
INSERT INTO ci_fixed SELECT g % 60, g * 0.5, g FROM generate_series(1, 5000) g;
VACUUM ANALYZE ci_wide;
VACUUM ANALYZE ci_fixed;

SELECT ci_compare('SELECT w.id, f.c FROM ci_wide w JOIN ci_fixed f ON w.k < f.a AND f.c < 40') AS wide_theta;
SELECT ci_compare('SELECT w.id, w.label, w.v, f.b FROM ci_wide w JOIN ci_fixed f ON w.k = f.a') AS wide_equi;
SELECT ci_compare('SELECT w.added_default, w.added_null, f.c FROM ci_wide w JOIN ci_fixed f
                   ON w.added_default < f.a AND f.c <= 20') AS added_columns;
SELECT ci_compare('SELECT w.id, f.c FROM ci_wide w JOIN ci_fixed f
                   ON w.added_null = f.a % 3 AND f.c <= 30') AS added_null_key;
SELECT ci_compare('SELECT w.n, w2.id FROM ci_wide w JOIN ci_wide w2 ON w.n < w2.n AND w2.id <= 3') AS numeric_key;
SELECT ci_compare('SELECT count(*), sum(f.b), min(w.v), max(w.label) FROM ci_wide w JOIN ci_fixed f
                   ON w.k <= f.a AND w.v > f.b') AS aggregate;
SELECT ci_inputs('SELECT count(*) FROM ci_wide w JOIN ci_fixed f ON w.k < f.a') AS inputs;

-- EXPLAIN (ANALYZE, VERBOSE) with gpujoin.time_input_parts breaks each
-- side's reading down (pages read, tuples decoded, rows stored), within the
-- time its input line gives; without VERBOSE, without timing, or with the
-- setting off, there is no such line
CREATE FUNCTION ci_input_parts(query text) RETURNS TABLE (side text, parts_within_input boolean)
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    total float8;
    m text[];
BEGIN
    PERFORM gj_force(true);
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) ' || query LOOP
        m := regexp_match(line, '(Outer|Inner) Input: heap \(columnar\), [0-9]+ pages, ([0-9.]+) ms');
        IF m IS NOT NULL THEN
            total := m[2]::float8;
        END IF;
        m := regexp_match(line, '(Outer|Inner) Input Parts: read ([0-9.]+) ms, decode ([0-9.]+) ms, store ([0-9.]+) ms$');
        IF m IS NOT NULL THEN
            side := m[1];
            parts_within_input := m[2]::float8 + m[3]::float8 + m[4]::float8 <= total + 0.01;
            RETURN NEXT;
        END IF;
    END LOOP;
    PERFORM gj_force(false);
END $$;
SELECT gj_plan_lines('SELECT count(*) FROM ci_wide w JOIN ci_fixed f ON w.k < f.a', 'Input Parts',
                     ' | ', 'ANALYZE, VERBOSE, COSTS OFF') AS parts_setting_off;
SET gpujoin.time_input_parts = on;
SELECT * FROM ci_input_parts('SELECT count(*) FROM ci_wide w JOIN ci_fixed f ON w.k < f.a');
SELECT gj_plan_lines('SELECT count(*) FROM ci_wide w JOIN ci_fixed f ON w.k < f.a', 'Input Parts',
                     ' | ', 'ANALYZE, COSTS OFF') AS parts_without_verbose,
       gj_plan_lines('SELECT count(*) FROM ci_wide w JOIN ci_fixed f ON w.k < f.a', 'Input Parts',
                     ' | ', 'ANALYZE, VERBOSE, COSTS OFF, TIMING OFF') AS parts_without_timing;
RESET gpujoin.time_input_parts;

-- columns of a megabyte and more come from mapped blocks (column_cache.c);
-- with gpujoin.host_huge_pages they are asked to be huge pages, and with no
-- cache every join maps fresh ones: the same answers
CREATE TABLE ci_big AS SELECT g % 1000 AS k, g * 0.5 AS v FROM generate_series(1, 150000) g;
VACUUM ANALYZE ci_big;
SET gpujoin.host_huge_pages = on;
SET gpujoin.host_buffer_cache = 0;
SELECT ci_compare('SELECT count(*), sum(b.v * f.b) FROM ci_big b JOIN ci_fixed f ON b.k = f.a') AS huge_pages_equi;
SELECT ci_compare('SELECT b.k, count(*) FROM ci_big b JOIN ci_fixed f ON b.k < f.a AND f.c <= 3
                   GROUP BY b.k') AS huge_pages_theta;
RESET gpujoin.host_huge_pages;
RESET gpujoin.host_buffer_cache;
DROP TABLE ci_big;

-- TOASTed values, compressed and stored out of line, as returned columns
CREATE TABLE ci_toast (id int, k int4, body text);
ALTER TABLE ci_toast ALTER COLUMN body SET STORAGE EXTERNAL;
INSERT INTO ci_toast SELECT g, g % 10, repeat(md5(g::text), 200 + g) FROM generate_series(1, 40) g;
CREATE TABLE ci_toast_c (id int, k int4, body text);
INSERT INTO ci_toast_c SELECT g, g % 10, repeat('ab', 5000 + g) FROM generate_series(1, 40) g;
SELECT ci_compare('SELECT t.id, length(t.body), md5(t.body), c.id FROM ci_toast t JOIN ci_toast_c c
                   ON t.k < c.k') AS toast_external;
SELECT ci_compare('SELECT c.id, length(c.body), md5(c.body), t.id FROM ci_toast_c c JOIN ci_toast t
                   ON c.k = t.k') AS toast_compressed;

-- pages that are not all-visible: dead tuples, HOT updates, aborted inserts
CREATE TABLE ci_churn (a int4, b int4, pad text) WITH (fillfactor = 50);
INSERT INTO ci_churn SELECT g % 40, g, 'p' FROM generate_series(1, 4000) g;
DELETE FROM ci_churn WHERE b % 5 = 0;
UPDATE ci_churn SET b = b + 100000 WHERE b % 7 = 0;
UPDATE ci_churn SET b = b + 100000 WHERE b % 7 = 0;
BEGIN;
INSERT INTO ci_churn SELECT 1, -g, 'aborted' FROM generate_series(1, 500) g;
ROLLBACK;
SELECT relallvisible = 0 AS no_page_all_visible FROM pg_class WHERE relname = 'ci_churn';
SELECT ci_compare('SELECT c.b, f.c FROM ci_churn c JOIN ci_fixed f ON c.a > f.a AND f.c <= 15') AS churn;
SELECT ci_compare('SELECT count(*), sum(c.b) FROM ci_churn c JOIN ci_fixed f ON c.a = f.a') AS churn_agg;

-- temp and unlogged tables, an empty table
CREATE TEMP TABLE ci_temp AS SELECT g % 30 AS a, g AS b FROM generate_series(1, 900) g;
CREATE UNLOGGED TABLE ci_unlogged AS SELECT g % 30 AS a, g AS b FROM generate_series(1, 900) g;
CREATE TABLE ci_empty (a int4, b int4);
ANALYZE ci_temp;
ANALYZE ci_unlogged;
SELECT ci_compare('SELECT t.b, u.b FROM ci_temp t JOIN ci_unlogged u ON t.a < u.a AND u.b < 50') AS temp_unlogged;
SELECT ci_compare('SELECT t.b, e.b FROM ci_temp t LEFT JOIN ci_empty e ON t.a < e.a') AS empty_inner;
SELECT ci_compare('SELECT t.b, e.b FROM ci_empty e RIGHT JOIN ci_temp t ON t.a < e.a') AS empty_outer;
SELECT ci_inputs('SELECT count(*) FROM ci_temp t JOIN ci_unlogged u ON t.a < u.a') AS inputs;

-- partitions: an Append of Seq Scans is read a table at a time
CREATE TABLE ci_part (a int4, b int4) PARTITION BY RANGE (a);
CREATE TABLE ci_part_lo PARTITION OF ci_part FOR VALUES FROM (0) TO (15);
CREATE TABLE ci_part_hi PARTITION OF ci_part FOR VALUES FROM (15) TO (30);
INSERT INTO ci_part SELECT g % 30, g FROM generate_series(1, 600) g;
ANALYZE ci_part;
SELECT ci_compare('SELECT p.b, t.b FROM ci_part p JOIN ci_temp t ON p.a < t.a AND t.b < 40') AS partitions;
SELECT ci_compare('SELECT p.b, t.b FROM ci_part_lo p JOIN ci_temp t ON p.a < t.a AND t.b < 40') AS one_partition;
SELECT ci_inputs('SELECT count(*) FROM ci_part p JOIN ci_temp t ON p.a < t.a') AS inputs;

-- partitions whose columns are not where the parent has them (another
-- order, a dropped column), a column added to all of them later (missing
-- values in the older tuples), NULL keys, an empty partition
CREATE TABLE ci_pm (k int4, v float8, tag text) PARTITION BY LIST (tag);
CREATE TABLE ci_pm_a (tag text, dropme int8, v float8, k int4);
ALTER TABLE ci_pm_a DROP COLUMN dropme;
ALTER TABLE ci_pm ATTACH PARTITION ci_pm_a FOR VALUES IN ('a');
CREATE TABLE ci_pm_b PARTITION OF ci_pm FOR VALUES IN ('b');
CREATE TABLE ci_pm_z PARTITION OF ci_pm FOR VALUES IN ('z');
CREATE TABLE ci_pm_rest PARTITION OF ci_pm DEFAULT;
INSERT INTO ci_pm
SELECT CASE WHEN g % 19 = 0 THEN NULL ELSE g % 40 END, g * 0.5, (ARRAY['a', 'b', 'c', 'd'])[g % 4 + 1]
FROM generate_series(1, 2000) g;
ALTER TABLE ci_pm ADD COLUMN late int4 DEFAULT 5;
INSERT INTO ci_pm SELECT g % 40, g, 'a', g % 7 FROM generate_series(1, 300) g;
VACUUM ANALYZE ci_pm;
-- a small side without partial scans: a parallel plan's partial side is ci_pm
CREATE TABLE ci_pdim WITH (parallel_workers = 0) AS SELECT a, c FROM ci_fixed WHERE c <= 60;
VACUUM ANALYZE ci_pdim;
SELECT ci_compare('SELECT p.k, p.v, p.late, f.c FROM ci_pm p JOIN ci_fixed f ON p.k = f.a AND f.c < 300') AS partition_columns;
SELECT ci_compare('SELECT p.late, p.tag, t.b FROM ci_pm p JOIN ci_temp t ON p.k < t.a AND t.b < 30') AS partition_theta;
SELECT ci_inputs('SELECT count(*) FROM ci_pm p JOIN ci_fixed f ON p.k = f.a') AS inputs;
-- the scans' own quals, and partitions pruned when planning
SELECT ci_compare('SELECT p.k, f.c FROM ci_pm p JOIN ci_fixed f ON p.k = f.a AND f.c < 300
                   WHERE p.v > 100 AND p.late <> 3') AS partition_quals;
SELECT ci_compare('SELECT p.v, f.c FROM ci_pm p JOIN ci_fixed f ON p.k = f.a AND f.c < 300
                   WHERE p.tag IN (''a'', ''b'')') AS partitions_pruned;
SELECT ci_inputs('SELECT count(*) FROM ci_pm p JOIN ci_fixed f ON p.k = f.a
                  WHERE p.tag IN (''a'', ''b'')') AS inputs;
-- pruned while running (a parameter): the child plan reads it
SELECT ci_compare('SELECT p.v, f.c FROM ci_pm p JOIN ci_fixed f ON p.k = f.a AND f.c < 300
                   WHERE p.tag = (SELECT ''b'')') AS pruned_running;
SELECT ci_inputs('SELECT count(*) FROM ci_pm p JOIN ci_fixed f ON p.k = f.a
                  WHERE p.tag = (SELECT ''b'')') AS inputs;
-- UNION ALL of two tables is an Append of their scans as well
SELECT ci_compare('SELECT u.a, t.b FROM (SELECT a FROM ci_fixed UNION ALL SELECT k FROM ci_wide) u
                   JOIN ci_temp t ON u.a < t.a AND t.b < 10') AS union_all;
SELECT ci_inputs('SELECT count(*) FROM (SELECT a FROM ci_fixed UNION ALL SELECT k FROM ci_wide) u
                  JOIN ci_temp t ON u.a < t.a') AS inputs;
-- many partitions: their readers share one set of page buffers
CREATE TABLE ci_many (k int4, v int8) PARTITION BY HASH (k);
DO $$ BEGIN
    FOR i IN 0..63 LOOP
        EXECUTE format('CREATE TABLE ci_many_%s PARTITION OF ci_many FOR VALUES WITH (MODULUS 64, REMAINDER %s)', i, i);
    END LOOP;
END $$;
INSERT INTO ci_many SELECT g % 70, g FROM generate_series(1, 5000) g;
VACUUM ANALYZE ci_many;
SELECT ci_compare('SELECT m.v, f.c FROM ci_many m JOIN ci_fixed f ON m.k = f.a AND f.c < 200') AS many_partitions;
SELECT ci_inputs('SELECT count(*) FROM ci_many m JOIN ci_fixed f ON m.k = f.a', false) AS inputs;
-- the same table twice: two scans, each read whole
SELECT ci_compare('SELECT u.a, t.b FROM (SELECT a FROM ci_fixed UNION ALL SELECT a FROM ci_fixed) u
                   JOIN ci_temp t ON u.a < t.a AND t.b < 10') AS union_all_same;

-- the scan's own quals: evaluated by the reader, counted on the child
SELECT ci_compare('SELECT w.id, f.c FROM ci_wide w JOIN ci_fixed f ON w.k < f.a
                   WHERE f.c % 97 = 0 AND w.label LIKE ''xx%''') AS scan_quals;
SELECT ci_inputs('SELECT count(*) FROM ci_wide w JOIN ci_fixed f ON w.k < f.a
                  WHERE f.c % 97 = 0 AND w.label LIKE ''xx%''') AS inputs;
-- a qual that raises an error raises it with the reader too
SELECT gj_compare_error('SELECT w.id FROM ci_wide w JOIN ci_fixed f ON w.k < f.a
                         WHERE 1 / (f.c - 2500) > 0') AS scan_qual_error;

-- the setting off: the child plans read both sides
BEGIN;
SET LOCAL gpujoin.columnar_input = off;
SELECT ci_inputs('SELECT count(*) FROM ci_wide w JOIN ci_fixed f ON w.k < f.a') AS inputs_off;
COMMIT;

-- a column computed in a flattened subquery is computed above the scan,
-- which the reader still reads; a subquery that is not flattened (LIMIT)
-- is read through its plan
SELECT ci_inputs('SELECT count(*) FROM (SELECT k + 1 AS k FROM ci_wide) w
                  JOIN ci_fixed f ON w.k < f.a') AS computed_column;
SELECT ci_compare('SELECT w.k, f.c FROM (SELECT k + 1 AS k FROM ci_wide) w
                   JOIN ci_fixed f ON w.k < f.a AND f.c < 20') AS computed_column;
SELECT ci_inputs('SELECT count(*) FROM (SELECT k FROM ci_wide ORDER BY id LIMIT 100) w
                  JOIN ci_fixed f ON w.k < f.a') AS limit_subquery;

-- parallel: the leader and the workers take blocks from the allocator
BEGIN;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL gpujoin.device = cpu;
SELECT ci_compare('SELECT f.c, w.id FROM ci_fixed f JOIN ci_wide w ON f.a > w.k AND w.id < 30') AS parallel;
SELECT ci_compare('SELECT count(*), sum(f.c) FROM ci_fixed f JOIN ci_wide w ON f.a = w.k') AS parallel_agg;
SELECT gj_plan_lines('SELECT f.c, w.id FROM ci_fixed f JOIN ci_wide w ON f.a > w.k AND w.id < 30',
                     '(Outer|Inner) Input|Parallel Seq Scan|Gather', ' | ', 'COSTS OFF') AS parallel_plan;
SELECT ci_inputs('SELECT f.c, w.id FROM ci_fixed f JOIN ci_wide w ON f.a > w.k AND w.id < 30', false) AS parallel_inputs;
-- a Parallel Append: each process takes blocks of every partition from
-- that scan's allocator
SELECT ci_compare('SELECT p.k, p.late, f.c FROM ci_pm p JOIN ci_pdim f ON p.k = f.a') AS parallel_append;
SELECT ci_compare('SELECT count(*), sum(p.v * f.c) FROM ci_pm p JOIN ci_pdim f ON p.k = f.a') AS parallel_append_agg;
SELECT gj_plan_lines('SELECT count(*) FROM ci_pm p JOIN ci_pdim f ON p.k = f.a',
                     '(Outer|Inner) Input|Append|Gather', ' | ', 'COSTS OFF') AS parallel_append_plan;
SELECT ci_inputs('SELECT count(*) FROM ci_pm p JOIN ci_pdim f ON p.k = f.a', false) AS parallel_append_inputs;
-- a partition without partial scans runs in one process of the Parallel
-- Append: the child plan reads the Append
ALTER TABLE ci_pm_b SET (parallel_workers = 0);
SELECT ci_compare('SELECT p.k, p.late, f.c FROM ci_pm p JOIN ci_pdim f ON p.k = f.a') AS non_partial;
SELECT gj_plan_lines('SELECT count(*) FROM ci_pm p JOIN ci_pdim f ON p.k = f.a',
                     '(Outer|Inner) Input|Append|Seq Scan on ci_pm_b', ' | ', 'COSTS OFF') AS non_partial_plan;
SELECT ci_inputs('SELECT count(*) FROM ci_pm p JOIN ci_pdim f ON p.k = f.a', false) AS non_partial_inputs;
ALTER TABLE ci_pm_b RESET (parallel_workers);
COMMIT;

-- a rescanned side (a parameter reaches its scan) is read again
SELECT ci_compare('
    SELECT o.a, (SELECT count(*) FROM (SELECT * FROM ci_fixed WHERE a > o.a) x
                 JOIN ci_temp y ON x.a < y.a) AS n
    FROM ci_temp o WHERE o.b <= 20') AS rescan;

-- pg_stat_user_tables: one seq scan of each table and its live tuples
CREATE TABLE ci_stats (a int4, b int4);
INSERT INTO ci_stats SELECT g % 10, g FROM generate_series(1, 1000) g;
DELETE FROM ci_stats WHERE b > 900;
SELECT pg_stat_force_next_flush();
CREATE TABLE ci_stats_before AS
    SELECT seq_scan, seq_tup_read FROM pg_stat_user_tables WHERE relname = 'ci_stats';
BEGIN;
SELECT gj_force(true);
SELECT count(*) FROM ci_stats s JOIN ci_temp t ON s.a < t.a AND t.b = 1;
COMMIT;
SELECT pg_stat_force_next_flush();
SELECT s.seq_scan - b.seq_scan AS seq_scans, s.seq_tup_read - b.seq_tup_read AS tuples_read
FROM pg_stat_user_tables s, ci_stats_before b WHERE s.relname = 'ci_stats';
-- the same counts through the child plan
DELETE FROM ci_stats_before;
INSERT INTO ci_stats_before
    SELECT seq_scan, seq_tup_read FROM pg_stat_user_tables WHERE relname = 'ci_stats';
BEGIN;
SELECT gj_force(true);
SET LOCAL gpujoin.columnar_input = off;
SELECT count(*) FROM ci_stats s JOIN ci_temp t ON s.a < t.a AND t.b = 1;
COMMIT;
SELECT pg_stat_force_next_flush();
SELECT s.seq_scan - b.seq_scan AS seq_scans, s.seq_tup_read - b.seq_tup_read AS tuples_read
FROM pg_stat_user_tables s, ci_stats_before b WHERE s.relname = 'ci_stats';

-- a cancel while the reader holds a page (statement_timeout inside the
-- scan's qual) ends the query cleanly, and the next query works
BEGIN;
SELECT gj_force(true);
SET LOCAL statement_timeout = '200ms';
SELECT count(*) FROM ci_fixed f JOIN ci_temp t ON f.a < t.a WHERE pg_sleep(0.01 + f.a * 0) IS NOT NULL;
ROLLBACK;
SELECT ci_compare('SELECT t.b, u.b FROM ci_temp t JOIN ci_unlogged u ON t.a < u.a AND u.b < 50') AS after_cancel;
