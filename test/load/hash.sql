-- equi-join, hash algorithm
\set lo random(1, 15000)
SELECT count(*), sum(ls.v) FROM lr JOIN ls ON lr.k = ls.k WHERE lr.id BETWEEN :lo AND :lo + 300;
