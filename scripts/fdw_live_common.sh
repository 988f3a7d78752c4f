# Shared by the tests that run a live instrumented process (tools/pfs_live.cpp)
# against a throwaway PostgreSQL: scripts/fdw_live_test.sh, fdw_load_test.sh,
# fdw_trace_test.sh, fdw_top_test.sh. Sourced, not run.
#
# Outside the cluster:  live_build; pg_virtualenv -t bash "$0" --session
# Inside (--session):   live_workdir; live_start_provider [pfs_live args];
#                       live_import; q "SQL"; ... ; live_stop_provider

# Builds pfs_live (and the targets given), the extension, and installs the
# extension (root).
live_build() {
  source scripts/build_fdw.sh
  build_and_install_fdw pfs_live pfs_fixture "$@"
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
  source scripts/pg_clusters_common.sh  # free_port
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
