#!/usr/bin/env bash
# The PostgreSQL-side suites on the newer servers: for each version, its Debian tree
# (scripts/pg_trees.sh: made if missing) gets a copy of the clone (the files git
# tracks or would, as they are now) with the programs the tests run, built here once
# for all versions, and runs scripts/fdw_check.sh --tree there: the extension built
# against that version's headers (warnings are errors) and installed in the tree,
# pg_regress, the isolation specs and the live tests that need a server. Ends with
# fdw_check.sh's line per version, e.g.
#   PostgreSQL 17.12: 24 regression, 3 isolation, 12 live tests passed
# Usage (as root): bash scripts/pg_tree_check.sh [VERSION...]     (17 18)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build_fdw.sh
source scripts/pg_trees.sh
[ $# -gt 0 ] || set -- "${PFS_PG_TREE_VERSIONS[@]}"

# What the live tests run besides the extension (their live_session targets).
programs=(pfs_fixture pfs_live pfs_commit_delay pfs_hold_setup_lock pfs_prefork pfs_demo pfs_flamegraph
  pfs_trace_merge pfs_top pfs_preload)
build_fdw_programs "${programs[@]}"

# The clone's copy in the tree, at a path of its own: the sources replaced, the
# extension's objects (build/pgxs, against that version) kept for the next run.
copy_into() {  # tree directory
  local copy="$1/root/perfschema"
  mkdir -p "$copy"
  find "$copy" -mindepth 1 -maxdepth 1 ! -name build ! -name perfschema_fdw.so -exec rm -rf {} +
  find "$copy/build" -mindepth 1 -maxdepth 1 ! -name pgxs -exec rm -rf {} + 2>/dev/null || true
  git ls-files -z -co --exclude-standard | xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' |
    tar --null -T - -cf - | tar -xf - -C "$copy"
  tar --exclude=CMakeFiles --exclude='*.a' --exclude=cmake_install.cmake -cf - build/tools \
    build/agent/libpfs_preload.so build/tests/pfs_prefork | tar -xf - -C "$copy"
  copy_core_objects "$copy"
}

# The C++ core of the extension (fdw/core_*.cpp and the reader it is built on)
# includes no PostgreSQL header: its objects are the same for every server version,
# so those of the machine's build (build/pgxs, made by scripts/fdw_check.sh with
# warnings as errors) are reused, with their dependency files pointed at the copy;
# make in the tree compiles only the C shim against that version's headers (and any
# core file newer than its object). Saves the core's compile, minutes per tree.
copy_core_objects() {  # copy directory
  local copy=$1 object
  [ -d build/pgxs ] || return 0
  while IFS= read -r object; do
    [ -f "${object%.o}.d" ] || continue
    mkdir -p "$copy/$(dirname "$object")"
    cp -p "$object" "$copy/$object"
    sed "s|$PWD/|/root/perfschema/|g" "${object%.o}.d" >"$copy/${object%.o}.d"
    touch -r "$object" "$copy/${object%.o}.d"
  done < <(find build/pgxs/fdw -name 'core_*.o'; find build/pgxs/agent build/pgxs/timers -name '*.o' 2>/dev/null)
}

# The live tests run in each tree: by default the live, fault, directory and hosts
# tests, the ones closest to the server's own APIs (all of them run on 15;
# PFS_TREE_LIVE_TESTS=all runs every one in the trees too). Keeps CI under 45 min.
tree_live=${PFS_TREE_LIVE_TESTS:-fdw_live fdw_fault fdw_directory fdw_hosts}
[ "$tree_live" != all ] || tree_live=

for version in "$@"; do
  start=$SECONDS
  echo "=== PostgreSQL $version: its tree"
  pg_tree_make "$version"
  copy_into "$(pg_tree_dir "$version")"
  echo "=== PostgreSQL $version: scripts/fdw_check.sh --tree in $(pg_tree_dir "$version")"
  pg_tree_run "$version" bash -c "cd /root/perfschema && PFS_PREBUILT=1 PFS_LIVE_TESTS='$tree_live' bash scripts/fdw_check.sh --tree" |
    tee "build/fdw_check_$version.log"
  echo "=== PostgreSQL $version: $((SECONDS - start)) s"
done
