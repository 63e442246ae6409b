#!/bin/bash
# test/fuzz/run_fuzz.sh: run the randomized differential test (fuzz.pl) on a
# throwaway cluster with gpujoin preloaded, or on the server that PGHOST and
# PGPORT name when FUZZ_USE_SERVER=1.  The FUZZ_* variables of fuzz.pl pass
# through, e.g.
#
#   FUZZ_CASES=5000 FUZZ_SEED=7 FUZZ_MAX_ROWS=100000 FUZZ_MAX_PAIRS=2000000 test/fuzz/run_fuzz.sh
#
# The last line is "fuzz: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/cluster.sh
if [ -z "${FUZZ_USE_SERVER:-}" ]; then
	trap cluster_stop EXIT
	cluster_start || {
		echo "could not start a test cluster"
		echo "fuzz: 0 passed, 1 failed"
		exit 1
	}
fi
PSQL="$PG_BINDIR/psql" perl test/fuzz/fuzz.pl
