# Shared by the live tests and scripts/doc_check.sh. Sourced, not run.
# tests/live/*_test.sh is one live test each: instrumented programs, a throwaway
# PostgreSQL, run alone or by the entry points scripts/fdw_check.sh and
# scripts/preload_check.sh (scripts/*_check.sh: build what they need, run a group).
#
#   source "$(dirname "$0")/lib.sh"    set -euo pipefail, to the repository's root
#   live_session [TARGET...] [-- PG_VIRTUALENV_OPTION...]
#       outside the cluster: builds pfs_live, pfs_fixture and the CMake targets
#       given, installs the extension (root), runs live_before_session if the
#       script defines it, and runs the script again inside pg_virtualenv's
#       throwaway cluster with --session first; inside (--session): returns.
#   live_workdir; live_start_provider [pfs_live args]; live_import; q "SQL"; ...;
#   live_stop_provider (at exit)
#   clusters_init WORKDIR; cluster_start NAME [ENV=...]: clusters of its own
#       (below), for a test that needs more than pg_virtualenv's one cluster or a
#       server started under LD_PRELOAD.
set -euo pipefail
LIVE_SCRIPT=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
LIVE_ARGS=("$@")
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# Builds pfs_live, pfs_fixture (and the targets given), the extension, and
# installs the extension (root).
live_build() {
  source scripts/build_fdw.sh
  build_and_install_fdw pfs_live pfs_fixture "$@"
}

live_session() {  # [TARGET...] [-- PG_VIRTUALENV_OPTION...]
  [ "${LIVE_ARGS[0]:-}" = --session ] && return 0
  local targets=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    targets+=("$1")
    shift
  done
  if [ $# -gt 0 ]; then shift; fi
  live_build "${targets[@]}"
  if declare -F live_before_session >/dev/null; then live_before_session; fi
  exec pg_virtualenv -t "$@" bash "$LIVE_SCRIPT" --session "${LIVE_ARGS[@]}"
}

# A work directory the server (user postgres) can traverse; removed on exit.
live_workdir() {
  WORK=$(mktemp -d /tmp/pfs_live.XXXXXX)
  chmod 755 "$WORK"
  REGION="$WORK/live.pfs"
  trap 'live_stop_provider; rm -rf "$WORK"' EXIT
}

# Starts build/tools/pfs_live on $REGION (extra environment in LIVE_ENV, an
# array) and waits for its region.
live_start_provider() {
  env "${LIVE_ENV[@]}" PFS_REGION="$REGION" build/tools/pfs_live "$@" >"$WORK/pfs_live.out" 2>&1 &
  PROVIDER_PID=$!
  for _ in $(seq 100); do [ -s "$REGION" ] && grep -q "pid" "$WORK/pfs_live.out" && break; sleep 0.05; done
  [ -s "$REGION" ] || fail "pfs_live did not create its region: $(cat "$WORK/pfs_live.out")"
}

live_stop_provider() {
  if [ -n "${PROVIDER_PID:-}" ] && kill -0 "$PROVIDER_PID" 2>/dev/null; then
    kill -TERM "$PROVIDER_PID" 2>/dev/null || true
    wait "$PROVIDER_PID" 2>/dev/null || true
  fi
  PROVIDER_PID=
}

q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

check() {  # description, condition (evaluated by bash)
  if eval "$2"; then echo "ok: $1"; else fail "$1 ($2)"; fi
}

# The extension, a server on $REGION and its tables in schema ps.
live_import() {
  psql -X -q -v ON_ERROR_STOP=1 -v region="$REGION" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS perfschema_fdw;
CREATE SERVER live FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'region');
CREATE SCHEMA ps;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER live INTO ps;
SQL
}

# count_star of one class in events_waits_summary_global_by_event_name.
count_of() { q "SELECT count_star FROM ps.events_waits_summary_global_by_event_name WHERE event_name = '$1'"; }

# The server's log file (pg_virtualenv's cluster).
server_log() { pg_lsclusters -h | awk '$2 == "regress" { print $7 }'; }

