#!/bin/bash
# test/package/test_deb.sh: the Debian package, built and installed as a DBA
# would (README, "Installing on a server"; issue 38).
#
# Builds postgresql-15-gpujoin with `dpkg-buildpackage -us -uc -b` in a copy of
# the tree's files (git's tracked and untracked-but-not-ignored ones) in a
# temporary directory, so that the .deb, .buildinfo and .changes land there
# and not beside the repository.  Checks that the versions of gpujoin.control,
# debian/changelog and META.json agree, that the build leaves nothing in the
# tree but debhelper's files under debian/ and `debian/rules clean` removes
# those, and that the package holds the library, gpujoin.control and the
# extension's SQL scripts (sql/gpujoin--*.sql) where the server looks, and
# documentation, nothing else.  Then installs it, starts a throwaway cluster
# with gpujoin preloaded (test/lib/cluster.sh), runs scripts/demo.sql (the
# demo's theta join, band join and equi-join under EXPLAIN ANALYZE, each with
# GpuJoin and natively) and checks that its GpuJoin plans show GpuJoin and
# that each join's result equals PostgreSQL's own plan's (gpujoin.enabled =
# off).  Ends with "package: N passed, N failed".
#
# Where the package goes depends on PG_CONFIG (default pg_config):
#   - Debian's PostgreSQL 15 (pkglibdir /usr/lib/postgresql/15/lib), as root:
#     `dpkg -i`, and `dpkg --purge` at the end.  The files of the same names
#     that were there before (test/run_tests.sh's `make install`, say) are
#     copied aside first and put back after the purge, so the system is left
#     as it was; the last check says so.  If postgresql-15-gpujoin is already
#     installed, it is left alone: the package is built and checked, not
#     installed (a message says so).
#   - a copy of Debian's layout under another root, ROOT/usr/lib/postgresql/15
#     (what /tmp/mkpg.sh makes): the package is unpacked with `dpkg -x` and
#     its library, control file and SQL scripts copied into ROOT; at the end
#     they are removed, or replaced by what was there before.  Root not
#     needed where ROOT is writable.
#   - any other PostgreSQL, or Debian's when not root: the package is built
#     and checked, and not installed (a message says so).
# The build itself always uses Debian's PostgreSQL 15 headers (pg_buildext
# builds against /usr/lib/postgresql/15/bin/pg_config).
#
# Build dependencies (debian/control's) missing: as root, installed with
# apt-get build-dep, unless SKIP_DEPS is set; otherwise the test is skipped
# with a message and "package: 0 passed, 0 failed".  WITH_CUDA, CUDA_HOME and
# DEB_BUILD_OPTIONS reach the build (nvcc in CUDA_HOME, default
# /usr/local/cuda, builds the cuda backend into the package: 93 s instead of
# 14-20 s on the 2-core development machine); KEEP_DEB=DIR copies the built
# .deb files to DIR, KEEP_WORK=1 keeps the temporary directory (the copy,
# build.log, demo.out).
set -u
cd "$(dirname "$0")/../.." || exit 1
repo=$PWD
export PG_CONFIG=${PG_CONFIG:-pg_config}
. test/lib/check.sh

skip_all() {
	echo "# SKIP: $1"
	echo "package: $passed passed, $failed failed"
	exit 0
}
fail_all() {
	echo "not ok - $1"
	failed=$((failed + 1))
	echo "package: $passed passed, $failed failed"
	exit 1
}

