#!/usr/bin/env bash
# Two builds of perfschema_fdw side by side in one throwaway cluster: the working
# tree's and another commit's, over the same fixture region (events_waits_history_long,
# ROWS rows). Each round runs every query in a new backend on the old build, then in a
# new backend on the new one (a backend loads one of the two libraries: they define
# the same settings); a side's figure for a round is the median of 5 warm runs (after
# one), the result the median of the rounds. Execution Time of EXPLAIN (ANALYZE,
# TIMING OFF), ms; ratio = new / old. On a noisy machine, differences under about 10%
# need several runs of this script to mean anything. A setting the old build does not
# know is dropped in its backends (PostgreSQL's warning about it is not shown).
#
# Usage (as root): OLD_COMMIT=f054fd6 bash bench/fdw_ab.sh
#   ROUNDS=11 ROWS=1000000 SETTINGS='SET perfschema_fdw.pushdown_aggregates = off'
#   QUERIES_FILE=file (one query per line, SCHEMA for the foreign tables' schema)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-11}
rows=${ROWS:-1000000}
settings=${SETTINGS:-SET perfschema_fdw.pushdown_aggregates = off}
old_lib=perfschema_fdw_ab_old

# --- inside the throwaway cluster
if [ "${1:-}" = "--session" ]; then
  region=$2 queries_file=$3
  psql -X -q -v ON_ERROR_STOP=1 -v region="$region" <<'SQL' >/dev/null
CREATE EXTENSION perfschema_fdw;
CREATE SERVER new_build FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'region');
CREATE SCHEMA new_build;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (events_waits_history_long) FROM SERVER new_build INTO new_build;
SQL
  # a second backend: this one loaded the new library
  psql -X -q -v ON_ERROR_STOP=1 -v region="$region" -v lib="\$libdir/$old_lib" <<'SQL' >/dev/null
CREATE FUNCTION old_handler() RETURNS fdw_handler AS :'lib', 'perfschema_fdw_handler' LANGUAGE C STRICT;
CREATE FUNCTION old_validator(text[], oid) RETURNS void AS :'lib', 'perfschema_fdw_validator' LANGUAGE C STRICT;
CREATE FOREIGN DATA WRAPPER old_build HANDLER old_handler VALIDATOR old_validator;
CREATE SERVER old_build FOREIGN DATA WRAPPER old_build OPTIONS (region :'region');
CREATE SCHEMA old_build;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (events_waits_history_long) FROM SERVER old_build INTO old_build;
SQL
  median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  warm_ms() {  # schema query -> median of 5 warm runs
    local q=${2//SCHEMA/$1}
    for _ in 1 2 3 4 5 6; do echo "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $q;"; done |
      psql -X -q -At -v ON_ERROR_STOP=1 -c "SET max_parallel_workers_per_gather = 0" -c "$settings" -f - \
        2> >(grep -v 'configuration parameter name\|reserved prefix' >&2) |
      sed -n 's/.*"Execution Time": \([0-9.]*\).*/\1/p' | tail -n +2 | median
  }
  printf '%10s %10s %6s  %s\n' old_ms new_ms ratio query
  while IFS= read -r q; do
    [ -z "$q" ] && continue
    olds=() news=()
    for _ in $(seq "$rounds"); do
      olds+=("$(warm_ms old_build "$q")")
      news+=("$(warm_ms new_build "$q")")
    done
    old=$(printf '%s\n' "${olds[@]}" | median)
    new=$(printf '%s\n' "${news[@]}" | median)
    printf '%10.1f %10.1f %6.2f  %s\n' "$old" "$new" "$(awk -v a="$new" -v b="$old" 'BEGIN { print a / b }')" "$q"
  done <"$queries_file"
  exit 0
fi

# --- outside: build both, install, write the region, run the session above
: "${OLD_COMMIT:?set OLD_COMMIT to the commit to compare the working tree with}"
source scripts/build_fdw.sh
build_and_install_fdw pfs_fixture

workdir=$(mktemp -d /tmp/perfschema_ab.XXXXXX)
libdir=$(pg_config --pkglibdir)
cleanup() {
  git worktree remove --force "$workdir/old" 2>/dev/null || true
  rm -rf "$workdir" "$libdir/$old_lib.so"
}
trap cleanup EXIT
chmod 755 "$workdir"
git worktree add -q --detach "$workdir/old" "$OLD_COMMIT"
make -C "$workdir/old" -f Makefile.pgxs -j"$(nproc)" perfschema_fdw.so >/dev/null
install -m 755 "$workdir/old/perfschema_fdw.so" "$libdir/$old_lib.so"

queries_file=${QUERIES_FILE:-$workdir/queries}
if [ -z "${QUERIES_FILE:-}" ]; then
  cat >"$queries_file" <<'EOF'
SELECT count(*) FROM SCHEMA.events_waits_history_long
SELECT sum(timer_wait) FROM SCHEMA.events_waits_history_long
SELECT event_id, event_name, timer_wait FROM SCHEMA.events_waits_history_long WHERE thread_id = 2
SELECT event_id, event_name, timer_wait FROM SCHEMA.events_waits_history_long WHERE event_name LIKE 'wait/io/%'
EOF
fi
chmod 644 "$queries_file"
build/tools/pfs_fixture --history-long-rows="$rows" "$workdir/bench.region"
echo "perfschema_fdw $OLD_COMMIT (old) against the working tree (new): $rows rows, $rounds rounds; $settings"
pg_virtualenv -t bash "$0" --session "$workdir/bench.region" "$queries_file"
