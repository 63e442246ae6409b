# test/lib/cluster.sh: start and stop a throwaway PostgreSQL cluster.
#
# Sourced by the test runner and the demo.  The cluster lives in a temporary
# directory, listens only on a unix socket there and on its own port, and has
# gpujoin preloaded.  PostgreSQL refuses to run as root, so when called as
# root the cluster belongs to an unprivileged user (created if missing).
# PG_CONFIG from the environment selects the PostgreSQL installation.
#
# After cluster_start: PGHOST, PGPORT, PGUSER are exported for psql & co.
# Extra postgresql.conf lines can be passed in GPUJOIN_CLUSTER_CONF, e.g.
# GPUJOIN_CLUSTER_CONF="gpujoin.device = cuda".
#
# A script that needs several clusters at once (test/scaleout) starts each
# with cluster_start_named NAME, which sets NAME_DIR and NAME_PORT and leaves
# CLUSTER_DIR and the PG* variables as they were, and stops it with
# cluster_stop_named NAME.

PG_CONFIG=${PG_CONFIG:-pg_config}
PG_BINDIR=$("$PG_CONFIG" --bindir)
CLUSTER_OWNER=${CLUSTER_OWNER:-gpujoin}

as_owner() {
	if [ "$(id -u)" = 0 ]; then
		su "$CLUSTER_OWNER" -s /bin/bash -c "$*"
	else
		bash -c "$*"
	fi
}

# cluster_mb VALUE UNIT: a size setting in MB (no unit: 8 kB pages)
cluster_mb() {
	case "$2" in
	GB) echo $(($1 * 1024)) ;;
	MB) echo "$1" ;;
	kB) echo $(($1 / 1024)) ;;
	*) echo $(($1 * 8 / 1024)) ;;
	esac
}

# cluster_huge_pages CONF_FILE (HUGE_PAGES=1, for benchmarks): the shared
# memory in 2 MB huge pages, as PostgreSQL advises for a large
# shared_buffers.  Every parallel worker maps the buffers it reads by page
# faults, two an 8 kB page with 4 kB pages: on an H200 host the equi-join's
# count(*) took 75 ms with them, 58 with huge pages
# (docs/results/2026-11-28-h200-d496e4b-drain-parts.md).  Reserves
# vm.nr_hugepages for shared_buffers and the GPU service's staging memory
# plus 256 MB, where fewer are free and the caller is root, and sets
# huge_pages = on; where they cannot be had it says so and leaves the
# default (try).
cluster_huge_pages() {
	local conf=$1 sb st need free
	sb=$(sed -n "s/^shared_buffers *= *'\{0,1\}\([0-9][0-9]*\) *\([kMG]B\)\{0,1\}.*/\1 \2/p" "$conf" | tail -1)
	st=$(sed -n "s/^gpujoin.service_staging_memory *= *'\{0,1\}\([0-9][0-9]*\) *\([kMG]B\)\{0,1\}.*/\1 \2/p" "$conf" | tail -1)
	# shellcheck disable=SC2086
	need=$(( ($(cluster_mb ${sb:-16384}) + $(cluster_mb ${st:-512 MB}) + 256) / 2 ))
	free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	if [ "${free:-0}" -lt "$need" ] && [ "$(id -u)" = 0 ]; then
		echo $(( $(cat /proc/sys/vm/nr_hugepages) + need - ${free:-0} )) >/proc/sys/vm/nr_hugepages 2>/dev/null
		free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	fi
	if [ "${free:-0}" -ge "$need" ]; then
		echo "huge_pages = on" >>"$conf"
	else
		echo "HUGE_PAGES=1: $need huge pages of 2 MB needed, ${free:-0} free (vm.nr_hugepages, as root): shared memory stays in the kernel's pages" >&2
	fi
}

