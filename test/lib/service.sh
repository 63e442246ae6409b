# test/lib/service.sh: the GPU service's status for the shell tests that
# start a cluster of their own (test/load/service_*.sh).  Needs $PSQL.
#
# service_status: the service's row of gpujoin_devices(), its status line.
# service_wait PATTERN: wait (up to 10 s) until that line matches the
# extended regular expression; false if it never did.
service_status() {
	$PSQL -c "SELECT status FROM gpujoin_devices() WHERE backend = 'service'"
}
service_wait() {
	local i
	for i in $(seq 100); do
		service_status | grep -qE "$1" && return 0
		sleep 0.1
	done
	return 1
}
