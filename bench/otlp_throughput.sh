#!/usr/bin/env bash
# pfs_otlp's throughput (issue 39): spans exported per second in OTLP/JSON from a
# region of tools/pfs_demo whose history_long tables were made large (STAGES stages,
# STATEMENTS statements and transactions, WAITS waits; --min-wait 0: every wait is a
# span), --once, in two settings:
#   file      --output /dev/null: read, build and encode only
#   receiver  POSTed to a receiver on 127.0.0.1 (python3's http.server, reading and
#             discarding each request, tests/otlp/otlp_receiver.py's kind)
# Each figure is spans over the whole process's wall time (start-up and the region
# scan included), the median of ROUNDS runs; the ratio is to the issue's target of
# 100,000 spans/s. Prints the CPU and the clock source. Given a second build
# directory (another commit's), runs both on the same region, alternating, and prints
# the ratio of the first to the second.
# Usage: bash bench/otlp_throughput.sh [build-dir [other-build-dir]]   (ROUNDS=5; about 30 s)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
other=${2:-}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
case "$other" in /* | "") ;; *) other="$PWD/$other" ;; esac
rounds=${ROUNDS:-5}
[ -x "$build/tools/pfs_otlp" ] && [ -x "$build/tools/pfs_demo" ] ||
  cmake --build "$build" -j2 --target pfs_otlp pfs_demo
[ -z "$other" ] || [ -x "$other/tools/pfs_otlp" ] || cmake --build "$other" -j2 --target pfs_otlp
work=$(mktemp -d /tmp/pfs_otlp_bench.XXXXXX)
receiver_pid=
trap '[ -n "$receiver_pid" ] && kill "$receiver_pid" 2>/dev/null; rm -rf "$work"' EXIT

env PFS_REGION="$work/demo.pfs" PFS_REGION_GROUP= PFS_STAGES_HISTORY_LONG_SIZE=${STAGES:-100000} \
  PFS_STATEMENTS_HISTORY_LONG_SIZE=${STATEMENTS:-20000} PFS_TRANSACTIONS_HISTORY_LONG_SIZE=${STATEMENTS:-20000} \
  PFS_WAITS_HISTORY_LONG_SIZE=${WAITS:-100000} "$build/tools/pfs_demo" --seconds=3 >/dev/null

# A receiver that answers 200 to every POST after reading it.
cat >"$work/sink.py" <<'PY'
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"{}")
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$work/sink.py" >"$work/port" &
receiver_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
run() {  # setting [build]: prints spans/s of one run
  local exporter=${2:-$build}/tools/pfs_otlp
  local args=(--region "$work/demo.pfs" --once --protocol http/json --signals traces --min-wait 0)
  case $1 in
    file) args+=(--output /dev/null) ;;
    receiver) args+=(--endpoint "http://127.0.0.1:$port") ;;
  esac
  local start end spans
  start=$(date +%s%N)
  spans=$("$exporter" "${args[@]}" 2>&1 | sed -n 's/^pfs_otlp: \([0-9]*\) spans.*/\1/p')
  end=$(date +%s%N)
  echo "$spans $(( (end - start) / 1000 ))" >>"$work/spans.$1${2:+.other}"
  awk -v s="$spans" -v us="$(( (end - start) / 1000 ))" 'BEGIN { printf "%.0f\n", s / (us / 1e6) }'
}
declare -A rates
for _ in $(seq "$rounds"); do
  for setting in file receiver; do
    rates[$setting]+="$(run $setting) "
    [ -z "$other" ] || rates[$setting.other]+="$(run $setting "$other") "
  done
done
echo "pfs_otlp --once, OTLP/JSON, $(cut -d' ' -f1 "$work/spans.file" | head -1) spans a run, median of $rounds runs"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs;" \
  "clock source $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
for setting in file receiver; do
  rate=$(tr ' ' '\n' <<<"${rates[$setting]}" | grep . | median)
  printf '%-9s %10.0f spans/s  (%.2f x the 100,000 spans/s target)\n' "$setting" "$rate" \
    "$(awk -v r="$rate" 'BEGIN { print r / 100000 }')"
  if [ -n "$other" ]; then
    was=$(tr ' ' '\n' <<<"${rates[$setting.other]}" | grep . | median)
    printf '%-9s %10.0f spans/s  with %s; ratio %.2f\n' "" "$was" "$other" \
      "$(awk -v r="$rate" -v w="$was" 'BEGIN { print r / w }')"
  fi
done
