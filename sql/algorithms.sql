--
-- algorithms: the same joins under each algorithm (nestloop, sortmerge,
-- hash), with the device memory budget large (one tile) and tiny (many
-- tiles, most of them pruned by sortmerge and hash), over skewed keys: one
-- hot key with many rows on both sides, Zipf-like keys, NULLs and NaN.
-- Whatever the algorithm, the rows are the native plan's.
--
SET client_min_messages = warning;

CREATE TABLE t_skew AS
SELECT g AS id,
       CASE WHEN g % 3 = 0 THEN 7                      -- one hot key
            WHEN g % 101 = 0 THEN NULL
            ELSE (1000 / (1 + g % 97))::int END AS k,  -- Zipf-like tail
       CASE WHEN g % 89 = 0 THEN 'NaN'::float8
            WHEN g % 83 = 0 THEN NULL
            ELSE (g % 211) / 3.0 END AS f,
       (g * 37) % 500 AS t
FROM generate_series(1, 900) g;
ANALYZE t_skew;

CREATE TABLE gj_queries (q text);
INSERT INTO gj_queries VALUES
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON x.k = y.k'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON x.k = y.k AND x.t < y.t'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON x.k = y.k AND x.f = y.f'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON x.f = y.f'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_int y ON x.k = y.c / 1000000000'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.a = y.b'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON x.f4 = y.f8'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON x.d = y.d'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON x.t < y.t AND y.t < x.t + 4'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON y.t BETWEEN x.t - 2 AND x.t + 2'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON x.f > y.f AND x.k <> y.k'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON x.f >= y.f - 0.5 AND x.f <= y.f'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON y.f8 BETWEEN x.f8 - 1 AND x.f8 + 1'),
    ('SELECT x.id, y.id FROM t_flt x JOIN t_flt y ON y.f4 > x.f8'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON y.d BETWEEN x.d AND x.d + 3 WHERE x.id <= 200'),
    ('SELECT x.id, y.id FROM t_time x JOIN t_time y ON y.ts > x.ts AND y.ts <= x.ts + interval ''3 hours'' WHERE x.id <= 200'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON y.b BETWEEN x.a AND x.b'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON y.c >= x.c * 2 AND y.c < x.c + 5000000000 WHERE x.id <= 240'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b = y.b AND x.id::text < y.id::text'),
    ('SELECT x.*, y.* FROM t_empty x JOIN t_skew y ON x.b = y.k'),
    ('SELECT x.*, y.* FROM t_one x JOIN t_skew y ON y.t BETWEEN x.b AND x.b + 50'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON abs(x.t - y.t) <= 3'),
    ('SELECT x.id, y.id FROM t_skew x JOIN t_skew y ON 2 > abs(y.k - x.k) AND x.f < y.f'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON abs(x.b - y.b) <= x.a WHERE x.id <= 240 AND y.id <= 240'),
    ('SELECT x.id, y.id FROM t_int x JOIN t_int y ON abs(y.c - x.c) < 2000000000 WHERE x.id <= 240 AND y.id <= 240');

-- an outer row whose bound overflows (compared with every inner row) next
-- to rows with exact bounds: each keeps its own bounds
CREATE TABLE t_bound_r (id int, a int);
INSERT INTO t_bound_r VALUES (1, 0), (2, 2147483647), (3, 100);
CREATE TABLE t_bound_s (b int);
INSERT INTO t_bound_s VALUES (0), (50), (100), (1000);
SET gpujoin.algorithm = sortmerge;
SELECT gj_compare('SELECT r.id, s.b FROM t_bound_r r JOIN t_bound_s s ON s.b BETWEEN r.a - 5 AND r.a + 5') AS result;
SELECT gj_compare('SELECT r.id, s.b FROM t_bound_r r JOIN t_bound_s s ON s.b BETWEEN r.a - 5 AND r.a + 5 WHERE r.id <> 2') AS result;
BEGIN;
SELECT gj_force(true);
SELECT r.id, s.b FROM t_bound_r r JOIN t_bound_s s ON s.b BETWEEN r.a - 5 AND r.a + 5 AND r.a < 2147483647 ORDER BY 1, 2;
ROLLBACK;
RESET gpujoin.algorithm;

-- errors in a bound expression: the host evaluates those rows as PostgreSQL does
SELECT gj_compare_error('SELECT x.id, y.id FROM t_int x JOIN t_int y ON y.b > x.b + 1') AS result;
-- an abs() band whose subtraction overflows on some pair: the native plan
-- raises the overflow, so GpuJoin runs it as a nested loop and does too
SELECT gj_compare_error('SELECT x.id, y.id FROM t_int x JOIN t_int y ON abs(x.b - y.b) <= 5') AS result;
SELECT gj_compare_error('SELECT x.id, y.id FROM t_int x JOIN t_int y ON abs(x.a - y.a) < 2') AS result;
SELECT gj_compare_error('SELECT x.id, y.id FROM t_int x JOIN t_int y ON abs(x.c - y.c) <= 5 WHERE x.id = 241') AS result;
-- where a cheaper qual keeps PostgreSQL from evaluating the overflowing
-- pairs, the nested loop returns the same rows, and EXPLAIN says why it ran
SELECT gj_compare('SELECT x.id, y.id FROM t_int x JOIN t_int y ON greatest(x.id, y.id) < 241 AND abs(x.b - y.b) <= 5') AS result;
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_int x JOIN t_int y ON greatest(x.id, y.id) < 241 AND abs(x.b - y.b) <= 5', true) AS line
WHERE line ~ 'Algorithm';
SELECT line FROM gj_explain('SELECT x.id, y.id FROM t_int x JOIN t_int y ON abs(x.b - y.b) <= 5 WHERE x.id < 241 AND y.id < 241', true) AS line
WHERE line ~ 'Algorithm';

SELECT a.algorithm, m.budget, count(*) AS queries,
       string_agg(DISTINCT regexp_replace(gj_compare(q), '^[0-9]+ rows, ', ''), ', ') AS plans,
       count(*) FILTER (WHERE gj_compare(q) LIKE 'MISMATCH%') AS mismatches
FROM gj_queries,
     unnest(ARRAY['nestloop', 'sortmerge', 'hash', 'auto']) AS a(algorithm),
     unnest(ARRAY['0', '2kB']) AS m(budget),
     LATERAL (SELECT set_config('gpujoin.algorithm', a.algorithm, false),
                     set_config('gpujoin.device_memory', m.budget, false)) s
GROUP BY 1, 2
ORDER BY 1, 2;
RESET gpujoin.algorithm;
RESET gpujoin.device_memory;

-- every query, each result once (auto algorithm)
SELECT q, gj_compare(q) AS result FROM gj_queries ORDER BY q;

-- an equality on a key whose lower bound another clause already gave: the
-- equality gives only the upper bound, so the candidates still need the
-- device quals (found by the fuzzer: the range was taken as the condition)
SET gpujoin.algorithm = sortmerge;
SELECT gj_compare('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.a < y.b AND x.b = y.b') AS lower_first;
SELECT gj_compare('SELECT x.id, y.id FROM t_int x JOIN t_int y ON x.b = y.b AND x.a < y.b') AS equality_first;
SELECT gj_compare('SELECT x.id, y.id FROM t_int x JOIN t_int y ON y.b <= x.a + 3 AND y.b = x.b') AS upper_first;
SELECT gj_compare('SELECT count(*) FROM t_int x JOIN t_int y ON x.a < y.b AND x.b = y.b') AS aggregate;
RESET gpujoin.algorithm;
