--
-- full_theta: FULL joins PostgreSQL cannot plan itself (no hash-joinable
-- clause, not every clause merge-joinable: r FULL JOIN s ON r.a < s.b) run
-- as GpuJoin, its path being the join's only one; with gpujoin.enabled =
-- off, or a condition the device cannot evaluate, PostgreSQL's own ERROR
-- stays.  There is no native plan to compare with, so each result is
-- compared, as a multiset, with the same rows written out by hand and run by
-- PostgreSQL: the LEFT JOIN plus the inner rows no outer row matches,
-- null-extended.  On every algorithm, in tiles, spilled, rescanned, with
-- host quals, WHERE filters, aggregates and a larger query around it.
--
SET client_min_messages = warning;

-- r and s: NULL keys on both sides, duplicate keys and duplicate rows
CREATE TABLE ft_r AS
SELECT g AS id,
       CASE WHEN g % 11 = 0 THEN NULL ELSE (g * 7) % 50 END AS a,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 3) % 40 END AS b,
       ((g * 7) % 50)::numeric / 4 AS n,
       'v' || (g % 23) AS t
FROM generate_series(1, 300) g;
CREATE TABLE ft_s AS
SELECT g AS id,
       CASE WHEN g % 7 = 0 THEN NULL ELSE (g * 11) % 60 + 20 END AS a,
       CASE WHEN g % 5 = 0 THEN NULL ELSE (g * 17) % 45 END AS b,
       ((g * 17) % 45)::numeric / 4 AS n,
       'v' || (g % 31) AS t,
       g % 10 AS c
FROM generate_series(1, 250) g;
-- whole duplicate rows, no id to tell them apart
CREATE TABLE ft_dup AS SELECT g % 6 AS k FROM generate_series(1, 30) g;
INSERT INTO ft_dup VALUES (NULL), (NULL);
ANALYZE ft_r, ft_s, ft_dup;

