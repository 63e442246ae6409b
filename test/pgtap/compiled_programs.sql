-- compiled_programs.sql: gpujoin.compile_programs (issue 37).
-- It proves: the setting takes off, on and always (and a boolean's
-- spellings); a nested-loop count whose program is more than its leading
-- compares gives the native plan's answer with the setting off, on and
-- always, over NULLs, duplicates and an int4 sum that overflows for some
-- pairs (those pairs are the host's to recheck, and PostgreSQL raises its
-- error for them in both plans); a nested loop that returns its rows
-- (the pairs kernels) gives the native plan's rows with the setting off
-- and always; a band join with a residual qual (the sort-merge steps'
-- count pass) gives the native count with the setting off and always;
-- aggregates over both sides of the nested loop (folded on the device,
-- from the verdict kernel's bits on cuda) give the native aggregates;
-- EXPLAIN ANALYZE names how the program ran; the kernel store's
-- directory is pg_gpujoin/kernels, set by the server's configuration only,
-- and holds the kernel compiled on cuda.  Where the join ran on the cuda backend (directly or in the GPU
-- service), always compiles the program at CI size, the next run finds it
-- in the cache, on uses it and off interprets it; on the cpu backend every
-- program is interpreted.
\set ON_ERROR_STOP 1
\pset format unaligned
\pset tuples_only true
\pset pager off
BEGIN;
SELECT plan(32);

\ir lib/plans.sql

CREATE FUNCTION pg_temp.program_line(q text) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(substring(pg_temp.explain_analyze(q) FROM 'Program: ([^\n]*)'), '(none)')
$$;

-- the setting: on by default (the server's built-in value; a test cluster may set another)
SELECT is((SELECT boot_val FROM pg_settings WHERE name = 'gpujoin.compile_programs'), 'on',
          'compile_programs is on by default');
SET LOCAL gpujoin.compile_programs = always;
SELECT is(current_setting('gpujoin.compile_programs'), 'always', 'compile_programs takes always');
SET LOCAL gpujoin.compile_programs = true;
SELECT is(current_setting('gpujoin.compile_programs'), 'on', 'compile_programs takes true, as on');
SET LOCAL gpujoin.compile_programs = off;
SELECT is(current_setting('gpujoin.compile_programs'), 'off', 'compile_programs takes off');
SELECT throws_ok($$SET LOCAL gpujoin.compile_programs = sometimes$$, '22023', NULL,
                 'compile_programs refuses a value it does not know');

-- the kernel store: compiled kernels kept in the data directory, set by the server's configuration
SELECT is((SELECT boot_val || ' ' || context FROM pg_settings WHERE name = 'gpujoin.compiled_kernel_dir'),
          'pg_gpujoin/kernels sighup', 'compiled_kernel_dir is pg_gpujoin/kernels by default, set at reload');
SELECT throws_ok($$SET LOCAL gpujoin.compiled_kernel_dir = '/tmp'$$, '55P02', NULL,
                 'a session cannot move the kernel store');

-- r x s: 1,500 x 1,200 rows with NULLs and duplicates; x + y overflows
-- int4 for the pairs of the two rows of r and s near INT_MAX
CREATE TEMP TABLE cp_r AS
    SELECT i AS id, (i * 37) % 500 AS a, (i * 11) % 400 AS b,
           CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7) % 300 - 150 END AS x
    FROM generate_series(1, 1500) i;
CREATE TEMP TABLE cp_s AS
    SELECT i AS id, (i * 13) % 500 AS a, (i * 29) % 400 AS b,
           CASE WHEN i % 23 = 0 THEN NULL ELSE (i * 5) % 280 - 100 END AS y
    FROM generate_series(1, 1200) i;
ANALYZE cp_r;
ANALYZE cp_s;

CREATE TEMP TABLE cp_native AS
    SELECT count(*) AS n FROM cp_r r JOIN cp_s s ON r.a < s.a AND r.b > s.b AND r.x + s.y > 0;
SELECT ok((SELECT n FROM cp_native) > 0, 'the native count is not zero');

SELECT pg_temp.serial_gpu_nestloop() \g /dev/null

\set q 'SELECT count(*) FROM cp_r r JOIN cp_s s ON r.a < s.a AND r.b > s.b AND r.x + s.y > 0'

SELECT alike(pg_temp.explain_analyze(:'q'), '%GpuJoin%', 'the count runs as a GpuJoin');
SELECT (pg_temp.explain_analyze(:'q') ~ 'Backend: [^\n]*cuda') AS on_cuda \gset

SET LOCAL gpujoin.compile_programs = off;
SELECT is((SELECT count(*) FROM cp_r r JOIN cp_s s ON r.a < s.a AND r.b > s.b AND r.x + s.y > 0),
          (SELECT n FROM cp_native), 'off: the native count');
SET LOCAL gpujoin.compile_programs = on;
SELECT is((SELECT count(*) FROM cp_r r JOIN cp_s s ON r.a < s.a AND r.b > s.b AND r.x + s.y > 0),
          (SELECT n FROM cp_native), 'on: the native count');
SET LOCAL gpujoin.compile_programs = always;
SELECT is((SELECT count(*) FROM cp_r r JOIN cp_s s ON r.a < s.a AND r.b > s.b AND r.x + s.y > 0),
          (SELECT n FROM cp_native), 'always: the native count');

\if :on_cuda
SET LOCAL gpujoin.compile_programs = always;
SELECT ok(pg_temp.program_line(:'q') ~ '^compiled', 'cuda, always: the program ran compiled');
SELECT is(pg_temp.program_line(:'q'), 'compiled (cached)', 'cuda, always: the next run finds it compiled');
SET LOCAL gpujoin.compile_programs = on;
SELECT is(pg_temp.program_line(:'q'), 'compiled (cached)',
          'cuda, on: a small join uses the program compiled already');
SET LOCAL gpujoin.compile_programs = off;
SELECT is(pg_temp.program_line(:'q'), 'interpreted (gpujoin.compile_programs is off)',
          'cuda, off: interpreted');
SELECT ok((SELECT count(*) FROM pg_ls_dir(current_setting('gpujoin.compiled_kernel_dir'), true, false) f
           WHERE f LIKE '%.gjk') > 0, 'cuda: the compiled kernel is in the kernel store');
\else
SET LOCAL gpujoin.compile_programs = always;
SELECT is(pg_temp.program_line(:'q'), '(none)', 'cpu, always: no program line (the cpu backend always interprets)');
SELECT ok(pg_temp.explain_analyze(:'q') ~ 'Backend: [^\n]*cpu', 'not cuda: the join ran on the cpu backend');
SET LOCAL gpujoin.compile_programs = on;
SELECT ok(pg_temp.program_line(:'q') !~ '^compiled', 'cpu, on: interpreted');
SET LOCAL gpujoin.compile_programs = off;
SELECT ok(pg_temp.program_line(:'q') !~ '^compiled', 'cpu, off: interpreted');
SET LOCAL gpujoin.compile_programs = always;
SELECT ok(pg_temp.explain_analyze(:'q') !~ 'kernel store', 'cpu: nothing loaded from the kernel store');
\endif

-- rows returned: the nested loop's pairs kernels, compiled on cuda with always
\set qr 'SELECT r.id AS rid, s.id AS sid, r.x + s.y AS xy FROM cp_r r JOIN cp_s s ON r.a < s.a AND r.b > s.b AND r.x + s.y > 0 WHERE r.id % 5 = 0'
SET LOCAL gpujoin.enabled = off;
CREATE TEMP TABLE cp_native_rows AS SELECT pg_temp.rows_of(:'qr') AS r;
SET LOCAL gpujoin.enabled = on;
SELECT ok(cardinality((SELECT r FROM cp_native_rows)) > 1000, 'the native rows are many');
SET LOCAL gpujoin.compile_programs = off;
SELECT is(pg_temp.rows_of(:'qr'), (SELECT r FROM cp_native_rows), 'rows, off: the native rows');
SET LOCAL gpujoin.compile_programs = always;
SELECT is(pg_temp.rows_of(:'qr'), (SELECT r FROM cp_native_rows), 'rows, always: the native rows');
\if :on_cuda
SELECT ok(pg_temp.program_line(:'qr') ~ '^compiled', 'cuda, always: the pairs kernels ran compiled');
\else
SELECT is(pg_temp.program_line(:'qr'), '(none)', 'cpu, always: no program line for the rows either');
\endif

-- a band join with a residual qual: the sort-merge steps' count pass (its
-- verdicts read by the aggregate fold), compiled on cuda with always
\set qb 'SELECT count(*) FROM cp_r r JOIN cp_s s ON s.a BETWEEN r.a - 20 AND r.a + 20 AND r.x + s.y > 0'
SET LOCAL gpujoin.enabled = off;
SELECT (:qb) AS native_qb \gset
SET LOCAL gpujoin.enabled = on;
SET LOCAL gpujoin.algorithm = sortmerge;
SET LOCAL gpujoin.compile_programs = always;
SELECT ok(pg_temp.explain_analyze(:'qb') ~ 'Algorithm: sortmerge', 'the band join runs as a sort-merge GpuJoin');
SELECT is((:qb), :native_qb::bigint, 'band and residual, always: the native count');
SET LOCAL gpujoin.compile_programs = off;
SELECT is((:qb), :native_qb::bigint, 'band and residual, off: the native count');
SET LOCAL gpujoin.compile_programs = always;
\if :on_cuda
SELECT ok(pg_temp.program_line(:'qb') ~ '^compiled', 'cuda, always: the sort-merge steps ran their program compiled');
\else
SELECT is(pg_temp.program_line(:'qb'), '(none)', 'cpu, always: no program line for the sort-merge steps');
\endif
SELECT pg_temp.serial_gpu_nestloop() \g /dev/null

