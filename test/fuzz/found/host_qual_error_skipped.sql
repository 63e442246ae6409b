-- found by test/fuzz/fuzz.pl (seed 20261123, case 16), shrunk by hand.
--
-- A host qual that raises an error is evaluated only on the pairs that pass
-- the device quals, whatever PostgreSQL's qual order is.  PostgreSQL
-- evaluates r.j4 < s.j4 (cheapest) first, then r.d + 2147483647 > s.ts,
-- which raises "date out of range"; GpuJoin evaluates the device quals
-- (r.j4 < s.j4 AND r.d - 3 <= s.d), which are false, and never reaches the
-- host qual: it returns 0 rows where PostgreSQL raises an error, with every
-- algorithm (nestloop too, where no join key excuses it).
--
-- Expected: both raise ERROR: date out of range.
-- Got: native ERROR, GpuJoin 0 rows.
DROP TABLE IF EXISTS r, s;
CREATE TABLE r AS SELECT 1 AS j4, date '2000-01-01' AS d;
CREATE TABLE s AS SELECT 2 AS j4, date '1999-01-01' AS d, timestamp '2000-01-01' AS ts;
ANALYZE r, s;
SET gpujoin.enabled = off;
SELECT * FROM r JOIN s ON r.j4 < s.j4 AND r.d + 2147483647 > s.ts AND r.d - 3 <= s.d;
SET gpujoin.enabled = on;
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET gpujoin.algorithm = nestloop;
EXPLAIN (COSTS OFF) SELECT * FROM r JOIN s ON r.j4 < s.j4 AND r.d + 2147483647 > s.ts AND r.d - 3 <= s.d;
SELECT * FROM r JOIN s ON r.j4 < s.j4 AND r.d + 2147483647 > s.ts AND r.d - 3 <= s.d;
