#!/bin/bash
# scripts/install_deps.sh: install what gpujoin needs to build and test on
# Debian 12 (PostgreSQL 15 server and headers, pgTAP, pg_prove, a compiler,
# SQLsmith for test/sqlsmith, and what dpkg-buildpackage needs to build the
# Debian package for test/package/test_deb.sh: dpkg-dev, debhelper and
# postgresql-server-dev-all, which has dh's pgxs sequences),
# skipping what is already there.  Needs root (or sudo) only when something is
# missing.  The CUDA Toolkit is optional: with nvcc in CUDA_HOME
# (/usr/local/cuda) the cuda backend is built, without it a stub.
# BENCH_DEPS=1 adds gnuplot-nox, which test/bench/run_bench.sh uses for its
# optional speedup plot (neither the tests nor CI need it).
set -euo pipefail
pkgs="postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl make gcc sqlsmith
	dpkg-dev debhelper postgresql-server-dev-all"
[ -n "${BENCH_DEPS:-}" ] && pkgs="$pkgs gnuplot-nox"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
