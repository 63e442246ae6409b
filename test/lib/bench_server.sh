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
# psql_run runs psql on it with the options every script uses.

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
