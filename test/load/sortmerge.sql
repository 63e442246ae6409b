-- band join, sortmerge algorithm, sometimes with a tiny device memory (many tiles)
\set lo random(1, 15000)
\set mem random(0, 1)
BEGIN;
SELECT set_config('gpujoin.device_memory', CASE WHEN :mem = 1 THEN '8kB' ELSE '0' END, true);
SELECT count(*), max(ls.id) FROM lr JOIN ls ON ls.t BETWEEN lr.t - 3 AND lr.t + 3 WHERE lr.id BETWEEN :lo AND :lo + 3000;
END;
