#!/usr/bin/env bash
# Debian trees with the newer PostgreSQL servers the extension supports, for building
# and testing against them on this Debian 12 machine (which has 15): trixie has
# PostgreSQL 17, forky 18. Each tree is made with debootstrap from the machine's own
# Debian mirror, gets the server, its headers and what the tests need from apt inside
# it (chroot), and is kept in a cache directory outside the clone, so that a rerun on
# the same machine reuses it; a tree that is missing, half made or made for another
# package list is made again from nothing.
#
#   bash scripts/pg_trees.sh [VERSION...]     make the trees missing (17 18), print
#                                             one line per tree
#   bash scripts/pg_trees.sh --refresh [VERSION...]   apt-get upgrade inside them too
#   source scripts/pg_trees.sh                then, in the caller:
#     pg_tree_make VERSION                    as above, for one version
#     pg_tree_dir VERSION                     the tree's directory
#     pg_tree_run VERSION CMD...              CMD in the tree (chroot), /proc, /dev
#                                             and a /dev/shm of its own mounted
#
# PFS_PG_TREES: the cache directory (/var/cache/perfschema/pg-trees). Runs as root
# (debootstrap, chroot, mount). The mounts are made in a mount namespace of their own
# (unshare), so that none is left behind on the machine whatever happens to the
# command; they are also unmounted when it ends.

PFS_PG_TREES=${PFS_PG_TREES:-/var/cache/perfschema/pg-trees}
PFS_PG_TREE_VERSIONS=(17 18)

# The Debian suite that ships each PostgreSQL version as its default server.
pg_tree_suite() {
  case $1 in
    17) echo trixie ;;
    18) echo forky ;;
    *) echo "pg_trees: no Debian suite known for PostgreSQL $1" >&2; return 1 ;;
  esac
}

# What a tree holds besides minbase: the server (postgres_fdw comes with it), its
# headers and a compiler for the extension, and the programs the live tests call
# (python3, curl and the Prometheus exporter, sysbench, pg_cron, tmux); ccache keeps
# the extension's objects for the next run of a new clone. build-essential, debhelper,
# postgresql-server-dev-all (pg_buildext) and lintian build and check the version's
# Debian package (scripts/package.sh).
pg_tree_packages() {
  echo "postgresql-$1 postgresql-server-dev-$1 postgresql-$1-cron g++ make ccache python3 curl" \
    "prometheus-postgres-exporter sysbench tmux procps build-essential debhelper postgresql-server-dev-all lintian"
}

# PGXS compiles with the triplet's compiler names (x86_64-linux-gnu-gcc), which
# Debian's ccache links do not cover: they are added (run in the tree).
PG_TREE_CCACHE_LINKS='for c in "$(gcc -dumpmachine)-gcc" "$(gcc -dumpmachine)-g++"; do
  ln -sf ../../bin/ccache "/usr/lib/ccache/$c"; done'

pg_tree_dir() { echo "$PFS_PG_TREES/$(pg_tree_suite "$1")"; }

