#!/bin/bash
# test/check_symbols.sh: the names gpujoin puts into a backend's process.
#
# A module's global symbols share one namespace with the server's and every
# other loaded library's, so a name like "key_columns" in two extensions
# binds one to the other's function.  Two checks, one test each:
#
#   exports   gpujoin.so exports only what PostgreSQL looks up: _PG_init,
#             gpujoin_service_main (the background worker's entry),
#             Pg_magic_func and, per SQL function, the function and its
#             pg_finfo_ record (the Makefile builds with -fvisibility=hidden
#             and hides the static CUDA runtime's symbols);
#   prefix    every global that an object of ours defines, exported or not,
#             starts with gj_ or gpujoin_ (C++ names of the cuda objects are
#             mangled, so they cannot meet a C name, and are left out).
#
# Run after the build (test/run_tests.sh does); prints a TAP line per
# check and ends with "symbols: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. test/lib/check.sh

if [ ! -f gpujoin.so ]; then
	echo "not ok - gpujoin.so is not built"
	echo "symbols: 0 passed, 1 failed"
	exit 1
fi

# the SQL functions the extension script binds to C symbols
sql_functions=$(grep -hoE "'MODULE_PATHNAME', *'[a-z_0-9]+'" sql/gpujoin--*.sql |
	sed -E "s/.*'([a-z_0-9]+)'$/\1/" | sort -u)
# and the GPU service's main function, which the postmaster looks up by name
allowed="_PG_init Pg_magic_func gpujoin_service_main"
for f in $sql_functions; do
	allowed="$allowed $f pg_finfo_$f"
done
exported=$(nm -D --defined-only gpujoin.so | awk '{print $3}' | sort -u)
allowed=$(echo "$allowed" | tr ' ' '\n' | sort -u)
extra=$(comm -23 <(echo "$exported") <(echo "$allowed"))
missing=$(comm -13 <(echo "$exported") <(echo "$allowed"))
report "$([ -z "$extra$missing" ] && echo 1 || echo 0)" \
	"gpujoin.so exports exactly _PG_init, Pg_magic_func, the service's main and the SQL functions" \
	"$(echo "$extra" | sed '/^$/d; s/^/extra: /'; echo "$missing" | sed '/^$/d; s/^/missing: /')"

objects=$(make -s --no-print-directory PG_CONFIG="${PG_CONFIG:-pg_config}" print-objs)
# shellcheck disable=SC2086
unprefixed=$(nm -g --defined-only -A $objects 2>/dev/null |
	awk '$(NF-1) ~ /^[TDBRVWG]$/ {print $1, $NF}' |
	grep -vE ' (gj_|gpujoin_|_PG_init$|Pg_magic_func$|pg_finfo_gpujoin_|_Z|__|DW\.ref\.)')
report "$([ -z "$unprefixed" ] && echo 1 || echo 0)" \
	"every global symbol of src/ starts with gj_ or gpujoin_" "$unprefixed"

echo "symbols: $passed passed, $failed failed"
[ "$failed" = 0 ]
