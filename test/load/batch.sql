-- batch.sql: one of each GpuJoin the load test runs, in one session, with
-- the errors and cancels it must survive (the memory test runs it in a loop).
SELECT count(*), sum(ls.v) FROM lr JOIN ls ON lr.k = ls.k WHERE lr.id BETWEEN 100 AND 400;
SELECT count(*), max(ls.id) FROM lr JOIN ls ON ls.t BETWEEN lr.t - 3 AND lr.t + 3 WHERE lr.id BETWEEN 1 AND 3000;
SET gpujoin.device_memory = '8kB';
SELECT count(*), max(ls.id) FROM lr JOIN ls ON ls.t BETWEEN lr.t - 3 AND lr.t + 3 WHERE lr.id BETWEEN 1 AND 3000;
SELECT count(*), sum(ls.v) FROM lr JOIN ls ON lr.k = ls.k WHERE lr.id BETWEEN 100 AND 400;
RESET gpujoin.device_memory;
SET gpujoin.algorithm = nestloop;
SELECT count(*) FROM lr JOIN ls ON lr.a + 1 < ls.b WHERE lr.id BETWEEN 1 AND 100 AND ls.id <= 4000;
-- an error raised by the host recheck (integer out of range)
SELECT count(*) FROM lr JOIN ls ON lr.a * 1000000 < ls.b * 1000000 WHERE lr.id <= 100;
RESET gpujoin.algorithm;
-- an error in the middle of a sortmerge join
SELECT count(*) FROM lr JOIN ls ON ls.a BETWEEN lr.a - 2147483647 AND lr.a + 2147483647 WHERE lr.id <= 100;
-- statement_timeout in the middle of each algorithm
SET statement_timeout = '30ms';
SELECT count(*) FROM lr x JOIN ls y ON x.h = y.h;
SELECT count(*) FROM lr x JOIN ls y ON x.a < y.a;
SET gpujoin.algorithm = nestloop;
SELECT count(*) FROM lr x JOIN ls y ON x.a + 1 < y.b - 1;
RESET gpujoin.algorithm;
RESET statement_timeout;
-- a cursor closed before the join is done
BEGIN;
DECLARE c CURSOR FOR SELECT lr.id, ls.id FROM lr JOIN ls ON lr.k = ls.k;
FETCH 10 FROM c;
CLOSE c;
COMMIT;
-- an aborted transaction with an open GpuJoin cursor
BEGIN;
DECLARE c CURSOR FOR SELECT lr.id, ls.id FROM lr JOIN ls ON lr.t < ls.t;
FETCH 10 FROM c;
ROLLBACK;