# One scrape of Debian's prometheus-postgres-exporter against this session's cluster
# with the given query file (tools/prometheus/*.yaml): starts the exporter on a free
# port in a clean environment (its lib/pq refuses some of pg_virtualenv's PG*
# variables), prints /metrics once it answers (up to 5 s), stops it. Its log goes to
# the file given; fails (status 1) when no scrape came.
scrape_exporter() {  # query file, log file
  local queries=$1 log=$2 port pid out=
  port=$(free_port)
  env -i PATH="$PATH" \
    DATA_SOURCE_NAME="host=$PGHOST port=$PGPORT user=$PGUSER password=$PGPASSWORD dbname=$PGDATABASE sslmode=disable" \
    prometheus-postgres-exporter --web.listen-address="127.0.0.1:$port" --disable-default-metrics \
    --disable-settings-metrics --extend.query-path="$queries" >"$log" 2>&1 &
  pid=$!
  # Scrapes until one reports no scrape error (a persistent error still shows in
  # the last output); an error on the way is shown with the exporter's log, since a
  # CI run once met one that reruns did not.
  for _ in $(seq 50); do
    if out=$(curl -sf "http://127.0.0.1:$port/metrics"); then
      grep -q '^pg_exporter_last_scrape_error 0' <<<"$out" && break
      echo "scrape_exporter: a scrape reported an error; the exporter's log:" >&2
      sed -n 1,40p "$log" >&2
    fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
  [ -n "$out" ] || return 1
  printf '%s\n' "$out"
}

# --- throwaway clusters of the Debian server binaries, each on its own loopback
# port, for the tests that need more than pg_virtualenv's one cluster or a server
# started under LD_PRELOAD (postmaster_preload_test.sh, fdw_hosts_test.sh):
#   clusters_init WORKDIR          work directory (the server user can traverse it)
#   cluster_start NAME [ENV=...]   initdb WORKDIR/NAME, start postgres with the
#                                  environment given; sets PORT_<NAME>
#   cluster_stop NAME              fast shutdown (clusters_stop_all: every one)
#   as_server CMD...               CMD as the server user (postgres when root:
#                                  initdb refuses to run as root)

# (pg_config: postgresql-server-dev; scripts/setup.sh installs it before a live build)
PG_BIN=$(pg_config --bindir 2>/dev/null || true)
CLUSTERS=()

as_server() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

clusters_init() {
  CLUSTER_DIR=$1
  PG_BIN=${PG_BIN:-$(pg_config --bindir)}
  chmod 755 "$CLUSTER_DIR"
  [ "$(id -u)" = 0 ] && chown postgres: "$CLUSTER_DIR"
  return 0
}

# A free port below Linux's ephemeral range (32768-60999), where no outgoing
# connection can hold it.
free_port() {
  local port=$((20000 + RANDOM % 12000))
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((20000 + RANDOM % 12000)); done
  echo "$port"
}

cluster_start() {
  local name=$1 port attempt
  shift
  as_server "$PG_BIN/initdb" -D "$CLUSTER_DIR/$name" -A trust -U postgres >/dev/null
  CLUSTERS+=("$name")
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    as_server env "$@" "$PG_BIN/postgres" -D "$CLUSTER_DIR/$name" -p "$port" -k "$CLUSTER_DIR" \
      -c listen_addresses=127.0.0.1 >"$CLUSTER_DIR/$name.log" 2>&1 &
    printf -v "PORT_$name" '%s' "$port"
    for _ in $(seq 100); do
      "$PG_BIN/pg_isready" -q -h "$CLUSTER_DIR" -p "$port" -U postgres && return 0
      grep -q "could not bind" "$CLUSTER_DIR/$name.log" && break  # taken meanwhile: another port
      sleep 0.1
    done
    grep -q "could not bind" "$CLUSTER_DIR/$name.log" || break
    sleep 0.5
  done
  echo "cluster $name did not start:" >&2
  tail -20 "$CLUSTER_DIR/$name.log" >&2
  return 1
}

cluster_stop() {
  [ -f "$CLUSTER_DIR/$1/postmaster.pid" ] || return 0
  as_server "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/$1" -m "${2:-fast}" -w stop >/dev/null 2>&1 || true
}

clusters_stop_all() {
  local name
  for name in "${CLUSTERS[@]}"; do cluster_stop "$name" immediate; done
}