-- The algorithm of the first FULL GpuJoin in a query's plan, or 'none'.
CREATE FUNCTION ft_full_algorithm(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    full_join boolean := false;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line ~ 'Join Type: Full' THEN
            full_join := true;
        ELSIF full_join AND line ~ 'Algorithm: ' THEN
            RETURN regexp_replace(line, '^.*Algorithm: ', '');
        END IF;
    END LOOP;
    RETURN 'none';
END $$;

-- The FULL JOIN of r_tab r and s_tab s on cond, returning cols, against the
-- same rows written out by hand: r LEFT JOIN s on cond, plus each s row no r
-- row satisfies cond with, its r columns NULL (a LEFT JOIN on false gives
-- them r's types).  In shape, $JOIN stands for either query: the query run
-- around the join.  The FULL JOIN runs with GpuJoin forced, the other with
-- gpujoin.enabled = off; the two results are compared as multisets.  Says
-- the rows, the algorithm of the FULL GpuJoin, and whether it spilled.
CREATE FUNCTION ft_compare(cond text,
                           cols text DEFAULT 'r.id AS rid, r.a AS ra, r.b AS rb, s.id AS sid, s.a AS sa, s.b AS sb',
                           shape text DEFAULT '$JOIN',
                           r_tab text DEFAULT 'ft_r', s_tab text DEFAULT 'ft_s')
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    full_q text := replace(shape, '$JOIN',
        format('SELECT %s FROM %s r FULL JOIN %s s ON %s', cols, r_tab, s_tab, cond));
    ref_q text := replace(shape, '$JOIN',
        format('SELECT %1$s FROM %2$s r LEFT JOIN %3$s s ON %4$s
                UNION ALL
                SELECT %1$s FROM %3$s s LEFT JOIN %2$s r ON false
                WHERE NOT EXISTS (SELECT 1 FROM %2$s r WHERE %4$s)',
               cols, r_tab, s_tab, cond));
    alg text;
    line text;
    spilled boolean := false;
    n_gpu bigint;
    n_ref bigint;
    n_diff bigint;
BEGIN
    PERFORM gj_force(true);
    alg := ft_full_algorithm(full_q);
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || full_q LOOP
        IF line ~ 'Chunks Spilled: [1-9]' THEN
            spilled := true;
        END IF;
    END LOOP;
    SELECT * INTO n_gpu, n_ref, n_diff FROM gj_multiset_diff(full_q, ref_q);
    IF n_diff <> 0 THEN
        RETURN format('MISMATCH: %s rows differ (full join %s rows, by hand %s rows)',
                      n_diff, n_gpu, n_ref);
    END IF;
    RETURN format('%s rows, %s', n_gpu,
                  CASE WHEN alg = 'none' THEN 'no FULL join left' ELSE 'Full/' || alg END) ||
        CASE WHEN spilled THEN ', spilled' ELSE '' END;
END $$;

-- ft_compare under each algorithm (one the condition cannot use falls back)
CREATE FUNCTION ft_each_algorithm(cond text,
                                  cols text DEFAULT 'r.id AS rid, r.a AS ra, r.b AS rb, s.id AS sid, s.a AS sa, s.b AS sb',
                                  shape text DEFAULT '$JOIN',
                                  r_tab text DEFAULT 'ft_r', s_tab text DEFAULT 'ft_s')
RETURNS TABLE (forced text, result text) LANGUAGE plpgsql AS $$
BEGIN
    FOREACH forced IN ARRAY ARRAY['nestloop', 'sortmerge', 'hash'] LOOP
        PERFORM set_config('gpujoin.algorithm', forced, true);
        result := ft_compare(cond, cols, shape, r_tab, s_tab);
        RETURN NEXT;
    END LOOP;
    PERFORM set_config('gpujoin.algorithm', 'auto', true);
END $$;

-- the plan: GpuJoin is the join's only path (gj_explain leaves out the
-- Device line, which names the backend)
SELECT gj_explain($q$SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON r.a < s.b$q$);
SELECT gj_explain($q$SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON s.b BETWEEN r.a - 1 AND r.a + 1$q$);
SELECT gj_explain($q$SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON (r.a + s.b) % 7 = 0$q$);

-- conditions x algorithms: inequalities, bands, general theta quals
SELECT cond, (ft_each_algorithm(cond)).*
FROM (VALUES
    ('r.a < s.b'),
    ('r.a >= s.a - 30'),
    ('s.b BETWEEN r.a - 1 AND r.a + 1'),
    ('s.b > r.a AND s.b <= r.a + 3 AND r.b < s.a'),
    ('abs(r.a - s.b) <= 2'),
    ('(r.a + s.b) % 7 = 0'),
    ('r.a <> s.b'),
    ('r.a < s.b OR r.b = s.a'),
    ('r.n < s.n AND s.n < r.b'),
    ('r.a > 1000 + s.b')
) AS v(cond)
ORDER BY cond, forced;

-- whole duplicate rows and NULL keys, nothing else to tell rows apart
SELECT (ft_each_algorithm('r.k < s.k - 2', 'r.k AS rk, s.k AS sk', r_tab => 'ft_dup', s_tab => 'ft_dup')).*;
SELECT ft_compare('r.k <= s.k AND s.k <= r.k + 1', 'r.k AS rk, s.k AS sk',
                  r_tab => 'ft_dup', s_tab => 'ft_dup') AS dup_band;
-- floats: NaN, infinities, -0 and 0, NULLs
SELECT ft_compare('r.f8 < s.f8 - 10', 'r.id AS rid, r.f8 AS rf, s.id AS sid, s.f8 AS sf',
                  r_tab => 't_flt', s_tab => 't_flt') AS floats;
-- numerics no int64 holds, and NaN: their pairs are evaluated on the host
-- (Pairs with Inexact Keys), and they match, or not, like any other pair
CREATE TABLE ft_num_r AS
SELECT g AS id, CASE WHEN g % 5 = 0 THEN g::numeric * 1e25 + 0.123456789012345
                     WHEN g % 7 = 0 THEN NULL ELSE g::numeric / 3 END AS n
FROM generate_series(1, 200) g;
CREATE TABLE ft_num_s AS
SELECT g AS id, CASE WHEN g % 4 = 0 THEN g::numeric * 1e25
                     WHEN g % 9 = 0 THEN 'NaN'::numeric ELSE g::numeric / 7 END AS n
FROM generate_series(1, 200) g;
ANALYZE ft_num_r, ft_num_s;
SELECT (ft_each_algorithm('r.n < s.n AND s.n <= r.n * 2', 'r.id AS rid, r.n AS rn, s.id AS sid, s.n AS sn',
                          r_tab => 'ft_num_r', s_tab => 'ft_num_s')).*;
SELECT gj_plan_lines('SELECT r.id, s.id FROM ft_num_r r FULL JOIN ft_num_s s ON r.n < s.n AND s.n <= r.n * 2',
                     'Pairs with Inexact Keys: [1-9]', options => 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') <> '' AS inexact_keys;
DROP TABLE ft_num_r, ft_num_s;
-- an empty side: every row of the other comes back null-extended
SELECT ft_compare('r.a < s.b', 'r.id AS rid, s.id AS sid', r_tab => 'ft_r', s_tab => 't_empty') AS empty_inner,
       ft_compare('r.b < s.b', 'r.id AS rid, s.id AS sid', r_tab => 't_empty', s_tab => 'ft_s') AS empty_outer;
-- whole-row Vars of a null-extended side are NULL, not a row of NULLs
SELECT ft_compare('r.a < s.b - 30', 'r AS rr, s AS ss, s IS NULL AS s_null, r IS NULL AS r_null') AS whole_rows;

-- host quals: the device cannot compare text, so the host does, and a pair
-- that fails there is no match: its rows come back null-extended
SELECT cond, ft_compare(cond) AS result
FROM (VALUES
    ('s.b BETWEEN r.a - 2 AND r.a + 2 AND r.t < s.t'),
    ('r.a < s.b AND (r.t || s.t) LIKE ''%1%'''),
    ('r.t > s.t AND r.a < s.b')
) AS v(cond)
ORDER BY cond;
SELECT gj_plan_lines('SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON s.b BETWEEN r.a - 2 AND r.a + 2 AND r.t < s.t',
                     'GpuJoin|Join Type|Algorithm|Device Quals|Host Quals|Join Filter') AS plan;

-- filters on top: WHERE quals the FULL join keeps (not strict, or over both
-- sides) filter every row it forms, null-extended or not, after the match
SELECT shape, ft_compare('s.b BETWEEN r.a - 1 AND r.a + 1', shape => shape) AS result
FROM (VALUES
    ('SELECT * FROM ($JOIN) q WHERE rid IS NULL OR sid IS NULL'),
    ('SELECT * FROM ($JOIN) q WHERE coalesce(ra, 0) + coalesce(sb, 0) > 20'),
    ('SELECT * FROM ($JOIN) q WHERE rb IS DISTINCT FROM sa'),
    -- a strict qual on one side makes it a LEFT (or RIGHT) join
    ('SELECT * FROM ($JOIN) q WHERE ra > 10')
) AS v(shape)
ORDER BY shape;

-- aggregates over the FULL join (the aggregate node is for inner joins: a
-- PostgreSQL Agg runs over the GpuJoin)
SELECT shape, ft_compare('r.a < s.b - 20', shape => shape) AS result
FROM (VALUES
    ('SELECT count(*), count(rid), count(sid), sum(ra), sum(sb), min(rb), max(sa) FROM ($JOIN) q'),
    ('SELECT ra, count(*), count(sid), sum(sb) FROM ($JOIN) q GROUP BY ra'),
    ('SELECT sb, count(rid) FROM ($JOIN) q GROUP BY sb HAVING count(rid) < 40')
) AS v(shape)
ORDER BY shape;
SELECT gj_explain($q$SELECT count(*), count(r.id), count(s.id) FROM ft_r r FULL JOIN ft_s s ON r.a < s.b - 20$q$);

-- inside a larger query: joined to a third table, under a UNION, in a CTE
SELECT shape, ft_compare('r.a < s.b - 20', shape => shape) AS result
FROM (VALUES
    ('SELECT q.rid, q.sid, z.id FROM ($JOIN) q JOIN ft_r z ON z.id = coalesce(q.rid, q.sid) WHERE z.id < 100'),
    ('SELECT q.rid, q.sid, z.id FROM ($JOIN) q LEFT JOIN ft_s z ON z.a < coalesce(q.ra, q.sb) AND z.id < 20'),
    ('WITH j AS MATERIALIZED ($JOIN) SELECT count(*), count(rid), count(sid) FROM j'),
    ('SELECT sid FROM ($JOIN) q WHERE rid IS NULL UNION SELECT id FROM ft_s WHERE id < 5')
) AS v(shape)
ORDER BY shape;
-- two FULL joins stacked, neither with a native plan: the lower one checked
-- by hand, then the upper one over the lower one's rows kept in a table,
-- then the two together against that
SELECT ft_compare('r.a < s.b - 40', 'r.id AS rid, s.id AS sid, s.a AS sa') AS lower_join;
CREATE TEMP TABLE ft_lower AS
SELECT r.id AS rid, s.id AS sid, s.a AS sa FROM ft_r r FULL JOIN ft_s s ON r.a < s.b - 40;
SELECT ft_compare('s.a > r.sa + 40', 'r.rid, r.sid, s.id AS zid', r_tab => 'ft_lower') AS upper_join;
SELECT count(*) AS stacked_differ FROM (
    (SELECT x.id, y.id, z.id FROM (ft_r x FULL JOIN ft_s y ON x.a < y.b - 40)
                                  FULL JOIN ft_s z ON z.a > y.a + 40
     EXCEPT ALL
     SELECT r.rid, r.sid, s.id FROM ft_lower r FULL JOIN ft_s s ON s.a > r.sa + 40)
    UNION ALL
    (SELECT r.rid, r.sid, s.id FROM ft_lower r FULL JOIN ft_s s ON s.a > r.sa + 40
     EXCEPT ALL
     SELECT x.id, y.id, z.id FROM (ft_r x FULL JOIN ft_s y ON x.a < y.b - 40)
                                  FULL JOIN ft_s z ON z.a > y.a + 40)) d;
SELECT gj_plan_lines('SELECT x.id, y.id, z.id FROM (ft_r x FULL JOIN ft_s y ON x.a < y.b - 40)
                      FULL JOIN ft_s z ON z.a > y.a + 40',
                     'GpuJoin|Join Type') AS stacked_plan;
DROP TABLE ft_lower;

-- in tiles: a tiny device budget cuts the join matrix into many tiles and
-- steps; with and without device partitions of the sorted joins
SET gpujoin.device_memory = '1kB';
SET gpujoin.device_partitions = off;
SELECT cond, (ft_each_algorithm(cond)).*
FROM (VALUES ('s.b BETWEEN r.a - 1 AND r.a + 1'), ('(r.a + s.b) % 7 = 0'), ('r.a < s.b - 30')) AS v(cond)
ORDER BY cond, forced;
SELECT gj_plan_lines('SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON (r.a + s.b) % 7 = 0',
                     'Tiles Run: ([2-9]|[1-9][0-9]+)$', options => 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') <> '' AS many_tiles;
RESET gpujoin.device_partitions;
SET gpujoin.device_memory = '4kB';
SELECT cond, (ft_each_algorithm(cond)).*
FROM (VALUES ('s.b BETWEEN r.a - 1 AND r.a + 1'), ('r.a < s.b - 30')) AS v(cond)
ORDER BY cond, forced;
SELECT gj_plan_lines('SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON s.b BETWEEN r.a - 1 AND r.a + 1',
                     'Device Partitions: [1-9]', options => 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') <> '' AS device_partitions;
RESET gpujoin.device_memory;

-- spilled: inputs past gpujoin.max_host_memory are joined chunk pair by
-- chunk pair (a FULL join keeps the block nested loop over the chunks: every
-- inner chunk's match flags are complete only after every outer chunk)
CREATE TABLE ft_big_r AS
SELECT g AS id,
       CASE WHEN g % 11 = 0 THEN NULL ELSE g % 700 END AS a,
       CASE WHEN g % 17 = 0 THEN NULL ELSE (g * 7) % 300 END AS b,
       'r' || (g % 500) AS t
FROM generate_series(1, 2400) g;
CREATE TABLE ft_big_s AS
SELECT g AS id,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 3) % 900 END AS a,
       CASE WHEN g % 19 = 0 THEN NULL ELSE (g * 5) % 800 END AS b,
       'r' || (g % 700) AS t
FROM generate_series(1, 2000) g;
ANALYZE ft_big_r, ft_big_s;
SET gpujoin.max_host_memory = '64kB';
SELECT cond, (ft_each_algorithm(cond, r_tab => 'ft_big_r', s_tab => 'ft_big_s')).*
FROM (VALUES ('s.b BETWEEN r.a - 1 AND r.a + 1'), ('(r.a + s.b) % 97 = 0 AND r.b < s.a')) AS v(cond)
ORDER BY cond, forced;
-- spilled, in tiles, with a host qual
SET gpujoin.device_memory = '4kB';
SELECT ft_compare('s.b BETWEEN r.a - 2 AND r.a + 2 AND r.t < s.t', r_tab => 'ft_big_r', s_tab => 'ft_big_s') AS spilled_tiles_host_qual;
RESET gpujoin.device_memory;
SELECT gj_plan_lines('SELECT r.id, s.id FROM ft_big_r r FULL JOIN ft_big_s s ON s.b BETWEEN r.a - 1 AND r.a + 1',
                     'GpuJoin|Join Type|Algorithm|Chunks|Null-Extended',
                     options => 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') AS spilled_plan;
-- spilled and rescanned: with no parameter (its files are read again), and
-- with a parameter of its inner side (drained and spilled again)
BEGIN;
SET LOCAL enable_material = off;
SELECT ft_compare('s.b BETWEEN r.a - 1 AND r.a + 1', 'r.id AS rid, s.id AS sid',
                  'SELECT z.id, j.rid, j.sid FROM (SELECT id FROM ft_r WHERE id <= 3) z,
                   ($JOIN OFFSET 0) j WHERE z.id < coalesce(j.rid, 0) + 2',
                  'ft_big_r', 'ft_big_s') AS spilled_inner_of_nestloop;
COMMIT;
SELECT ft_compare('s.b BETWEEN r.a - 1 AND r.a + 1', 'r.id AS rid, s.id AS sid',
                  'SELECT o.id, (SELECT count(*) || '':'' || count(rid) || '':'' || count(sid) FROM ($JOIN) j) AS n
                   FROM ft_r o WHERE o.id <= 3',
                  'ft_big_r', '(SELECT * FROM ft_big_s WHERE id % 4 <> o.id)') AS spilled_correlated;
RESET gpujoin.max_host_memory;

-- rescans: the match flags of both sides start over each time
SELECT cond, r_tab, s_tab, ft_compare(cond, 'r.id AS rid, s.id AS sid', shape, r_tab, s_tab) AS result
FROM (VALUES
    -- the parameter reaches a host qual of the join
    ('r.a < s.b AND r.id + o.id > s.id', 'ft_r', 'ft_s',
     'SELECT o.id, (SELECT count(*) || '':'' || count(rid) || '':'' || count(sid) FROM ($JOIN) j) AS n FROM ft_r o WHERE o.id <= 30'),
    -- the parameter reaches the inner side: it is drained again
    ('r.a < s.b - 20', 'ft_r', '(SELECT * FROM ft_s WHERE c < o.id % 10)',
     'SELECT o.id, (SELECT count(*) || '':'' || count(rid) || '':'' || count(sid) FROM ($JOIN) j) AS n FROM ft_r o WHERE o.id <= 30'),
    -- ... and the outer side
    ('s.b BETWEEN r.a - 1 AND r.a + 1', '(SELECT * FROM ft_r WHERE id < o.id * 10)', 'ft_s',
     'SELECT o.id, (SELECT count(*) || '':'' || count(rid) || '':'' || count(sid) FROM ($JOIN) j) AS n FROM ft_r o WHERE o.id <= 30')
) AS v(cond, r_tab, s_tab, shape)
ORDER BY cond;

-- LATERAL: the FULL join below a nested loop, its parameter in a host qual
SELECT ft_compare('r.a < s.b - 20 AND r.id > z.id * 50', 'r.id AS rid, s.id AS sid',
                  'SELECT z.id, j.rid, j.sid FROM (SELECT id FROM ft_r WHERE id <= 4) z,
                   LATERAL ($JOIN OFFSET 0) j') AS lateral_host_qual;
-- (a LATERAL reference in a FULL join's ON keeps the subquery from being
-- pulled up, OFFSET 0 or not)
SELECT ft_compare('r.a < s.b - 20 AND r.id > z.id * 50', 'r.id AS rid, s.id AS sid',
                  'SELECT z.id, j.rid, j.sid FROM (SELECT id FROM ft_r WHERE id <= 4) z,
                   LATERAL ($JOIN) j') AS lateral_not_pulled_up;
SELECT gj_plan_lines('SELECT z.id, j.* FROM (SELECT id FROM ft_r WHERE id <= 4) z, LATERAL
                      (SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON r.a < s.b - 20 AND r.id > z.id * 50 OFFSET 0) j',
                     'Nested Loop|GpuJoin|^\s*Host Quals', options => 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') AS plan;

-- a FULL GpuJoin as the inner side of a nested loop, rescanned with no
-- parameter: it runs again over the rows it kept
BEGIN;
SET LOCAL enable_material = off;
SELECT ft_compare('r.a < s.b - 30', 'r.id AS rid, s.id AS sid',
                  'SELECT z.id, j.rid, j.sid FROM (SELECT id FROM ft_r WHERE id <= 3) z,
                   ($JOIN OFFSET 0) j WHERE z.id < coalesce(j.rid, 0) + 2') AS inner_of_nestloop;
SELECT gj_plan_lines('SELECT z.id, j.rid, j.sid FROM (SELECT id FROM ft_r WHERE id <= 3) z,
                      (SELECT r.id AS rid, s.id AS sid FROM ft_r r FULL JOIN ft_s s ON r.a < s.b - 30 OFFSET 0) j
                      WHERE z.id < coalesce(j.rid, 0) + 2',
                     'Nested Loop|GpuJoin', options => 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') AS plan;
COMMIT;

-- GpuJoin is the only path, so it is chosen however much it costs: an
-- equi-join FULL join goes native, the theta one stays GpuJoin
SET gpujoin.cpu_startup_cost = 1e12;
SET gpujoin.cuda_startup_cost = 1e12;
SET gpujoin.cpu_pair_cost = 1e6;
SET gpujoin.cuda_pair_cost = 1e6;
SELECT ft_full_algorithm('SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON r.a = s.b') AS equality,
       ft_full_algorithm('SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON r.a < s.b') AS theta;
SELECT ft_compare('r.a < s.b - 30') AS costly;
RESET gpujoin.cpu_startup_cost;
RESET gpujoin.cuda_startup_cost;
RESET gpujoin.cpu_pair_cost;
RESET gpujoin.cuda_pair_cost;

-- not a partial path: a FULL join's unmatched inner rows need every
-- outer row, which no one process of a Gather sees
BEGIN;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT gj_plan_lines('SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON r.a < s.b',
                     'Gather|GpuJoin') AS parallel_plan;
SELECT ft_compare('r.a < s.b - 30') AS parallel_settings;
COMMIT;

-- where no GpuJoin path is offered, PostgreSQL's own ERROR stays:
-- gpujoin.enabled = off
SET gpujoin.enabled = off;
SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON r.a < s.b;
RESET gpujoin.enabled;
-- no qual the device can evaluate links the two sides (a text compare,
-- numeric arithmetic)
SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON r.t < s.t;
SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON r.t < s.t AND r.a < 10;
SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON s.n BETWEEN r.n - 0.5 AND r.n + 0.5;
-- the only qual linking the sides uses a parameter (the device program
-- has none)
SELECT z.id, j.* FROM (SELECT id FROM ft_r WHERE id <= 4) z,
       LATERAL (SELECT r.id, s.id FROM ft_r r FULL JOIN ft_s s ON r.a < s.b + z.id) j;
-- inputs past gpujoin.max_host_memory that may not spill
SET gpujoin.max_host_memory = '64kB';
SET gpujoin.enable_spill = off;
SELECT count(*) FROM ft_big_r r FULL JOIN ft_big_s s ON s.b BETWEEN r.a - 1 AND r.a + 1;
RESET gpujoin.enable_spill;
RESET gpujoin.max_host_memory;
-- a value of the nullable side the join must carry as a placeholder
SELECT r.id, s.one FROM ft_r r FULL JOIN (SELECT b, 1 AS one FROM ft_s) s ON r.a < s.b;
-- and with an equality PostgreSQL plans it as ever (GpuJoin or native)
SELECT count(*) FROM ft_r r FULL JOIN ft_s s ON r.a = s.b AND r.t < s.t;

DROP TABLE ft_r, ft_s, ft_dup, ft_big_r, ft_big_s;
DROP FUNCTION ft_each_algorithm(text, text, text, text, text);
DROP FUNCTION ft_compare(text, text, text, text, text);
DROP FUNCTION ft_full_algorithm(text);
