# test/scaleout/scaleout_lib.sh: a coordinator and three shards on one
# machine, as PostgreSQL's own sharding builds them (README, "Across
# servers").  Sourced by test/scaleout/run_scaleout.sh (the checks) and
# test/bench/bench_scaleout.sh (the timings), after test/lib/cluster.sh.
#
# Four throwaway clusters (cluster_start_named), each with gpujoin preloaded,
# its own port and its socket in its own directory.  On the coordinator, r and
# s are partitioned by hash on the join key k into three partitions, and each
# partition is a postgres_fdw foreign table on one shard (r_pI and s_pI are
# plain tables on shard I+1), reached over the shard's unix socket with trust
# authentication.  one.r and one.s on the coordinator hold the same rows as
# plain tables: the one-server reference that results are compared with (the
# same query text runs on either with search_path = public or one).

SHARDS=3

# scaleout_start COORD_CONF SHARD_CONF: starts the coordinator (COORD_DIR,
# COORD_PORT) and the shards (SHARD1_DIR, SHARD1_PORT, ...) with these extra
# postgresql.conf lines, followed on every cluster by those of
# GPUJOIN_CLUSTER_CONF from the environment, which win (e.g.
# "gpujoin.device = cuda" on the GPU machine); returns 1 when one does not
# start (scaleout_stop still removes what did).
scaleout_start() {
	local env_conf=${GPUJOIN_CLUSTER_CONF:-} i
	GPUJOIN_CLUSTER_CONF="$1
$env_conf" cluster_start_named COORD || return 1
	for i in $(seq $SHARDS); do
		GPUJOIN_CLUSTER_CONF="$2
$env_conf" cluster_start_named "SHARD$i" || return 1
	done
}

# scaleout_stop: stops every cluster scaleout_start started (the scripts'
# EXIT trap, so also after a failure or an interrupt).  A trap that runs in
# the middle of cluster_start_named finds the cluster it was starting in
# CLUSTER_DIR (these scripts start no default cluster): cluster_stop removes
# it.
scaleout_stop() {
	local i
	for i in $(seq $SHARDS); do
		cluster_stop_named "SHARD$i"
	done
	cluster_stop_named COORD
	cluster_stop
}

# coord_psql ARGS: psql on the coordinator, unaligned, stopping at the first
# error; shard_psql I ARGS: the same on shard I.
coord_psql() {
	"$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$COORD_DIR" -p "$COORD_PORT" -U postgres -d postgres "$@"
}
shard_psql() {
	local dir_var="SHARD${1}_DIR" port_var="SHARD${1}_PORT"
	shift
	"$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "${!dir_var}" -p "${!port_var}" -U postgres -d postgres "$@"
}

# shard_ctl I ACTION [ARGS]: pg_ctl on shard I's data directory, as the
# clusters' owner (the fault check stops and starts a shard).
shard_ctl() {
	local dir_var="SHARD${1}_DIR"
	as_owner "'$PG_BINDIR/pg_ctl' -D '${!dir_var}/data' -l '${!dir_var}/server.log' -w -t 60 $2 ${3:-} >/dev/null 2>&1"
}

# scaleout_schema R_ROWS S_ROWS KEYS: the tables, on every cluster, and their
# rows.  r has R_ROWS rows whose k cycles over KEYS values, s has S_ROWS rows
# over 1.2 x KEYS values (so some of s's keys match nothing); a and b are
# the band join's columns.  Every key value is repeated (duplicates in every
# join), and some k, a and b are NULL (a NULL k goes to the partition of
# remainder 0).  The rows are made once, into one.r and one.s, and copied
# into r and s through postgres_fdw (tuple routing to the foreign partitions,
# in batches).  The servers are async_capable (an Append's foreign scans run
# at once) and use_remote_estimate: without the shards' own estimates,
# postgres_fdw prices a pushed-down join far above two plain foreign scans
# joined on the coordinator (1868 against 308 on the test's tables), and the
# join is not pushed down.
scaleout_schema() {
	local r_rows=$1 s_rows=$2 keys=$3 i
	for i in $(seq $SHARDS); do
		shard_psql "$i" <<SQL || return 1
CREATE EXTENSION gpujoin;
CREATE TABLE r_p$((i - 1)) (k int, a int, v int);
CREATE TABLE s_p$((i - 1)) (k int, b int, w int);
SQL
	done
	{
		cat <<SQL
CREATE EXTENSION gpujoin;
CREATE EXTENSION postgres_fdw;
CREATE TABLE r (k int, a int, v int) PARTITION BY HASH (k);
CREATE TABLE s (k int, b int, w int) PARTITION BY HASH (k);
SQL
		for i in $(seq $SHARDS); do
			local dir_var="SHARD${i}_DIR" port_var="SHARD${i}_PORT" p=$((i - 1))
			cat <<SQL
CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '${!dir_var}', port '${!port_var}', dbname 'postgres',
		async_capable 'true', use_remote_estimate 'true',
		fetch_size '10000', batch_size '1000');
CREATE USER MAPPING FOR postgres SERVER shard$i OPTIONS (user 'postgres');
CREATE FOREIGN TABLE r_p$p PARTITION OF r FOR VALUES WITH (MODULUS $SHARDS, REMAINDER $p)
	SERVER shard$i OPTIONS (table_name 'r_p$p');
CREATE FOREIGN TABLE s_p$p PARTITION OF s FOR VALUES WITH (MODULUS $SHARDS, REMAINDER $p)
	SERVER shard$i OPTIONS (table_name 's_p$p');
SQL
		done
		cat <<SQL
CREATE SCHEMA one;
CREATE TABLE one.r AS
	SELECT CASE WHEN g % 97 = 0 THEN NULL ELSE g % $keys END AS k,
		CASE WHEN g % 53 = 0 THEN NULL ELSE (g::int8 * 7919 % ($r_rows / 2 + 1))::int END AS a,
		g AS v
	FROM generate_series(1, $r_rows) g;
CREATE TABLE one.s AS
	SELECT CASE WHEN g % 89 = 0 THEN NULL ELSE g % ($keys * 6 / 5) END AS k,
		CASE WHEN g % 61 = 0 THEN NULL ELSE (g::int8 * 104729 % ($r_rows / 2 + 1))::int END AS b,
		g AS w
	FROM generate_series(1, $s_rows) g;
INSERT INTO r SELECT * FROM one.r;
INSERT INTO s SELECT * FROM one.s;
ANALYZE one.r;
ANALYZE one.s;
SQL
	} | coord_psql || return 1
	for i in $(seq $SHARDS); do
		shard_psql "$i" -c "ANALYZE" || return 1
	done
	coord_psql -c "ANALYZE r" -c "ANALYZE s"
}
