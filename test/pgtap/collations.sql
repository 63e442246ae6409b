-- collations.sql: which text equalities GpuJoin hashes for the device.  A
-- hashed equality needs a deterministic collation (a nondeterministic one's
-- equal strings may differ in their bytes) and a hash opfamily that holds
-- the operator; anything else stays a host qual, and a join with no other
-- device qual gets no GpuJoin path.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(8);

CREATE TEMP TABLE r AS SELECT g AS id, g % 10 AS a, 'k' || g % 50 AS t, md5(g::text)::uuid AS u
FROM generate_series(1, 500) g;
CREATE TEMP TABLE s AS SELECT g AS id, g % 12 AS b, 'K' || g % 60 AS t, md5(g::text)::uuid AS u
FROM generate_series(1, 500) g;
ANALYZE r;
ANALYZE s;

\ir lib/plans.sql

SET LOCAL enable_nestloop = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;

SELECT matches(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.t = s.t'),
               'Device Quals: \(r.t = s.t\)\n.*Host Quals: \(r.t = s.t\)',
               'text equality: a device qual on the hashes and a host qual');
SELECT matches(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.u = s.u'),
               'Custom Scan \(GpuJoin\)', 'uuid equality runs as GpuJoin');
SELECT doesnt_match(pg_temp.plan_shape('SELECT * FROM r JOIN s ON NOT (r.t = s.t)'),
               'GpuJoin', 'a negated text equality is no device qual');

-- an operator with texteq's function but no hash opfamily
CREATE OPERATOR pg_temp.=== (function = texteq, leftarg = text, rightarg = text);
SELECT doesnt_match(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.t OPERATOR(pg_temp.===) s.t'),
               'GpuJoin', 'an equality outside a hash opfamily is no device qual');

SELECT EXISTS (SELECT FROM pg_collation WHERE collprovider = 'i') AS have_icu \gset
\if :have_icu
CREATE COLLATION pg_temp.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE COLLATION pg_temp.det (provider = icu, locale = 'und');
SELECT doesnt_match(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.t = s.t COLLATE pg_temp.ci'),
               'GpuJoin', 'nondeterministic collation: no GpuJoin path');
SELECT matches(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.t = s.t COLLATE pg_temp.ci AND r.a = s.b'),
               'Device Quals: \(r.a = s.b\)\n\s*Host Quals: \(\(r.t\)::text = \(s.t\)::text\)',
               'nondeterministic collation: the equality is a host qual only');
SELECT is((SELECT count(*) FROM r JOIN s ON r.t = s.t COLLATE pg_temp.ci AND r.a = s.b),
          (SELECT count(*) FROM r JOIN s ON lower(r.t) = lower(s.t) AND r.a = s.b),
          'nondeterministic collation: case-insensitive matches');
SELECT matches(pg_temp.plan_shape('SELECT * FROM r JOIN s ON r.t = s.t COLLATE pg_temp.det'),
               'Custom Scan \(GpuJoin\)', 'deterministic ICU collation runs as GpuJoin');
\else
SELECT skip('ICU is not available in this build', 4);
\endif

SELECT * FROM finish();
ROLLBACK;
