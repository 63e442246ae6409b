#!/bin/bash
# scripts/demo.sh: the main job in one command.  Installs what is missing
# (Debian's PostgreSQL 15, headers, pgTAP), builds and installs gpujoin, starts
# a throwaway cluster with shared_preload_libraries = 'gpujoin', loads demo
# data, and prints EXPLAIN ANALYZE of a theta join, a band join and an
# equi-join with GpuJoin and with PostgreSQL's own plan, side by side.
# KEEP_CLUSTER=1 leaves the cluster running for a look around.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
export PG_CONFIG=${PG_CONFIG:-pg_config}
sudo=""
[ "$(id -u)" = 0 ] || [ -w "$("$PG_CONFIG" --pkglibdir)" ] || sudo="sudo"
make -s PG_CONFIG="$PG_CONFIG" >/dev/null
$sudo make -s PG_CONFIG="$PG_CONFIG" install >/dev/null
. test/lib/cluster.sh
trap cluster_stop EXIT
cluster_start
echo "throwaway cluster: psql -h $PGHOST -p $PGPORT -U $PGUSER postgres"
"$PG_BINDIR/psql" -X -q -d postgres -v ON_ERROR_STOP=1 -f scripts/demo.sql
