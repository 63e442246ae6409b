--
-- modify: GpuJoin below UPDATE ... FROM, DELETE ... USING and MERGE whose
-- target is an inheritance parent, a partitioned table, a view with INSTEAD
-- OF triggers or sits in a data-modifying WITH.  The planner carries such a
-- target's row-identity columns (tableoid, ctid, wholerow) through the join
-- as ROWID_VAR Vars; EXPLAIN VERBOSE must name them as PostgreSQL's own join
-- does, and each statement must leave the same rows behind as the native
-- plan (gj_compare_dml runs it both ways, each time rolled back).
--
SET client_min_messages = warning;

-- EXPLAIN (VERBOSE, COSTS OFF) of the forced GpuJoin plan, the device line masked
CREATE FUNCTION gj_explain_verbose(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    PERFORM gj_force(true);
    FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query LOOP
        CONTINUE WHEN line ~ '^\s*(Device|Backend): ';
        RETURN NEXT line;
    END LOOP;
    PERFORM set_config('gpujoin.enabled', 'on', true);
END $$;

-- Runs a data-modifying statement with GpuJoin forced and natively, each in a
-- subtransaction that is rolled back, and compares what it returned (its row
-- count) and the rows of check_query afterwards, as multisets.
CREATE FUNCTION gj_compare_dml(stmt text, check_query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    used boolean;
    on_gpu boolean;
    changed bigint;
    after text[];
    changed_gpu bigint;
    changed_native bigint;
    after_gpu text[];
    after_native text[];
BEGIN
    PERFORM gj_force(true);
    used := gj_uses_gpujoin(stmt);
    FOREACH on_gpu IN ARRAY ARRAY[true, false] LOOP
        PERFORM gj_force(on_gpu);
        BEGIN
            EXECUTE stmt;
            GET DIAGNOSTICS changed = ROW_COUNT;
            EXECUTE format('SELECT array_agg(r ORDER BY r) FROM (SELECT q::text AS r FROM (%s) q) s',
                           check_query) INTO after;
            RAISE EXCEPTION USING ERRCODE = 'GJ001';
        EXCEPTION WHEN SQLSTATE 'GJ001' THEN
            NULL;
        END;
        IF on_gpu THEN
            changed_gpu := changed;
            after_gpu := after;
        ELSE
            changed_native := changed;
            after_native := after;
        END IF;
    END LOOP;
    PERFORM set_config('gpujoin.enabled', 'on', true);
    IF changed_gpu IS DISTINCT FROM changed_native OR after_gpu IS DISTINCT FROM after_native THEN
        RETURN format('MISMATCH: gpujoin %s rows changed, native %s; rows after differ: %s',
                      changed_gpu, changed_native, after_gpu IS DISTINCT FROM after_native);
    END IF;
    RETURN format('%s rows changed, %s rows after, %s', changed_gpu,
                  coalesce(cardinality(after_gpu), 0),
                  CASE WHEN used THEN 'GpuJoin' ELSE 'native' END);
END $$;

-- an inheritance parent, a partitioned table, a join partner, a view
CREATE TABLE m_parent (id int, v int, note text);
CREATE TABLE m_child (extra int) INHERITS (m_parent);
INSERT INTO m_parent SELECT g, g % 7, 'p' || g FROM generate_series(1, 400) g;
INSERT INTO m_child SELECT g, g % 5, 'c' || g, g FROM generate_series(201, 600) g;
INSERT INTO m_parent VALUES (NULL, 0, 'null key');

CREATE TABLE m_part (id int, v int) PARTITION BY RANGE (id);
CREATE TABLE m_part_lo PARTITION OF m_part FOR VALUES FROM (MINVALUE) TO (300);
CREATE TABLE m_part_hi PARTITION OF m_part FOR VALUES FROM (300) TO (MAXVALUE);
INSERT INTO m_part SELECT g, g % 11 FROM generate_series(1, 500) g;

CREATE TABLE m_src (id int, w int);
INSERT INTO m_src SELECT g * 3, g FROM generate_series(1, 250) g;
-- no id twice: an UPDATE would pick either of its matches, a MERGE would fail
INSERT INTO m_src VALUES (NULL, 0);

CREATE TABLE m_log (op text, id int, v int);
CREATE VIEW m_view AS SELECT id, v FROM m_parent;
CREATE FUNCTION m_view_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        INSERT INTO m_log VALUES ('update', OLD.id, NEW.v);
        RETURN NEW;
    END IF;
    INSERT INTO m_log VALUES ('delete', OLD.id, OLD.v);
    RETURN OLD;
END $$;
CREATE TRIGGER m_view_update INSTEAD OF UPDATE OR DELETE ON m_view
    FOR EACH ROW EXECUTE FUNCTION m_view_trigger();
ANALYZE m_parent, m_child, m_part, m_src;

BEGIN;
-- UPDATE ... FROM an inheritance parent: equality (hash) and a band (sort-merge)
SELECT * FROM gj_explain_verbose('UPDATE m_parent p SET v = p.v + s.w FROM m_src s WHERE p.id = s.id');
SELECT gj_compare_dml('UPDATE m_parent p SET v = p.v + s.w FROM m_src s WHERE p.id = s.id',
                      'SELECT tableoid::regclass, * FROM m_parent');
SELECT * FROM gj_explain_verbose('UPDATE m_parent p SET v = -1 FROM m_src s WHERE p.id BETWEEN s.id - 1 AND s.id + 1');
SELECT gj_compare_dml('UPDATE m_parent p SET v = -1 FROM m_src s WHERE p.id BETWEEN s.id - 1 AND s.id + 1',
                      'SELECT tableoid::regclass, * FROM m_parent');

-- DELETE ... USING an inheritance parent, and semi and anti joins
SELECT * FROM gj_explain_verbose('DELETE FROM m_parent p USING m_src s WHERE p.id = s.id');
SELECT gj_compare_dml('DELETE FROM m_parent p USING m_src s WHERE p.id = s.id',
                      'SELECT tableoid::regclass, * FROM m_parent');
SELECT * FROM gj_explain_verbose('DELETE FROM m_parent p WHERE EXISTS (SELECT 1 FROM m_src s WHERE s.id < p.id AND s.w > 150)');
SELECT gj_compare_dml('DELETE FROM m_parent p WHERE EXISTS (SELECT 1 FROM m_src s WHERE s.id < p.id AND s.w > 150)',
                      'SELECT tableoid::regclass, * FROM m_parent');
SELECT gj_compare_dml('DELETE FROM m_parent p WHERE NOT EXISTS (SELECT 1 FROM m_src s WHERE s.id = p.id)',
                      'SELECT tableoid::regclass, * FROM m_parent');

-- an outer join below the target's join
SELECT * FROM gj_explain_verbose('UPDATE m_parent p SET v = coalesce(t.w, -2) FROM m_src s LEFT JOIN m_src t ON t.id = s.id + 3 WHERE p.id = s.id');
SELECT gj_compare_dml('UPDATE m_parent p SET v = coalesce(t.w, -2) FROM m_src s LEFT JOIN m_src t ON t.id = s.id + 3 WHERE p.id = s.id',
                      'SELECT tableoid::regclass, * FROM m_parent');

-- a partitioned table
SELECT * FROM gj_explain_verbose('UPDATE m_part p SET v = s.w FROM m_src s WHERE p.id = s.id');
SELECT gj_compare_dml('UPDATE m_part p SET v = s.w FROM m_src s WHERE p.id = s.id',
                      'SELECT tableoid::regclass, * FROM m_part');
SELECT gj_compare_dml('UPDATE m_part p SET id = p.id + 300 FROM m_src s WHERE p.id = s.id',
                      'SELECT tableoid::regclass, * FROM m_part');
SELECT gj_compare_dml('DELETE FROM m_part p USING m_src s WHERE p.id > s.id AND p.id < s.id + 2',
                      'SELECT tableoid::regclass, * FROM m_part');

-- MERGE: an inner join when every action is WHEN MATCHED, an outer join otherwise
SELECT * FROM gj_explain_verbose('MERGE INTO m_part p USING m_src s ON p.id = s.id
    WHEN MATCHED AND s.w > 100 THEN DELETE
    WHEN MATCHED THEN UPDATE SET v = p.v + s.w');
SELECT gj_compare_dml('MERGE INTO m_part p USING m_src s ON p.id = s.id
    WHEN MATCHED AND s.w > 100 THEN DELETE
    WHEN MATCHED THEN UPDATE SET v = p.v + s.w',
                      'SELECT tableoid::regclass, * FROM m_part');
SELECT * FROM gj_explain_verbose('MERGE INTO m_part p USING m_src s ON p.id = s.id
    WHEN MATCHED THEN UPDATE SET v = s.w
    WHEN NOT MATCHED AND s.id IS NOT NULL THEN INSERT VALUES (s.id + 1000, s.w)');
SELECT gj_compare_dml('MERGE INTO m_part p USING m_src s ON p.id = s.id
    WHEN MATCHED THEN UPDATE SET v = s.w
    WHEN NOT MATCHED AND s.id IS NOT NULL THEN INSERT VALUES (s.id + 1000, s.w)',
                      'SELECT tableoid::regclass, * FROM m_part');
SELECT gj_compare_dml('MERGE INTO m_parent p USING m_src s ON p.id = s.id
    WHEN MATCHED THEN UPDATE SET v = s.w, note = p.note || ''!''
    WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.w)',
                      'SELECT tableoid::regclass, * FROM m_parent');

-- data-modifying WITH: the GpuJoin in the WITH, and a WITH's rows joined to the target
SELECT * FROM gj_explain_verbose('WITH d AS (DELETE FROM m_parent p USING m_src s WHERE p.id = s.id RETURNING p.id, s.w)
    SELECT count(*), sum(w) FROM d');
SELECT gj_compare_dml('WITH d AS (DELETE FROM m_parent p USING m_src s WHERE p.id = s.id RETURNING p.id, s.w)
    INSERT INTO m_log SELECT ''cte'', id, w FROM d',
                      'SELECT tableoid::regclass, * FROM m_parent UNION ALL SELECT NULL, NULL, NULL, op || id || '':'' || v FROM m_log');
SELECT * FROM gj_explain_verbose('WITH moved AS (DELETE FROM m_src WHERE w <= 50 RETURNING id, w)
    DELETE FROM m_parent p USING moved WHERE p.id = moved.id');
SELECT gj_compare_dml('WITH moved AS (DELETE FROM m_src WHERE w <= 50 RETURNING id, w)
    DELETE FROM m_parent p USING moved WHERE p.id = moved.id',
                      'SELECT tableoid::regclass, * FROM m_parent UNION ALL SELECT NULL, id, w, ''src'' FROM m_src');

-- a view with INSTEAD OF triggers over the inheritance parent
SELECT * FROM gj_explain_verbose('UPDATE m_view SET v = m_view.v + s.w FROM m_src s WHERE m_view.id = s.id');
SELECT gj_compare_dml('UPDATE m_view SET v = m_view.v + s.w FROM m_src s WHERE m_view.id = s.id',
                      'SELECT * FROM m_log');
SELECT gj_compare_dml('DELETE FROM m_view USING m_src s WHERE m_view.id < s.id AND m_view.id > s.id - 2',
                      'SELECT * FROM m_log');
COMMIT;

-- the statements themselves, committed: the rows they leave behind
BEGIN;
SELECT gj_force(true);
UPDATE m_parent p SET v = p.v + s.w FROM m_src s WHERE p.id = s.id;
DELETE FROM m_parent p USING m_src s WHERE p.id = s.id + 1;
MERGE INTO m_part p USING m_src s ON p.id = s.id
    WHEN MATCHED THEN UPDATE SET v = s.w
    WHEN NOT MATCHED AND s.id IS NOT NULL THEN INSERT VALUES (s.id + 1000, s.w);
COMMIT;
SELECT tableoid::regclass, count(*), sum(v), sum(id) FROM m_parent GROUP BY 1 ORDER BY 1;
SELECT tableoid::regclass, count(*), sum(v), sum(id) FROM m_part GROUP BY 1 ORDER BY 1;

DROP VIEW m_view;
DROP TABLE m_parent, m_child, m_part, m_src, m_log;
DROP FUNCTION m_view_trigger(), gj_explain_verbose(text), gj_compare_dml(text, text);