cluster_start() {
	CLUSTER_DIR=$(mktemp -d /tmp/gpujoin_cluster.XXXXXX)
	if [ "$(id -u)" = 0 ]; then
		# clusters started at once on a fresh machine must not race to
		# create the owner (two useradds at once left one cluster's initdb
		# with a user id that did not exist): one at a time, under a lock
		(
			flock 9 2>/dev/null
			id "$CLUSTER_OWNER" >/dev/null 2>&1 || useradd -M -s /bin/bash "$CLUSTER_OWNER"
		) 9>/tmp/gpujoin_cluster_owner.lock
		chown "$CLUSTER_OWNER" "$CLUSTER_DIR"
	fi
	chmod 755 "$CLUSTER_DIR"
	as_owner "'$PG_BINDIR/initdb' -D '$CLUSTER_DIR/data' -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >'$CLUSTER_DIR/initdb.log' 2>&1" || {
		cat "$CLUSTER_DIR/initdb.log"
		return 1
	}
	cat >>"$CLUSTER_DIR/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$CLUSTER_DIR'
shared_preload_libraries = 'gpujoin'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 40
shared_buffers = 256MB
work_mem = 64MB
max_parallel_workers_per_gather = 2
lc_messages = 'C'
# JIT depends on the installation (and needs its LLVM): keep it out of tests
jit = off
${GPUJOIN_CLUSTER_CONF:-}
CONF
	[ "${HUGE_PAGES:-0}" = 1 ] && cluster_huge_pages "$CLUSTER_DIR/data/postgresql.conf"
	# a free port of our own
	local port
	for port in $(seq $((50000 + $$ % 5000)) $((50000 + $$ % 5000 + 50))); do
		# not one this script's other clusters listen on (cluster_start_named)
		[[ " ${CLUSTER_PORTS_TAKEN:-} " == *" $port "* ]] && continue
		sed -i "/^port = /d" "$CLUSTER_DIR/data/postgresql.conf"
		echo "port = $port" >>"$CLUSTER_DIR/data/postgresql.conf"
		if as_owner "'$PG_BINDIR/pg_ctl' -D '$CLUSTER_DIR/data' -l '$CLUSTER_DIR/server.log' -w -t 60 start >/dev/null 2>&1"; then
			export PGHOST=$CLUSTER_DIR PGPORT=$port PGUSER=postgres
			return 0
		fi
	done
	cat "$CLUSTER_DIR/server.log"
	return 1
}

cluster_stop() {
	[ -n "${CLUSTER_DIR:-}" ] || return 0
	as_owner "'$PG_BINDIR/pg_ctl' -D '$CLUSTER_DIR/data' -m fast -w stop >/dev/null 2>&1" || true
	if [ -n "${KEEP_CLUSTER:-}" ]; then
		echo "cluster kept in $CLUSTER_DIR"
	else
		rm -rf "$CLUSTER_DIR"
	fi
	CLUSTER_DIR=
}

# cluster_start_named NAME: one more throwaway cluster, as cluster_start
# starts one, for scripts that run several at once.  Sets NAME_DIR (its
# directory, also its socket directory) and NAME_PORT, and restores
# CLUSTER_DIR, PGHOST, PGPORT and PGUSER, so that a cluster started with
# cluster_start, if any, stays the default one.  Each named cluster takes a
# port of its own (its socket is in its own directory, so a port taken twice
# would work, but logs and connection strings are easier to read this way).
# NAME_DIR is set even when the start fails: cluster_stop_named removes it.
cluster_start_named() {
	local name=$1 status=0
	local saved_dir=${CLUSTER_DIR:-}
	local had_host=${PGHOST+1} saved_host=${PGHOST:-}
	local had_port=${PGPORT+1} saved_port=${PGPORT:-}
	local had_user=${PGUSER+1} saved_user=${PGUSER:-}
	CLUSTER_DIR=
	cluster_start || status=1
	printf -v "${name}_DIR" '%s' "${CLUSTER_DIR:-}"
	printf -v "${name}_PORT" '%s' "$([ "$status" = 0 ] && echo "$PGPORT")"
	[ "$status" = 0 ] && CLUSTER_PORTS_TAKEN="${CLUSTER_PORTS_TAKEN:-} $PGPORT"
	CLUSTER_DIR=$saved_dir
	if [ -n "$had_host" ]; then export PGHOST=$saved_host; else unset PGHOST; fi
	if [ -n "$had_port" ]; then export PGPORT=$saved_port; else unset PGPORT; fi
	if [ -n "$had_user" ]; then export PGUSER=$saved_user; else unset PGUSER; fi
	return $status
}

# cluster_stop_named NAME: stops and removes the cluster that
# cluster_start_named NAME started (kept with KEEP_CLUSTER, as cluster_stop
# does); nothing when there is none.
cluster_stop_named() {
	local name=$1 saved_dir=${CLUSTER_DIR:-} dir_var="${1}_DIR"
	CLUSTER_DIR=${!dir_var:-}
	cluster_stop
	printf -v "$dir_var" '%s' ""
	CLUSTER_DIR=$saved_dir
}

# cluster_pin_cuda_costs [PSQL ARGS]: the cuda backend plans with the cpu
# backend's cost constants on that server (ALTER SYSTEM, reloaded), so that
# a test's plans are the same whichever backend runs them
# (test/pgtap/plan_choice.sql checks each backend's built-in defaults).
cluster_pin_cuda_costs() {
	"$PG_BINDIR/psql" -X -q -d postgres "$@" >/dev/null <<'SQL'
SELECT format('ALTER SYSTEM SET gpujoin.cuda_%s = %s', name, current_setting('gpujoin.cpu_' || name))
FROM unnest(ARRAY['startup_cost', 'row_cost', 'pair_cost', 'sort_cost', 'output_cost', 'columnar_row_cost', 'program_pair_cost',
                   'hash_cache_kb', 'cached_join_factor']) AS name
UNION ALL SELECT 'ALTER SYSTEM SET gpujoin.cuda_transfer_cost = 0'
UNION ALL SELECT 'SELECT pg_reload_conf()' \gexec
SQL
}
