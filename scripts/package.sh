#!/usr/bin/env bash
# The Debian packages: builds them with dpkg-buildpackage from a copy of the tree
# (tracked files, as they are now), checks them with lintian (no errors allowed),
# installs them with apt-get, runs the demo against the installed files
# (DEMO_INSTALLED=1: /usr/bin/pfs_demo, the packaged extension), builds
# tests/consumer and tests/consumer_c against the installed library (find_package
# and pkg-config in /usr; the C program also against libperfschema.so), then
# removes the packages again. Then the extension's package for each newer
# PostgreSQL of debian/pgversions (17, 18) in that version's Debian tree
# (scripts/package_tree.sh: built there, lintian, installed, the demo), one line per
# version. The .deb files built here stay in PFS_DEB_DIR if set.
# Usage (as root): bash scripts/package.sh [VERSION...]   (a few minutes: it builds
#   everything; VERSION: the trees' versions to package, all of them by default;
#   PFS_PACKAGE_TREES=0: none)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# The build's directory: always the same path, so that ccache finds the objects of
# the last run whatever the clone's path (the compilers' command lines name it);
# one run at a time.
work=/var/cache/perfschema/package-build  # root's, like the trees (scripts/pg_trees.sh)
mkdir -p "$work"
exec 9>"$work.lock"
flock -w 1200 9 || { echo "FAILED: $work.lock is held by another run (or a process it left)" >&2; exit 1; }
rm -rf "${work:?}"/*
packages=(postgresql-15-perfschema-fdw libperfschema-dev libperfschema0 perfschema-tools)
cleanup() {
  apt-get remove -y "${packages[@]}" >/dev/null 2>&1 || true
  rm -rf "${work:?}"/*
}
trap cleanup EXIT
version=$(dpkg-parsechangelog -S Version)
src="$work/perfschema-$version"
mkdir "$src"
# ccache through its compilers' directory leading PATH (CMake's part and the
# extension's make find cc and c++ there), not also as CMake's compiler launcher
# (that would run ccache over ccache); debhelper gives the build a HOME of its own,
# so ccache's directory is named.
ccache_env=(-u CMAKE_C_COMPILER_LAUNCHER -u CMAKE_CXX_COMPILER_LAUNCHER)
if [ -z "${PFS_NO_CCACHE:-}" ] && command -v ccache >/dev/null; then
  ccache_env+=(CCACHE_DIR="$(ccache -k cache_dir)" PATH="/usr/lib/ccache:$PATH")
fi
git ls-files -z | xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' | tar --null -T - -cf - | tar -xf - -C "$src"

echo "=== dpkg-buildpackage (perfschema $version)"
(cd "$src" && env "${ccache_env[@]}" dpkg-buildpackage -us -uc -b -j"$(nproc)" >"$work/build.log" 2>&1) ||
  { tail -40 "$work/build.log"; echo "FAILED: dpkg-buildpackage" >&2; exit 1; }
ls -1 "$work"/*.deb | sed 's|.*/|  |'
for p in "${packages[@]}"; do
  ls "$work/${p}_"*.deb >/dev/null || { echo "FAILED: no package $p" >&2; exit 1; }
done