# The mirror this machine's apt uses (the first deb.debian.org-style URI of a
# "debian" archive), so that the trees come from where the machine's packages do.
pg_tree_mirror() {
  local uri
  uri=$(grep -hoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
    /etc/apt/sources.list.d/*.list 2>/dev/null | head -1 | awk '{print $2}')
  echo "${uri:-http://deb.debian.org/debian}"
}

# Runs CMD in the tree DIR with /proc, /dev and a fresh /dev/shm (the server's
# dynamic shared memory) mounted, in a private mount namespace: the mounts never
# reach the machine's table, and go when the namespace's last process ends. The
# environment is a clean one (the caller's PG* variables would reach the tree's
# clients), with the PFS_* variables passed on; the compilers are ccache's.
pg_tree_chroot() {  # DIR CMD...
  local dir=$1
  shift
  local pass=()
  while IFS= read -r var; do pass+=("$var=${!var}"); done < <(compgen -v PFS_ || true)
  unshare --mount --propagation private -- bash -c '
    set -e
    dir=$1
    shift
    umount_all() { umount -R "$dir/dev" 2>/dev/null || true; umount "$dir/proc" 2>/dev/null || true; }
    trap umount_all EXIT
    mount -t proc proc "$dir/proc"
    mount --rbind /dev "$dir/dev"
    mount -t tmpfs -o mode=1777,size=1g tmpfs "$dir/dev/shm"
    chroot "$dir" "$@"
  ' pg_tree_chroot "$dir" env -i PATH=/usr/lib/ccache:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" DEBIAN_FRONTEND=noninteractive "${pass[@]}" "$@"
}

# A tree is made when its stamp (written last, after every package installed) is
# there with its server and pg_config; it is complete when the stamp names the
# package list and steps wanted now (pg_tree_stamp).
pg_tree_made() {  # VERSION
  local dir
  dir=$(pg_tree_dir "$1")
  [ -f "$dir/.pfs-tree" ] && [ -x "$dir/usr/lib/postgresql/$1/bin/postgres" ] &&
    [ -x "$dir/usr/lib/postgresql/$1/bin/pg_config" ]
}
pg_tree_complete() {  # VERSION
  pg_tree_made "$1" && [ "$(cat "$(pg_tree_dir "$1")/.pfs-tree")" = "$(pg_tree_stamp "$1")" ]
}
# What a complete tree's stamp says: its packages and the steps after them.
pg_tree_stamp() { echo "$(pg_tree_packages "$1"); ccache links"; }

# Makes the tree from nothing in DIR.new, then moves it in place: a run stopped half
# way leaves no tree that looks made.
pg_tree_build() {  # VERSION
  local version=$1 suite dir new script=()
  suite=$(pg_tree_suite "$version")
  dir=$(pg_tree_dir "$version")
  new="$dir.new"
  rm -rf "$new" "$dir"
  mkdir -p "$PFS_PG_TREES"
  # debootstrap knows the suites of its own time; a later one is built like sid.
  [ -e "/usr/share/debootstrap/scripts/$suite" ] || script=(/usr/share/debootstrap/scripts/sid)
  echo "pg_trees: debootstrap $suite ($(pg_tree_mirror)) into $new"
  debootstrap --variant=minbase "$suite" "$new" "$(pg_tree_mirror)" "${script[@]}" >"$PFS_PG_TREES/$suite.log" 2>&1 ||
    { tail -20 "$PFS_PG_TREES/$suite.log" >&2; echo "pg_trees: debootstrap $suite failed" >&2; return 1; }
  # No service starts inside the tree (the packages' scripts would start a server),
  # and installing PostgreSQL makes no cluster: the tests make their own.
  printf '#!/bin/sh\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
  chmod 755 "$new/usr/sbin/policy-rc.d"
  # A suite in development (forky) dates its Release file to expire within days,
  # and a mirror that serves a snapshot keeps serving the expired one; the
  # signatures are still checked.
  echo 'Acquire::Check-Valid-Until "false";' >"$new/etc/apt/apt.conf.d/90pfs-valid-until"
  echo "pg_trees: apt-get install $(pg_tree_packages "$version")"
  # shellcheck disable=SC2046  # the package list is words
  pg_tree_chroot "$new" bash -c '
    set -e
    apt-get update -q
    apt-get install -y -q --no-install-recommends postgresql-common
    sed -i "s/^#* *create_main_cluster.*/create_main_cluster = false/" /etc/postgresql-common/createcluster.conf
    apt-get install -y -q --no-install-recommends "$@"
    apt-get clean
    '"$PG_TREE_CCACHE_LINKS"'
  ' install $(pg_tree_packages "$version") >>"$PFS_PG_TREES/$suite.log" 2>&1 ||
    { tail -20 "$PFS_PG_TREES/$suite.log" >&2; echo "pg_trees: apt-get in $suite failed" >&2; return 1; }
  pg_tree_stamp "$version" >"$new/.pfs-tree"
  mv "$new" "$dir"
}

# Makes the tree if it is not made, installs what a changed package list adds
# (PFS_PG_TREES_REFRESH=1: also upgrades its packages); one at a time per tree (flock).
pg_tree_make() {  # VERSION
  local version=$1 dir log
  dir=$(pg_tree_dir "$version") || return 1
  log="$PFS_PG_TREES/$(pg_tree_suite "$version").log"
  mkdir -p "$PFS_PG_TREES"
  (
    flock 9
    if ! pg_tree_made "$version"; then
      pg_tree_build "$version"
    elif [ -n "${PFS_PG_TREES_REFRESH:-}" ] || ! pg_tree_complete "$version"; then
      # shellcheck disable=SC2046  # the package list is words
      pg_tree_chroot "$dir" bash -c 'set -e; apt-get update -q; [ -z "$1" ] || apt-get upgrade -y -q
        shift; apt-get install -y -q --no-install-recommends "$@"; apt-get clean
        '"$PG_TREE_CCACHE_LINKS" \
        install "${PFS_PG_TREES_REFRESH:-}" $(pg_tree_packages "$version") >>"$log" 2>&1 ||
        { tail -20 "$log" >&2; echo "pg_trees: apt-get in $dir failed" >&2; return 1; }
      pg_tree_stamp "$version" >"$dir/.pfs-tree"
    fi
  ) 9>"$dir.lock"
}

# Runs CMD in the version's tree (made if needed), holding its lock: a tree's
# installed extension and /tmp are one run's at a time.
pg_tree_run() {  # VERSION CMD...
  local version=$1 dir
  shift
  pg_tree_make "$version" || return 1
  dir=$(pg_tree_dir "$version")
  (
    flock 9
    pg_tree_chroot "$dir" "$@"
  ) 9>"$dir.lock"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  if [ "${1:-}" = --refresh ]; then
    export PFS_PG_TREES_REFRESH=1
    shift
  fi
  [ $# -gt 0 ] || set -- "${PFS_PG_TREE_VERSIONS[@]}"
  for version in "$@"; do
    start=$SECONDS
    pg_tree_make "$version"
    echo "pg_trees: PostgreSQL $(pg_tree_run "$version" pg_config --version | awk '{print $2}') in" \
      "$(pg_tree_dir "$version") ($((SECONDS - start)) s)"
  done
fi
