#!/usr/bin/env bash
# The installed library, used as programs outside the tree would: cmake --install
# into a temporary prefix, then tests/consumer (C++) and tests/consumer_c (C, a
# C-only project) are built against it with find_package(perfschema CONFIG) and,
# separately, with pkg-config --cflags --libs perfschema; the C program also
# against libperfschema.so, installed from build-shared (configured as
# debian/rules does: -DPFS_SHARED=ON), with pkg-config perfschema-shared and
# perfschema::shared. Every program records its waits, the installed reader reads
# them back, and perfschema_fdw reads them from SQL.
# Usage (as root): bash tests/live/install_test.sh    (about 30 s; the first run
# builds build-shared, a few minutes)
source "$(dirname "$0")/lib.sh"

# Before the cluster: libperfschema.so in build-shared, configured as debian/rules does.
live_before_session() {
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B build-shared "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DPFS_SHARED=ON \
    -DPFS_BUILD_TESTS=OFF -DPFS_BUILD_BENCH=OFF >/dev/null
  cmake --build build-shared -j"$(nproc)" >/dev/null
}
live_session

live_workdir
prefix="$WORK/prefix"
cmake --install build --prefix "$prefix" >/dev/null
echo "=== installed into $prefix: $(cd "$prefix" && find . -name '*.a' -o -name '*.pc' -o -name '*Config.cmake' | sort | tr '\n' ' ')"
shared="$WORK/prefix-shared"
cmake --install build-shared --prefix "$shared" >/dev/null
echo "=== installed into $shared: $(cd "$shared" && find . -name 'libperfschema.so*' -o -name 'perfschema-shared.pc' | sort | tr '\n' ' ')"

# The commands of README's "Linking against the installed library", as written there.
cmake -S tests/consumer -B "$WORK/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$WORK/cmake-build" >/dev/null
cmake -S tests/consumer_c -B "$WORK/cmake-c" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$WORK/cmake-c" >/dev/null
cmake -S tests/consumer_c -B "$WORK/cmake-c-shared" -DCMAKE_PREFIX_PATH="$shared" -DPFS_LIB=perfschema::shared >/dev/null
cmake --build "$WORK/cmake-c-shared" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "pkg-config --cflags --libs perfschema: $(pkg-config --cflags --libs perfschema)"
# shellcheck disable=SC2046  # the flags are words
g++ -std=c++20 tests/consumer/consumer.cpp $(pkg-config --cflags --libs perfschema) -o "$WORK/pc_consumer"
# shellcheck disable=SC2046
gcc tests/consumer_c/consumer.c $(pkg-config --cflags --libs perfschema) -o "$WORK/pc_consumer_c"
export PKG_CONFIG_PATH="$shared/lib/pkgconfig"
echo "pkg-config --cflags --libs perfschema-shared: $(pkg-config --cflags --libs perfschema-shared)"
# shellcheck disable=SC2046
gcc tests/consumer_c/consumer.c $(pkg-config --cflags --libs perfschema-shared) -o "$WORK/pc_consumer_c_shared"
unset PKG_CONFIG_PATH

# The shared programs load the installed libperfschema.so.0 and have no agent of
# their own. (grep -c, not -q: -q stops reading and pipefail sees nm's SIGPIPE.)
for p in pc_consumer_c_shared cmake-c-shared/pfs_consumer_c; do
  check "$p needs the installed libperfschema.so.0" \
    "[ \"\$(LD_LIBRARY_PATH='$shared/lib' ldd '$WORK/$p' | grep -cF 'libperfschema.so.0 => $shared/lib/libperfschema.so.0')\" = 1 ]"
  check "and has no agent linked in" "[ \"\$(nm '$WORK/$p' | grep -c ' T pfs_init_from_env$')\" = 0 ]"
done
check "the static C programs have the agent linked in" \
  "[ \"\$(nm '$WORK/pc_consumer_c' '$WORK/cmake-c/pfs_consumer_c' | grep -c ' T pfs_init_from_env$')\" = 2 ]"

