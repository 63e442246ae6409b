--
-- types_oid: oid and the reg* types (which compare with oid's operators) as
-- device keys.  oid is unsigned: 4294967295 sorts above 1, which the device
-- keeps by zero-extending the value into its int64.  Every join is compared
-- with the native plan as a multiset.
--
SET client_min_messages = warning;
SET gpujoin.enable_aggregate = off;
CREATE TABLE t_oid (id int, o oid);
INSERT INTO t_oid SELECT g, (g * 2654435761::int8 % 4294967296)::oid FROM generate_series(1, 300) g;
INSERT INTO t_oid VALUES (301, 0), (302, 1), (303, 2147483647), (304, 2147483648),
    (305, 4294967295), (306, 4294967294), (307, NULL), (308, 4294967295);
ANALYZE t_oid;

BEGIN;
-- equality (hash), order (sort-merge), a band and <> (nested loop), unsigned order throughout
SELECT gj_compare('SELECT x.id, y.id FROM t_oid x JOIN t_oid y ON x.o = y.o');
SELECT gj_compare('SELECT x.id, y.id FROM t_oid x JOIN t_oid y ON x.o < y.o WHERE x.id > 290');
SELECT gj_compare('SELECT x.id, y.id FROM t_oid x JOIN t_oid y ON x.o >= y.o WHERE y.id > 295');
SELECT gj_compare('SELECT x.id, y.id FROM t_oid x JOIN t_oid y ON x.o > y.o AND x.o <= y.o WHERE x.id > 280');
SELECT gj_compare('SELECT x.id, y.id FROM t_oid x JOIN t_oid y ON x.o <> y.o AND x.id = y.id + 1');
SELECT gj_compare('SELECT x.id, y.id FROM t_oid x LEFT JOIN t_oid y ON x.o < y.o AND y.id > 300');
SELECT gj_compare('SELECT x.id FROM t_oid x WHERE NOT EXISTS (SELECT 1 FROM t_oid y WHERE y.o > x.o)');
SELECT gj_compare('SELECT x.id, y.id FROM t_oid x JOIN t_oid y ON x.o < 2147483648::oid AND y.o > x.o WHERE x.id > 295');
-- count() of an oid argument reduced by the aggregate node (min/max of oid stay PostgreSQL's)
SELECT set_config('gpujoin.enable_aggregate', 'on', true);
SELECT gj_compare('SELECT count(x.o), count(y.o), count(*) FROM t_oid x JOIN t_oid y ON x.o < y.o');
SELECT gj_compare('SELECT min(x.o), max(y.o) FROM t_oid x JOIN t_oid y ON x.o < y.o');
SELECT set_config('gpujoin.enable_aggregate', 'off', true);
-- the device evaluates them
SELECT gj_plan_lines('SELECT x.id, y.id FROM t_oid x JOIN t_oid y ON x.o < y.o', 'GpuJoin|Algorithm|Device Quals|Host Quals');
SELECT gj_plan_lines('SELECT x.id, y.id FROM t_oid x JOIN t_oid y ON x.o = y.o', 'GpuJoin|Algorithm|Device Quals|Host Quals');

-- catalog-style joins, on copies of the built-in rows (oid < 16384, the
-- same in every database; the comparison's own temporary tables change the
-- catalogs): regproc, regclass and regtype against oid
CREATE TEMP TABLE c_type AS SELECT oid, typname, typinput, typrelid FROM pg_type WHERE oid < 16384;
CREATE TEMP TABLE c_proc AS SELECT oid, proname, prorettype FROM pg_proc WHERE oid < 16384;
CREATE TEMP TABLE c_class AS SELECT oid, relname, reltype FROM pg_class WHERE oid < 16384;
CREATE TEMP TABLE c_attr AS SELECT attrelid::regclass AS attrel, attname FROM pg_attribute WHERE attrelid < 16384;
ANALYZE c_type, c_proc, c_class, c_attr;
SELECT gj_compare('SELECT t1.typname, p1.proname FROM c_type t1 JOIN c_proc p1 ON t1.typinput = p1.oid');
SELECT gj_plan_lines('SELECT t1.typname, p1.proname FROM c_type t1 JOIN c_proc p1 ON t1.typinput = p1.oid',
                     'GpuJoin|Algorithm|Device Quals|Host Quals');
SELECT gj_compare('SELECT c.relname, a.attname FROM c_attr a JOIN c_class c ON a.attrel = c.oid');
SELECT gj_compare('SELECT t.typname, c.relname FROM c_type t JOIN c_class c ON c.reltype::regtype = t.oid');
SELECT gj_compare('SELECT p.proname, t.typname FROM c_proc p JOIN c_type t ON p.prorettype < t.oid AND t.typrelid::regclass > ''pg_class''::regclass WHERE p.proname LIKE ''int4%''');
COMMIT;

DROP TABLE t_oid, c_type, c_proc, c_class, c_attr;
