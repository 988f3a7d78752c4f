#!/usr/bin/env bash
# Prometheus: Debian's prometheus-postgres-exporter with tools/prometheus/queries.yaml
# against a throwaway PostgreSQL whose perfschema tables read the region of a real
# program (sysbench fileio, unmodified, under the interposer: mutex waits and file
# io). curl reads /metrics and finds the program's waits, its file io bytes, its
# heap and the agent's own memory, the wait latency histograms, the status counters, and the
# number of perfschema series stays bounded. Then the program's own metrics, of
# tools/pfs_live (sysbench has none): a counter as a counter, a gauge as a gauge,
# with their meter, name and unit, and none of a disabled meter.
# Usage (as root): bash tests/live/prometheus_test.sh    (about 20 s)
source "$(dirname "$0")/lib.sh"

live_session pfs_preload

live_workdir
sysbench_pid=
trap '[ -n "$sysbench_pid" ] && kill "$sysbench_pid" 2>/dev/null;
      live_stop_provider; wait 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK"
sysbench fileio --file-num=4 --file-total-size=16M prepare >/dev/null
LD_PRELOAD="$OLDPWD/build/agent/libpfs_preload.so" PFS_REGION="$REGION" PFS_REGION_MODE=0644 PFS_INSTRUMENT='%=ON' \
  sysbench fileio --file-num=4 --file-total-size=16M --file-test-mode=rndrw --time=60 run >"$WORK/sysbench.out" 2>&1 &
sysbench_pid=$!
cd "$OLDPWD"
for _ in $(seq 100); do [ -s "$REGION" ] && break; sleep 0.05; done
[ -s "$REGION" ] || fail "sysbench under the interposer made no region"
live_import

metrics=$(scrape_exporter tools/prometheus/queries.yaml "$WORK/exporter.log") ||
  fail "no /metrics: $(grep -v "^\s" "$WORK/exporter.log" | head -20)"
echo "$metrics" | grep '^perfschema_' | sort -t' ' -k2 -g -r | sed -n 1,8p
waits=$(echo "$metrics" | awk '/^perfschema_waits_count_star\{/ && /wait\/synch\/mutex\/sysbench/ { n += $2 } END { print n + 0 }')
check "the program's mutex waits are exported ($waits)" "awk 'BEGIN { exit !($waits > 0) }'"
written=$(echo "$metrics" | awk '/^perfschema_file_io_bytes_write\{/ { n += $2 } END { printf "%d", n }')
check "its file io bytes are exported ($written written)" "[ $written -gt 0 ]"
check "the busiest files are sysbench's test files" \
  "grep -q '^perfschema_top_files_bytes_write{file_name=\"[^\"]*test_file.0\"' <<<\"\$metrics\""
check "totals by class are exported" "grep -q '^perfschema_waits_by_class_count_star{class=\"wait/io/file\"' <<<\"\$metrics\""
check "the provider is alive" "grep -q '^perfschema_status_value{name=\"provider_alive\",server=\"[^\"]*\"} 1$' <<<\"\$metrics\""
check "the heap of sysbench is exported" "grep -q '^perfschema_memory_high_bytes{event_name=\"memory/sysbench/malloc\"' <<<\"\$metrics\""
check "the agent's own memory is exported" "grep -q '^perfschema_memory_bytes{event_name=\"memory/performance_schema/' <<<\"\$metrics\""
check "the lost counters are exported" "grep -q '^perfschema_status_value{name=\"[a-z_]*_lost\",' <<<\"\$metrics\""
# The wait latency histograms: 23 finite buckets from 1 ns to 100 s and +Inf per
# instrument, cumulative; sysbench's uncontended mutexes show below 10 us.
hist=$(echo "$metrics" | grep '^perfschema_wait_latency_seconds_bucket{event_name="wait/synch/mutex/sysbench/' || true)
hist_class=$(echo "$hist" | sed -n 's/.*event_name="\([^"]*\)".*/\1/p' | sed -n 1p)
check "a latency histogram per wait instrument ($hist_class)" "[ -n \"$hist_class\" ]"
one=$(echo "$metrics" | grep -F "perfschema_wait_latency_seconds_bucket{event_name=\"$hist_class\"," |
  sed 's/.*le="\([^"]*\)".* \([0-9.e+]*\)$/\1 \2/')
