-- found by test/fuzz/fuzz.pl (seed 20261123, FUZZ_CASES=200, case 74: the
-- 'group' shape), shrunk by hand.
--
-- A row whose key has no exact device value (r.n = 1e20: no int64 holds it
-- at the join's scale) is NULL to the backend, and all its pairs are
-- evaluated on the host after the last step (GJ_PHASE_HOST_PAIRS).  But
-- under an OR the device still decides its pairs: r.i4 > s.i4 is true, so
-- NULL OR true is true.  The node's emit path and its host reduction skip
-- such device matches (gpujoin_skip_inexact_pair); the backend's fold of an
-- aggregate step (agg_step: gj_agg_fold_pairs on cpu, the fold kernel on
-- cuda) does not, so the aggregate counts each such pair twice.  Nested
-- loop, and sort-merge and hash with the OR among their extra quals
-- (sql/agg_device.sql, "Keys with no exact device value").
--
-- Expected: 2 | 11 (r.id 1 joins both rows of s, r.id 2 neither).
-- Got: GpuJoin 4 | 22.
DROP TABLE IF EXISTS r, s;
CREATE TABLE r AS SELECT * FROM (VALUES (1, 100, 1e20), (2, -100, 1e20)) v(id, i4, n);
CREATE TABLE s AS SELECT * FROM (VALUES (1, 5, 0.5), (2, 6, 0.25)) v(id, i4, n);
ANALYZE r, s;
SET gpujoin.enabled = off;
SELECT count(*), sum(s.i4) FROM r JOIN s ON r.i4 > s.i4 OR r.n = s.n;
SET gpujoin.enabled = on;
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(s.i4) FROM r JOIN s ON r.i4 > s.i4 OR r.n = s.n;
SELECT count(*), sum(s.i4) FROM r JOIN s ON r.i4 > s.i4 OR r.n = s.n;
SET gpujoin.enable_aggregate = off;
SELECT count(*), sum(s.i4) FROM r JOIN s ON r.i4 > s.i4 OR r.n = s.n;
