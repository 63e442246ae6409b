-- a GpuJoin of seconds ended by statement_timeout (the cancel is caught).
-- The timer runs from the start of the SELECT, so it must leave time to
-- reach load_long_join's block: 40 ms did not always under eight clients on
-- two cores (the cancel came while the call was set up, outside the block,
-- and pgbench ended the client); the join takes seconds on every backend.
\set alg random(0, 2)
SET statement_timeout = '250ms';
SELECT load_long_join((ARRAY['nestloop', 'sortmerge', 'hash'])[:alg + 1]);
SET statement_timeout = 0;