check "its buckets go from 1 ns to 100 s and +Inf (24)" \
  "[ \$(echo \"\$one\" | wc -l) -eq 24 ] && grep -q '^1e-09 ' <<<\"\$one\" && grep -q '^100[. ]' <<<\"\$one\" && grep -q '^+Inf ' <<<\"\$one\""
check "its counts are cumulative" \
  "echo \"\$one\" | sed 's/^+Inf/1e300/' | sort -g | awk '{ if (NR > 1 && \$2 < last) exit 1; last = \$2 }'"
check "uncontended acquisitions show below 10 us" \
  "echo \"\$one\" | awk '\$1 == \"1e-05\" { exit !(\$2 > 0) }'"
series=$(echo "$metrics" | grep -c '^perfschema_')
classes=$(q "SELECT count(*) FROM ps.setup_instruments")
# waits: 3 series per instrument, memory: 5 per memory instrument, files: 6 per file
memory_classes=$(q "SELECT count(*) FROM ps.setup_instruments WHERE name LIKE 'memory/%'")
# + 26 per wait histogram (24 buckets, sum, count), 8 per digest of the top 20,
# 26 for the statement histogram, 2 per error, 1 per metric of the program
errors=$(q "SELECT count(*) FROM ps.events_errors_summary_global_by_error")
program_metrics=$(q "SELECT count(*) FROM ps.setup_metrics")
check "the series are bounded ($series series, $classes instruments)" \
  "[ $series -le $((29 * classes + 2 * memory_classes + 6 * 20 + 8 * 20 + 26 + 2 * errors + program_metrics + 60)) ]"
grep -q '^pg_exporter_last_scrape_error 0' <<<"$metrics" || fail "the exporter reports a scrape error: $(grep -i error "$WORK/exporter.log" | tail -3)"

# --- the program's own metrics: tools/pfs_live's meter "live"
kill "$sysbench_pid" 2>/dev/null || true
wait "$sysbench_pid" 2>/dev/null || true
sysbench_pid=
q "DROP SCHEMA ps CASCADE" >/dev/null
q "DROP SERVER live" >/dev/null
REGION="$WORK/meters.pfs"
live_start_provider --slow=0
live_import
sleep 0.5
metrics=$(scrape_exporter tools/prometheus/queries.yaml "$WORK/exporter_meters.log") ||
  fail "no /metrics: $(grep -v "^\s" "$WORK/exporter_meters.log" | head -20)"
echo "$metrics" | grep '^perfschema_metric_' || true
check "a counter of the program is a Prometheus counter with its meter, name and unit" \
  "grep -q '^# TYPE perfschema_metric_counters_value counter' <<<\"\$metrics\" &&
   grep -Eq '^perfschema_metric_counters_value\{meter=\"live\",name=\"hot_bursts\",server=\"[^\"]*\",unit=\"\{burst\}\"\} [1-9]' <<<\"\$metrics\""
check "a gauge of the program is a Prometheus gauge with its value" \
  "grep -q '^# TYPE perfschema_metric_gauges_value gauge' <<<\"\$metrics\" &&
   grep -Eq '^perfschema_metric_gauges_value\{meter=\"live\",name=\"hot_threads\",server=\"[^\"]*\",unit=\"\{thread\}\"\} 2$' <<<\"\$metrics\""
q "UPDATE ps.setup_meters SET enabled = 'NO' WHERE name = 'live'" >/dev/null
metrics=$(scrape_exporter tools/prometheus/queries.yaml "$WORK/exporter_meters.log") || fail "no /metrics"
check "a disabled meter's metrics are not exported" "! grep -q '^perfschema_metric_' <<<\"\$metrics\""
live_stop_provider
echo "=== prometheus_test: all checks passed"
