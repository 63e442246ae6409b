# test/lib/check.sh: sourced by the shell test scripts (test/load, test/sqlsmith)
# that print TAP-like lines and end with "NAME: N passed, N failed".
#
# check NAME CONDITION-EXIT-STATUS [DETAIL]: "ok - NAME" when the status is 0,
# else "not ok - NAME: DETAIL"; counts into passed and failed.
passed=0
failed=0
check() {
	if [ "$2" = 0 ]; then
		echo "ok - $1"
		passed=$((passed + 1))
	else
		echo "not ok - $1${3:+: $3}"
		failed=$((failed + 1))
	fi
}
