-- scripts/demo.sql: GpuJoin next to PostgreSQL's own plans.
-- Timed with EXPLAIN (ANALYZE, TIMING OFF): per-node timing would inflate the
-- native nested loop, which evaluates one qual per call.
\pset pager off
CREATE EXTENSION IF NOT EXISTS gpujoin;
\echo
\echo '== what this backend runs GpuJoin on'
SELECT backend, name, selected, status FROM gpujoin_devices();

DROP TABLE IF EXISTS r, s, fact, dim;
CREATE TABLE r AS SELECT g AS id, (random() * 1000000)::int AS a, (random() * 100000)::int AS t
FROM generate_series(1, 10000) g;
CREATE TABLE s AS SELECT g AS id, (random() * 1000000)::int AS a, (random() * 100000)::int AS t
FROM generate_series(1, 10000) g;
CREATE TABLE fact AS SELECT g AS id, (g * 7919) % 20000 AS k, (g % 100)::float8 AS v
FROM generate_series(1, 200000) g;
CREATE TABLE dim AS SELECT g AS k, (g % 10)::float8 AS w FROM generate_series(0, 19999) g;
ANALYZE r, s, fact, dim;

\echo
\echo '== theta join: count(*) FROM r JOIN s ON r.a > s.a (10k x 10k), GpuJoin'
EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM r JOIN s ON r.a > s.a;
\echo '== the same, native (gpujoin.enabled = off)'
SET gpujoin.enabled = off;
EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM r JOIN s ON r.a > s.a;
RESET gpujoin.enabled;

\echo
\echo '== band join: s.t BETWEEN r.t - 5 AND r.t + 5 (10k x 10k), GpuJoin'
EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM r JOIN s ON s.t BETWEEN r.t - 5 AND r.t + 5;
\echo '== the same, native'
SET gpujoin.enabled = off;
EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM r JOIN s ON s.t BETWEEN r.t - 5 AND r.t + 5;
RESET gpujoin.enabled;

\echo
\echo '== equi-join: sum(f.v * d.w) FROM fact f JOIN dim d ON f.k = d.k (200k x 20k)'
\echo '   GpuJoin (hash) forced with the native join methods off: with default costs'
\echo '   the planner keeps PostgreSQL''s parallel hash join, which is faster here'
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (ANALYZE, TIMING OFF) SELECT sum(f.v * d.w) FROM fact f JOIN dim d ON f.k = d.k;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
\echo '== the same, native'
SET gpujoin.enabled = off;
EXPLAIN (ANALYZE, TIMING OFF) SELECT sum(f.v * d.w) FROM fact f JOIN dim d ON f.k = d.k;
RESET gpujoin.enabled;
