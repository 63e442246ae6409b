-- a GpuJoin of seconds ended by statement_timeout (the cancel is caught)
\set alg random(0, 2)
SET statement_timeout = '40ms';
SELECT load_long_join((ARRAY['nestloop', 'sortmerge', 'hash'])[:alg + 1]);
SET statement_timeout = 0;
