#!/usr/bin/env bash
# The extension's Debian package for a newer PostgreSQL, in that version's Debian tree
# (scripts/pg_trees.sh: made if missing): the source package (the files git tracks,
# as they are now) is copied into the tree, `pg_buildext updatecontrol` makes
# debian/control name postgresql-NN-perfschema-fdw (the versions of debian/pgversions
# the tree's suite supports), and dpkg-buildpackage builds it alone (build profile
# pkg.perfschema.fdw-only: no CMake build) with the suite's own compiler and headers.
# Then lintian (the suite's; no errors allowed), dpkg -i of it and of the
# perfschema-tools package built on the machine (pfs_demo and pfs_flamegraph, the same
# for every server version), and scripts/demo.sh on the installed files
# (DEMO_INSTALLED=1) on a throwaway cluster of that version, checking what it shows;
# the packages are purged again at the end. Ends with one line, e.g.
#   PostgreSQL 17.12: package postgresql-17-perfschema-fdw built, lintian clean, installed, demo passed
# Usage (as root; scripts/package.sh calls it):
#   bash scripts/package_tree.sh VERSION DEB_DIR    DEB_DIR holds perfschema-tools_*.deb;
#                                                   the tree's package is copied there
set -euo pipefail
cd "$(dirname "$0")/.."

# The build's directory in the tree: always the same path, so that ccache (kept in
# the tree) finds the objects of the last run whatever the clone's path.
pkg_root=/root/perfschema-package

# --- inside the tree (the script calls itself through pg_tree_run)
if [ "${1:-}" = --inside ]; then
  pg=$2
  fdw=postgresql-$pg-perfschema-fdw
  installed=("$fdw" perfschema-tools)
  purge() { dpkg --purge "${installed[@]}" >/dev/null 2>&1 || true; }
  purge  # a run stopped half way may have left them
  trap purge EXIT
  # (it notes the build dependencies the profile leaves out: the log has it)
  pg_buildext updatecontrol >../build.log 2>&1
  grep -qx "Package: $fdw" debian/control ||
    { echo "FAILED: pg_buildext updatecontrol names no $fdw in debian/control" >&2; exit 1; }
  # debhelper gives the build a HOME of its own: ccache's directory is named.
  CCACHE_DIR=/root/.cache/ccache dpkg-buildpackage -us -uc -b -j"$(nproc)" -Ppkg.perfschema.fdw-only \
    >>../build.log 2>&1 || { tail -40 ../build.log; echo "FAILED: dpkg-buildpackage in the tree" >&2; exit 1; }
  # The extension's package and its debug symbols (dbgsym), nothing else.
  debs=
  for deb in ../*.deb; do [[ $deb == *-dbgsym_* ]] || debs+="${debs:+ }${deb#../}"; done
  [ "$debs" = "${fdw}_$(dpkg-parsechangelog -S Version)_$(dpkg --print-architecture).deb" ] ||
    { echo "FAILED: the tree's build made $debs, not $fdw alone" >&2; exit 1; }
  lintian --fail-on error ../*.changes >../lintian.log 2>&1 || {
    cat ../lintian.log
    echo "FAILED: lintian reports errors" >&2
    exit 1
  }
  echo "lintian $(lintian --print-version): $(grep -c '^E:' ../lintian.log || true) errors, $(grep -c '^W:' ../lintian.log || true) warnings"
  dpkg -i "../${fdw}_"*.deb ../machine/perfschema-tools_*.deb >../install.log 2>&1 ||
    { cat ../install.log; echo "FAILED: dpkg -i $fdw perfschema-tools" >&2; exit 1; }
  [ -f "/usr/lib/postgresql/$pg/lib/perfschema_fdw.so" ] || { echo "FAILED: $fdw installed no perfschema_fdw.so" >&2; exit 1; }
  DEMO_INSTALLED=1 DEMO_SECONDS=3 bash scripts/demo.sh >../demo.log 2>&1 ||
    { tail -30 ../demo.log; echo "FAILED: the demo on the installed packages" >&2; exit 1; }
  # Known values: the requests pfs_demo says it produced, counted again by the server
  # (the digest of INSERT INTO `queue` VALUES (?) in sys.statement_analysis), and the demo's
  # three teams in the join with an ordinary table, each with waits. (Whether the
  # program is still alive at the first query depends on the machine's load.)
  server="PostgreSQL $("/usr/lib/postgresql/$pg/bin/postgres" --version | awk '{print $3}')"
  produced=$(sed -n 's/^pfs_demo: produced \([0-9]*\),.*/\1/p' ../demo.log)
  counted=$(sed -n 's/^ INSERT INTO `queue` VALUES (?) *| *\([0-9]*\) |.*/\1/p' ../demo.log)
  teams=$(grep -cE '^ (ingest|storage|platform) +\| [a-z]+@example\.com +\| +[1-9]' ../demo.log || true)
  [ -n "$produced" ] && [ "$produced" = "$counted" ] && [ "$teams" = 3 ] || {
    cat ../demo.log
    echo "FAILED: the demo's output (requests produced: $produced, counted by the server: $counted; teams with waits: $teams of 3)" >&2
    exit 1
  }
  echo "$server: package $fdw built, lintian clean, installed, demo passed"
  exit 0
fi

# --- outside: the source and the machine's tools package into the tree, then the above
version=$1
deb_dir=$2
source scripts/pg_trees.sh
pg_tree_make "$version"
tree=$(pg_tree_dir "$version")
src="$pkg_root/perfschema-$(dpkg-parsechangelog -S Version)"
rm -rf "${tree:?}$pkg_root"
mkdir -p "$tree$src" "$tree$pkg_root/machine"
git ls-files -z | xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' | tar --null -T - -cf - | tar -xf - -C "$tree$src"
cp "$deb_dir"/perfschema-tools_*.deb "$tree$pkg_root/machine/"
pg_tree_run "$version" bash -c "cd '$src' && bash scripts/package_tree.sh --inside '$version'"
cp "$tree$pkg_root/postgresql-$version-perfschema-fdw_"*.deb "$deb_dir/"
