-- theta join with arithmetic, nestloop algorithm
\set lo random(1, 15000)
BEGIN;
SET LOCAL gpujoin.algorithm = nestloop;
SELECT count(*) FROM lr JOIN ls ON lr.a + 1 < ls.b WHERE lr.id BETWEEN :lo AND :lo + 100 AND ls.id <= 4000;
END;