echo "=== lintian"
lintian --fail-on error --suppress-tags-from-file /dev/null "$work"/*.changes | tee "$work/lintian.log" || {
  echo "FAILED: lintian reports errors" >&2
  exit 1
}
echo "lintian: $(grep -c '^E:' "$work/lintian.log" || true) errors, $(grep -c '^W:' "$work/lintian.log" || true) warnings"

echo "=== install"
apt-get install -y "$work"/*.deb >/dev/null
dpkg -L postgresql-15-perfschema-fdw | grep -E '\.so$|\.control$'
[ -x /usr/bin/pfs_demo ] && [ -f "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/perfschema/libpfs_preload.so" ] ||
  { echo "FAILED: the tools are not installed" >&2; exit 1; }

echo "=== the demo against the installed files"
DEMO_INSTALLED=1 DEMO_SECONDS=3 bash scripts/demo.sh >"$work/demo.log" 2>&1 ||
  { tail -30 "$work/demo.log"; echo "FAILED: the demo on the installed packages" >&2; exit 1; }
grep -E "provider_alive|wait/synch/mutex/demo/queue_lock" "$work/demo.log" | sed -n 1,3p

echo "=== a program built against the installed library"
cmake -S tests/consumer -B "$work/consumer" >/dev/null
cmake --build "$work/consumer" >/dev/null
# shellcheck disable=SC2046  # the flags are words
g++ -std=c++20 tests/consumer/consumer.cpp $(pkg-config --cflags --libs perfschema) -o "$work/pc_consumer"
PFS_REGION="$work/c.pfs" PFS_INSTRUMENT='%=ON' "$work/consumer/pfs_consumer" 200 >/dev/null
PFS_REGION="$work/p.pfs" PFS_INSTRUMENT='%=ON' "$work/pc_consumer" 100 >/dev/null
[ "$("$work/consumer/pfs_consumer_reader" "$work/c.pfs" wait/synch/mutex/consumer/orders_lock)" = count_star=200 ] &&
  [ "$("$work/consumer/pfs_consumer_reader" "$work/p.pfs" wait/synch/mutex/consumer/orders_lock)" = count_star=100 ] ||
  { echo "FAILED: the consumer programs' waits" >&2; exit 1; }
# The C program: a C-only CMake project (static agent) and gcc with perfschema-shared.pc.
cmake -S tests/consumer_c -B "$work/consumer_c" >/dev/null
cmake --build "$work/consumer_c" >/dev/null
# shellcheck disable=SC2046
gcc tests/consumer_c/consumer.c $(pkg-config --cflags --libs perfschema-shared) -o "$work/pc_consumer_c"
PFS_REGION="$work/cc.pfs" PFS_INSTRUMENT='%=ON' "$work/consumer_c/pfs_consumer_c" 300 >/dev/null
PFS_REGION="$work/pc.pfs" PFS_INSTRUMENT='%=ON' "$work/pc_consumer_c" 400 >/dev/null
cmake_c=$("$work/consumer/pfs_consumer_reader" "$work/cc.pfs" wait/synch/mutex/consumer_c/orders_lock || true)
shared_c=$("$work/consumer/pfs_consumer_reader" "$work/pc.pfs" wait/synch/mutex/consumer_c/orders_lock || true)
[ "$cmake_c" = count_star=300 ] && [ "$shared_c" = count_star=400 ] &&
  [ "$(ldd "$work/pc_consumer_c" | grep -cE 'libperfschema.so.0 => (/usr)?/lib/')" = 1 ] ||  # /lib is /usr/lib (merged /usr)
  { echo "FAILED: the C consumer programs' waits (CMake, static: $cmake_c; gcc with perfschema-shared: $shared_c; $(ldd "$work/pc_consumer_c" | grep perfschema))" >&2; exit 1; }
echo "ok: find_package and pkg-config against /usr (C++ and C, static and libperfschema.so)"
pg15="PostgreSQL $(/usr/lib/postgresql/15/bin/postgres --version | awk '{print $3}'): package postgresql-15-perfschema-fdw built, lintian clean, installed, demo passed"

# The newer versions in their trees: those of debian/pgversions that scripts/pg_trees.sh
# makes a tree for.
source scripts/pg_trees.sh
lines=("$pg15")
if [ "${PFS_PACKAGE_TREES:-1}" != 0 ]; then
  [ $# -gt 0 ] || set -- "${PFS_PG_TREE_VERSIONS[@]}"
  for pg in "$@"; do
    grep -qx "$pg" debian/pgversions || { echo "FAILED: $pg is not in debian/pgversions" >&2; exit 1; }
    start=$SECONDS
    echo "=== postgresql-$pg-perfschema-fdw in the $(pg_tree_suite "$pg") tree: scripts/package_tree.sh $pg"
    bash scripts/package_tree.sh "$pg" "$work" | tee "$work/tree_$pg.log"
    lines+=("$(tail -1 "$work/tree_$pg.log")")
    echo "=== postgresql-$pg-perfschema-fdw: $((SECONDS - start)) s"
  done
fi
if [ -n "${PFS_DEB_DIR:-}" ]; then mkdir -p "$PFS_DEB_DIR" && cp "$work"/*.deb "$PFS_DEB_DIR"/; fi
echo "=== package check passed"
printf '%s\n' "${lines[@]}"
