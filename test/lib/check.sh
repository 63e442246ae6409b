# test/lib/check.sh: sourced by the shell test scripts (test/load, test/sqlsmith,
# test/check_symbols.sh, test/check_layers.sh) that print TAP-like lines and
# end with "NAME: N passed, N failed".
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

# report OK NAME BAD: "ok - NAME" when OK is 1, else "not ok - NAME" and
# each line of BAD under it as a TAP comment; counts as check does.
report() {
	local ok=$1 name=$2 bad=$3
	if [ "$ok" = 1 ]; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		echo "$bad" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
}