command -v "$PG_CONFIG" >/dev/null 2>&1 || fail_all "no pg_config ($PG_CONFIG)"
pg_major=$("$PG_CONFIG" --version | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')
[ "$pg_major" = 15 ] || skip_all "PG_CONFIG is PostgreSQL $pg_major; the package is for 15"
[ -x /usr/lib/postgresql/15/bin/pg_config ] ||
	skip_all "Debian's PostgreSQL 15 (/usr/lib/postgresql/15) is not installed: the package builds against it"
package=postgresql-15-gpujoin
pkglibdir=$("$PG_CONFIG" --pkglibdir)
sharedir=$("$PG_CONFIG" --sharedir)

# where the package goes (see above): system, root or none
install_mode=none
install_root=
why_not=""
if [ "$pkglibdir" = /usr/lib/postgresql/15/lib ] && [ "$sharedir" = /usr/share/postgresql/15 ]; then
	if [ "$(id -u)" != 0 ]; then
		why_not="installing into Debian's PostgreSQL needs root"
	elif dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
		why_not="$package is installed already; not replacing it"
	else
		install_mode=system
	fi
elif [ "${pkglibdir%/usr/lib/postgresql/15/lib}" != "$pkglibdir" ] &&
	[ "$sharedir" = "${pkglibdir%/usr/lib/postgresql/15/lib}/usr/share/postgresql/15" ]; then
	install_mode=root
	install_root=${pkglibdir%/usr/lib/postgresql/15/lib}
else
	why_not="$PG_CONFIG is not laid out as Debian's PostgreSQL 15 (pkglibdir $pkglibdir)"
fi

# the build dependencies: dpkg-dev for dpkg-buildpackage, the rest as
# debian/control says
if [ "$(id -u)" = 0 ] && [ -z "${SKIP_DEPS:-}" ]; then
	export DEBIAN_FRONTEND=noninteractive
	command -v dpkg-checkbuilddeps >/dev/null 2>&1 || {
		apt-get update -qq && apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null
	}
	(cd "$repo" && dpkg-checkbuilddeps >/dev/null 2>&1) || {
		echo "# installing the build dependencies"
		apt-get update -qq && apt-get build-dep -y -qq --no-install-recommends "$repo" >/dev/null
	}
fi
command -v dpkg-buildpackage >/dev/null 2>&1 || skip_all "dpkg-buildpackage is missing (package dpkg-dev)"
unmet=$(cd "$repo" && dpkg-checkbuilddeps 2>&1) || skip_all "build dependencies missing: $unmet"

work=$(mktemp -d /tmp/gpujoin_deb.XXXXXX)
chmod 755 "$work"
backup=$work/backup
installed_files=""	# what was put into place, relative to the root
restored=""

# put back what the install replaced: the package purged (system) or its
# files removed (root), then the files that were there before copied back
# (to a new name and renamed, as dpkg does, so that a server that has the
# library mapped keeps its copy); idempotent
uninstall() {
	[ -n "$installed_files" ] && [ -z "$restored" ] || return 0
	restored=1
	local f dest
	if [ "$install_mode" = system ]; then
		dpkg --purge "$package" >>"$work/dpkg.log" 2>&1
	fi
	for f in $installed_files; do
		dest=$install_root/$f
		if [ -e "$backup/$f" ]; then
			cp -a "$backup/$f" "$dest.gj_restore" && mv -f "$dest.gj_restore" "$dest"
		elif [ "$install_mode" = root ]; then
			rm -f "$dest"
		fi
	done
}
finish() {
	cluster_stop
	uninstall
	if [ -n "${KEEP_WORK:-}" ]; then
		echo "# work directory kept in $work"
	else
		rm -rf "$work"
	fi
}
. test/lib/cluster.sh
trap finish EXIT

# 1. versions: the package's upstream version is the extension's
control_version=$(sed -nE "s/^default_version *= *'([^']+)'.*/\1/p" gpujoin.control)
deb_version=$(dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null)
meta_versions=$(perl -MJSON::PP -e '
	local $/; my $m = decode_json(<STDIN>);
	print join(" ", $m->{version}, $m->{provides}{gpujoin}{version}, $m->{provides}{gpujoin}{file})' <META.json 2>&1)
read -r meta_version meta_provides_version meta_file <<<"$meta_versions"
check "gpujoin.control ($control_version), debian/changelog (${deb_version:-?}) and META.json (${meta_version:-?}) agree" \
	$([ -n "$control_version" ] && [ "${deb_version%-*}" = "$control_version" ] &&
		[ "$meta_version" = "$control_version.0" ] && [ "$meta_provides_version" = "$meta_version" ] &&
		[ -f "${meta_file:-/nonexistent}" ] && [ "$meta_file" = "sql/gpujoin--$control_version.sql" ] &&
		echo 0 || echo 1) "META.json: $meta_versions"

# 2. the build, in a copy of the tree
src=$work/gpujoin-${deb_version%-*}
mkdir "$src"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$repo" ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -xf - -C "$src"
else
	tar --exclude=./.git --exclude='*.o' --exclude='*.so' -cf - . | tar -xf - -C "$src"
fi
[ "$(id -u)" = 0 ] && chown -R root:root "$src"
(cd "$src" && find . -type f | sort) >"$work/files.before"
echo "# building $package in $src (WITH_CUDA=${WITH_CUDA:-auto}, DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-})"
build_start=$(date +%s)
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1
build_status=$?
build_secs=$(($(date +%s) - build_start))
check "dpkg-buildpackage -us -uc -b builds the package ($build_secs s)" "$build_status" \
	"$(tail -30 "$work/build.log")"
[ "$build_status" = 0 ] || {
	tail -60 "$work/build.log"
	echo "package: $passed passed, $failed failed"
	exit 1
}
grep -E '^(### |# 15: )' "$work/build.log" | sed 's/^/# /'
if grep -q 'nvcc ' "$work/build.log"; then
	echo "# the package has the cuda backend (nvcc was found)"
else
	echo "# the package has the cuda stub: joins run on the cpu backend"
fi
deb=$(ls "$work/${package}_${deb_version}_"*.deb 2>/dev/null | head -1)
[ -n "${KEEP_DEB:-}" ] && mkdir -p "$KEEP_DEB" && cp "$work"/*.deb "$KEEP_DEB"/

# the build leaves only debhelper's files, under debian/, and
# `debian/rules clean` takes those away
(cd "$src" && find . -type f | sort) >"$work/files.after"
left=$(comm -13 "$work/files.before" "$work/files.after" |
	grep -vE '^\./debian/(\.debhelper/|postgresql-15-gpujoin(-dbgsym)?/|files$|debhelper-build-stamp$|[^/]*\.substvars$|[^/]*\.debhelper\.log$)')
report "$([ -z "$left" ] && echo 1 || echo 0)" "the build leaves no file in the tree outside debhelper's in debian/" "$left"
(cd "$src" && debian/rules clean) >"$work/clean.log" 2>&1
(cd "$src" && find . -type f | sort) >"$work/files.clean"
left=$(diff "$work/files.before" "$work/files.clean")
report "$([ -z "$left" ] && echo 1 || echo 0)" "debian/rules clean leaves the tree as it was copied" "$left"

# 3. the package's files: the library, the control file and the SQL
# scripts where Debian's PostgreSQL 15 looks, documentation, nothing else
expected=$(
	echo ./usr/lib/postgresql/15/lib/gpujoin.so
	echo ./usr/share/postgresql/15/extension/gpujoin.control
	for f in sql/gpujoin--*.sql; do echo "./usr/share/postgresql/15/extension/${f#sql/}"; done
)
expected=$(echo "$expected" | sort)
deb_files=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -v '/$' | sort)
server_files=$(echo "$deb_files" | grep -v '^\./usr/share/doc/')
doc_files=$(echo "$deb_files" | grep '^\./usr/share/doc/')
check "the package holds gpujoin.so, gpujoin.control and $(echo "$expected" | grep -c '\.sql$') SQL script(s), nothing else for the server" \
	$([ "$server_files" = "$expected" ] && echo 0 || echo 1) \
	"$(diff <(echo "$expected") <(echo "$server_files") | grep '^[<>]' | tr '\n' ' ')"
check "the package has its copyright, changelog and README under /usr/share/doc/$package" \
	$(echo "$doc_files" | grep -q "/doc/$package/copyright$" &&
		echo "$doc_files" | grep -q "/doc/$package/changelog.Debian.gz$" &&
		echo "$doc_files" | grep -q "/doc/$package/README.md.gz$" && echo 0 || echo 1) "$doc_files"
depends=$(dpkg-deb -f "$deb" Depends)
check "the package depends on postgresql-15 ($depends)" \
	$(echo "$depends" | grep -qE '(^|, )postgresql-15(,|$| )' && echo 0 || echo 1)

# 4. install
if [ "$install_mode" = none ]; then
	echo "# SKIP installing the package and the demo: $why_not"
	echo "package: $passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
fi
echo "# installing into ${install_root:-the system} ($install_mode)"
unpacked=$work/unpacked
dpkg -x "$deb" "$unpacked"
installed_files=$(echo "$server_files" | sed 's|^\./||')
for f in $installed_files; do
	if [ -e "$install_root/$f" ]; then
		mkdir -p "$(dirname "$backup/$f")"
		cp -a "$install_root/$f" "$backup/$f"
	fi
done
[ -d "$backup" ] && echo "# copied aside to put back later: $(cd "$backup" && find . -type f | sed 's|^\./|/|' | tr '\n' ' ')"
if [ "$install_mode" = system ]; then
	dpkg -i "$deb" >"$work/dpkg.log" 2>&1
	dpkg_status=$?
	if [ "$dpkg_status" != 0 ] && [ -z "${SKIP_DEPS:-}" ]; then
		# a dependency missing: let apt install it and configure the package
		apt-get install -f -y -qq >>"$work/dpkg.log" 2>&1 && dpkg_status=0
	fi
	listed=$(dpkg -L "$package" 2>/dev/null)
	missing=""
	for f in $installed_files; do
		echo "$listed" | grep -qx "/$f" || missing="$missing /$f"
	done
	check "dpkg -i installs the package; dpkg -L lists the library in $pkglibdir and the control file and SQL scripts in $sharedir/extension" \
		$([ "$dpkg_status" = 0 ] && [ -z "$missing" ] && echo 0 || echo 1) "missing:$missing; $(tail -5 "$work/dpkg.log")"
	verify=$(dpkg --verify "$package" 2>&1)
	check "dpkg --verify: the installed files are the package's" $([ -z "$verify" ] && echo 0 || echo 1) "$verify"
else
	bad=""
	for f in $installed_files; do
		mkdir -p "$(dirname "$install_root/$f")" &&
			cp -a "$unpacked/$f" "$install_root/$f.gj_install" &&
			mv -f "$install_root/$f.gj_install" "$install_root/$f" || bad="$bad /$f"
	done
	check "dpkg -x: the package's library, control file and SQL scripts copied into $install_root" \
		$([ -z "$bad" ] && echo 0 || echo 1) "failed:$bad"
fi
different=""
for f in $installed_files; do
	cmp -s "$unpacked/$f" "$install_root/$f" || different="$different $install_root/$f"
done
check "the server's gpujoin.so, gpujoin.control and SQL scripts are the package's" \
	$([ -z "$different" ] && echo 0 || echo 1) "not the package's:$different"

# 5. a clean cluster on the installed package, and the demo
if cluster_start >"$work/cluster.log" 2>&1; then
	check "a throwaway cluster starts with shared_preload_libraries = 'gpujoin' from the package" 0
	PSQL="$PG_BINDIR/psql -X -q -At -v ON_ERROR_STOP=1 -d postgres"
	ext=$($PSQL -c "CREATE EXTENSION gpujoin" -c "SELECT extversion FROM pg_extension WHERE extname = 'gpujoin'" 2>&1)
	devices=$($PSQL -c "SELECT string_agg(backend || ':' || status, ', ') FROM gpujoin_devices()" 2>&1)
	check "CREATE EXTENSION gpujoin makes version $control_version; gpujoin_devices(): $devices" \
		$([ "$ext" = "$control_version" ] && echo 0 || echo 1) "$ext"

	# scripts/demo.sql: three GpuJoin plans under EXPLAIN ANALYZE, each
	# beside PostgreSQL's own (exactly three: a native plan that showed
	# GpuJoin would mean gpujoin.enabled = off was not heard)
	demo_start=$(date +%s)
	"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres -f scripts/demo.sql >"$work/demo.out" 2>&1
	demo_status=$?
	gpujoin_plans=$(grep -c 'Custom Scan (GpuJoin)' "$work/demo.out")
	check "scripts/demo.sql runs and its three GpuJoin plans show GpuJoin ($gpujoin_plans, $(($(date +%s) - demo_start)) s)" \
		$([ "$demo_status" = 0 ] && [ "$gpujoin_plans" = 3 ] && echo 0 || echo 1) "$(tail -20 "$work/demo.out")"
	[ "$demo_status" = 0 ] && [ "$gpujoin_plans" = 3 ] || cat "$work/demo.out"

	# the demo's joins on its tables: GpuJoin's plan and result, then the
	# native plan's result
	same_as_native() {
		local name=$1 settings=$2 query=$3 plan got want
		plan=$($PSQL -c "$settings" -c "EXPLAIN (COSTS OFF) $query" 2>&1)
		got=$($PSQL -c "$settings" -c "$query" 2>&1)
		want=$($PSQL -c "SET gpujoin.enabled = off" -c "$query" 2>&1)
		check "$name: GpuJoin's result equals PostgreSQL's own plan's ($got)" \
			$(echo "$plan" | grep -q 'Custom Scan (GpuJoin)' && [ -n "$got" ] && [ "$got" = "$want" ] &&
				echo 0 || echo 1) "GpuJoin: $got, native: $want; plan: $(echo "$plan" | tr '\n' ' ')"
	}
	same_as_native "theta join r.a > s.a" "" \
		"SELECT count(*) FROM r JOIN s ON r.a > s.a"
	same_as_native "band join s.t BETWEEN r.t - 5 AND r.t + 5" "" \
		"SELECT count(*) FROM r JOIN s ON s.t BETWEEN r.t - 5 AND r.t + 5"
	same_as_native "equi-join f.k = d.k (native joins off)" \
		"SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off" \
		"SELECT sum(f.v * d.w) FROM fact f JOIN dim d ON f.k = d.k"
else
	check "a throwaway cluster starts with shared_preload_libraries = 'gpujoin' from the package" 1 \
		"$(tail -20 "$work/cluster.log")"
fi

# 6. leave the server as it was found
cluster_stop
uninstall
changed=""
for f in $installed_files; do
	if [ -e "$backup/$f" ]; then
		cmp -s "$backup/$f" "$install_root/$f" || changed="$changed $install_root/$f"
	elif [ -e "$install_root/$f" ]; then
		changed="$changed $install_root/$f"
	fi
done
if [ "$install_mode" = system ] && dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "installed"; then
	changed="$changed (the package is still installed)"
fi
check "the package is removed and the files it replaced are back as they were" \
	$([ -z "$changed" ] && echo 0 || echo 1) "changed:$changed"

echo "package: $passed passed, $failed failed"
[ "$failed" = 0 ]