-- aggregates over both sides of the nested loop: its steps fold on the
-- device, reading each pair's verdict from the compiled verdict kernel on
-- cuda with always
\set qa 'SELECT count(*) AS n, sum(s.y) AS sy, min(r.x - s.y) AS m FROM cp_r r JOIN cp_s s ON r.a < s.a AND r.b > s.b AND r.x + s.y > 0'
SET LOCAL gpujoin.enabled = off;
CREATE TEMP TABLE cp_native_agg AS :qa;
SET LOCAL gpujoin.enabled = on;
SET LOCAL gpujoin.compile_programs = always;
SELECT ok(pg_temp.explain_analyze(:'qa') ~ 'GPU Aggregates', 'the aggregates fold in the nested-loop GpuJoin');
SELECT is((SELECT row(n, sy, m)::text FROM (:qa) q), (SELECT row(n, sy, m)::text FROM cp_native_agg),
          'nested-loop aggregates, always: the native aggregates');
SET LOCAL gpujoin.compile_programs = off;
SELECT is((SELECT row(n, sy, m)::text FROM (:qa) q), (SELECT row(n, sy, m)::text FROM cp_native_agg),
          'nested-loop aggregates, off: the native aggregates');
SET LOCAL gpujoin.compile_programs = always;
\if :on_cuda
SELECT ok(pg_temp.program_line(:'qa') ~ '^compiled', 'cuda, always: the folds read the compiled verdicts');
\else
SELECT is(pg_temp.program_line(:'qa'), '(none)', 'cpu, always: no program line for the folds');
\endif

-- an int4 overflow in the program: the pairs are rechecked on the host,
-- whose int4pl raises PostgreSQL's error in both plans
INSERT INTO cp_r VALUES (10001, 0, 399, 2147483000);
INSERT INTO cp_s VALUES (10001, 499, 0, 2147483000);
SET LOCAL gpujoin.compile_programs = always;
SELECT throws_ok(:'q', '22003', 'integer out of range', 'always: an overflowing pair raises the native error');
SET LOCAL gpujoin.compile_programs = off;
SELECT throws_ok(:'q', '22003', 'integer out of range', 'off: the same error');
SET LOCAL gpujoin.enabled = off;
SELECT throws_ok(:'q', '22003', 'integer out of range', 'native: the same error');

SELECT * FROM finish();
ROLLBACK;