run_consumer() {  # program, region, locks
  PFS_REGION="$2" PFS_REGION_MODE=0644 PFS_INSTRUMENT='%=ON' LD_LIBRARY_PATH="$shared/lib" "$1" "$3" >/dev/null
}
run_consumer "$WORK/cmake-build/pfs_consumer" "$WORK/cmake.pfs" 700
run_consumer "$WORK/pc_consumer" "$WORK/pkgconfig.pfs" 300
run_consumer "$WORK/cmake-c/pfs_consumer_c" "$WORK/cmake_c.pfs" 400
run_consumer "$WORK/pc_consumer_c" "$WORK/pkgconfig_c.pfs" 500
run_consumer "$WORK/cmake-c-shared/pfs_consumer_c" "$WORK/cmake_c_shared.pfs" 600
run_consumer "$WORK/pc_consumer_c_shared" "$WORK/pkgconfig_c_shared.pfs" 800
lock=wait/synch/mutex/consumer/orders_lock
c_lock=wait/synch/mutex/consumer_c/orders_lock
read_count() { "$WORK/cmake-build/pfs_consumer_reader" "$WORK/$1.pfs" "$2"; }
check "the installed reader reads the find_package program's waits" \
  "[ \"$(read_count cmake $lock)\" = count_star=700 ]"
check "the installed reader reads the C find_package program's waits" \
  "[ \"$(read_count cmake_c $c_lock)\" = count_star=400 ]"
check "the installed reader reads the C pkg-config program's waits" \
  "[ \"$(read_count pkgconfig_c $c_lock)\" = count_star=500 ]"
check "the installed reader reads the C perfschema::shared program's waits" \
  "[ \"$(read_count cmake_c_shared $c_lock)\" = count_star=600 ]"
check "the installed reader reads the C perfschema-shared program's waits" \
  "[ \"$(read_count pkgconfig_c_shared $c_lock)\" = count_star=800 ]"

# One server and schema per region: cm, pc, cm_c, pc_c, cm_c_shared, pc_c_shared.
for r in cm:cmake pc:pkgconfig cm_c:cmake_c pc_c:pkgconfig_c cm_c_shared:cmake_c_shared pc_c_shared:pkgconfig_c_shared; do
  psql -X -q -v ON_ERROR_STOP=1 -v s="${r%%:*}" -v region="$WORK/${r#*:}.pfs" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS perfschema_fdw;
CREATE SERVER :s FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'region');
CREATE SCHEMA :s;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (events_waits_summary_global_by_event_name,
  file_summary_by_event_name) FROM SERVER :s INTO :s;
SQL
done
count_in() { q "SELECT count_star FROM $1.events_waits_summary_global_by_event_name WHERE event_name = '$2'"; }
check "the FDW reads the find_package program's 700 locks" "[ \"$(count_in cm $lock)\" = 700 ]"
check "the FDW reads the pkg-config program's 300 locks" "[ \"$(count_in pc $lock)\" = 300 ]"
check "and its file io (6 bytes written)" \
  "[ \"$(q "SELECT sum_number_of_bytes_write FROM pc.file_summary_by_event_name WHERE event_name = 'wait/io/file/consumer/log'")\" = 6 ]"
check "the FDW reads the C find_package program's 400 locks" "[ \"$(count_in cm_c $c_lock)\" = 400 ]"
check "the FDW reads the C pkg-config program's 500 locks" "[ \"$(count_in pc_c $c_lock)\" = 500 ]"
check "the FDW reads the C perfschema::shared program's 600 locks" "[ \"$(count_in cm_c_shared $c_lock)\" = 600 ]"
check "the FDW reads the C perfschema-shared program's 800 locks" "[ \"$(count_in pc_c_shared $c_lock)\" = 800 ]"
echo "=== install_test: all checks passed"
