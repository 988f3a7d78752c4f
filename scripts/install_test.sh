#!/usr/bin/env bash
# The installed library, used as a program outside the tree would: cmake --install
# into a temporary prefix, then tests/consumer (a project of its own) is built
# against it with find_package(perfschema CONFIG) and, separately, with
# pkg-config --cflags --libs perfschema; both programs record their waits, the
# installed reader reads one back, and perfschema_fdw reads both from SQL.
# Usage (as root): bash scripts/install_test.sh    (about 30 s)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/fdw_live_common.sh

if [ "${1:-}" != "--session" ]; then
  live_build
  exec pg_virtualenv -t bash "$0" --session
fi

live_workdir
prefix="$WORK/prefix"
cmake --install build --prefix "$prefix" >/dev/null
echo "=== installed into $prefix: $(cd "$prefix" && find . -name '*.a' -o -name '*.pc' -o -name '*Config.cmake' | sort | tr '\n' ' ')"

cmake -S tests/consumer -B "$WORK/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$WORK/cmake-build" >/dev/null
pc_flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs perfschema)
echo "pkg-config --cflags --libs perfschema: $pc_flags"
# shellcheck disable=SC2086  # the flags are words
g++ -std=c++20 -O2 tests/consumer/consumer.cpp $pc_flags -o "$WORK/pc_consumer"

run_consumer() {  # program, region, locks
  PFS_REGION="$2" PFS_REGION_MODE=0644 PFS_INSTRUMENT='%=ON' "$1" "$3" >/dev/null
}
run_consumer "$WORK/cmake-build/pfs_consumer" "$WORK/cmake.pfs" 700
run_consumer "$WORK/pc_consumer" "$WORK/pkgconfig.pfs" 300
lock=wait/synch/mutex/consumer/orders_lock
check "the installed reader reads the find_package program's waits" \
  "[ \"$("$WORK/cmake-build/pfs_consumer_reader" "$WORK/cmake.pfs" $lock)\" = count_star=700 ]"

psql -X -q -v ON_ERROR_STOP=1 -v cm="$WORK/cmake.pfs" -v pc="$WORK/pkgconfig.pfs" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS perfschema_fdw;
CREATE SERVER by_cmake FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'cm');
CREATE SERVER by_pkgconfig FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'pc');
CREATE SCHEMA cm;
CREATE SCHEMA pc;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (events_waits_summary_global_by_event_name,
  file_summary_by_event_name) FROM SERVER by_cmake INTO cm;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (events_waits_summary_global_by_event_name,
  file_summary_by_event_name) FROM SERVER by_pkgconfig INTO pc;
SQL
check "the FDW reads the find_package program's 700 locks" \
  "[ \"$(q "SELECT count_star FROM cm.events_waits_summary_global_by_event_name WHERE event_name = '$lock'")\" = 700 ]"
check "the FDW reads the pkg-config program's 300 locks" \
  "[ \"$(q "SELECT count_star FROM pc.events_waits_summary_global_by_event_name WHERE event_name = '$lock'")\" = 300 ]"
check "and its file io (6 bytes written)" \
  "[ \"$(q "SELECT sum_number_of_bytes_write FROM pc.file_summary_by_event_name WHERE event_name = 'wait/io/file/consumer/log'")\" = 6 ]"
echo "=== install_test: all checks passed"
