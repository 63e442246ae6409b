# test/lib/bench_server.sh: the server a benchmark or calibration script runs
# against.  Sourced; bench_server CONF sets PSQL_BIN and DB:
#
#   - with PGHOST or PGPORT set, that server (database PGDATABASE or
#     postgres; psql from PG_CONFIG's bindir where PG_CONFIG is set), as on
#     the GPU machine where the cluster is started by hand;
#   - otherwise a throwaway cluster (test/lib/cluster.sh, PG_CONFIG from the
#     environment) with CONF as extra postgresql.conf lines, stopped when the
#     script exits.
#
# psql_run runs psql on it with the options every script uses; bench_modes
# SCHEMA sets what the three ways of timing a query apply.

bench_server() {
	if [ -n "${PGHOST:-}" ] || [ -n "${PGPORT:-}" ]; then
		PSQL_BIN=psql
		[ -n "${PG_CONFIG:-}" ] && PSQL_BIN=$("$PG_CONFIG" --bindir)/psql
		DB=${PGDATABASE:-postgres}
		echo "using the server at ${PGHOST:-default host}:${PGPORT:-5432}, database $DB"
	else
		export PG_CONFIG=${PG_CONFIG:-pg_config}
		. test/lib/cluster.sh
		trap cluster_stop EXIT
		GPUJOIN_CLUSTER_CONF="$1" cluster_start || exit 1
		PSQL_BIN=$PG_BINDIR/psql
		DB=postgres
		echo "started a throwaway cluster in $CLUSTER_DIR"
	fi
}

psql_run() { "$PSQL_BIN" -X -q -d "$DB" "$@"; }

# bench_modes SCHEMA: gpujoin in the database, and the settings of the three
# ways a query is timed: PRELUDE (search_path SCHEMA, statement_timeout
# TIMEOUT_S seconds, LOAD 'gpujoin' where it is not preloaded), then
# DEFAULT_SETTINGS (the planner's choice), NATIVE_SETTINGS (gpujoin.enabled
# off: PostgreSQL's own plan) or FORCED_SETTINGS (PostgreSQL's join methods
# off, as gj_force() in sql/setup.sql: GpuJoin wherever it is offered);
# gpujoin.device = DEVICE in the GpuJoin modes where DEVICE is set.
bench_modes() {
	local dev_set=""

	psql_run -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
		-c "CREATE EXTENSION IF NOT EXISTS gpujoin" >/dev/null || return 1
	PRELUDE="SET search_path = $1, public;
SET statement_timeout = '${TIMEOUT_S}s';"
	if ! psql_run -At -c "SHOW gpujoin.enabled" >/dev/null 2>&1; then
		PRELUDE="LOAD 'gpujoin';
$PRELUDE"
	fi
	[ -n "${DEVICE:-}" ] && dev_set="SET gpujoin.device = $DEVICE;"
	DEFAULT_SETTINGS="$dev_set"
	NATIVE_SETTINGS="SET gpujoin.enabled = off;"
	FORCED_SETTINGS="SET gpujoin.enabled = on;
SET enable_nestloop = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
$dev_set"
	printf '%s\n%s\n' "$PRELUDE" "$FORCED_SETTINGS" | psql_run -v ON_ERROR_STOP=1 >/dev/null || {
		echo "cannot apply the forced settings (DEVICE=${DEVICE:-} needs a superuser)" >&2
		return 1
	}
}

# bench_settle SCHEMA: every page of SCHEMA's tables all-visible, as in
# tables autovacuum has been through, and prints how many are.  A VACUUM
# right after the load leaves pages not all-visible where the commits that
# wrote them are not flushed yet (the test clusters run synchronous_commit
# off: hint bits wait for the flush), so scans (native and GpuJoin's page
# decoder alike) check every tuple's visibility until autovacuum comes by,
# maybe in the middle of the timings.  CHECKPOINT flushes them; VACUUM
# (FREEZE) then marks the pages.  At most 5 rounds.
bench_settle() {
	local i left
	for i in 1 2 3 4 5; do
		left=$(psql_run -At -v schema="$1" <<'SQL'
SELECT string_agg(format('%I.%I', n.nspname, c.relname), ', ')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = :'schema' AND c.relkind = 'r' AND c.relallvisible < c.relpages
SQL
)
		[ -z "$left" ] && break
		if ! psql_run -c "CHECKPOINT" >/dev/null 2>&1; then
			echo "bench_settle: CHECKPOINT failed (not a superuser?): pages of $left may stay not all-visible" >&2
		fi
		psql_run -c "VACUUM (FREEZE, ANALYZE) $left" >/dev/null 2>&1
	done
	psql_run -At -v schema="$1" <<'SQL'
SELECT 'all-visible pages: ' || coalesce(sum(c.relallvisible), 0) || ' of ' || coalesce(sum(c.relpages), 0)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = :'schema' AND c.relkind = 'r'
SQL
}
