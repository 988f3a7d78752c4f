# Throwaway PostgreSQL clusters of the Debian server binaries, each on its own
# loopback port, for the tests that need more than pg_virtualenv's one cluster or
# a server started under LD_PRELOAD: scripts/postmaster_preload_test.sh,
# scripts/fdw_hosts_test.sh. Sourced, not run.
#
#   clusters_init WORKDIR          work directory (the server user can traverse it)
#   cluster_start NAME [ENV=...]   initdb WORKDIR/NAME, start postgres with the
#                                  environment given; sets PORT_<NAME>
#   cluster_stop NAME              fast shutdown (clusters_stop_all: every one)
#   as_server CMD...               CMD as the server user (postgres when root:
#                                  initdb refuses to run as root)

PG_BIN=$(pg_config --bindir)
CLUSTERS=()

as_server() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

clusters_init() {
  CLUSTER_DIR=$1
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
