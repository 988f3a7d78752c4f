#!/usr/bin/env bash
# Opens a timeline JSON in Debian's headless chromium through tests/live/timeline.html
# (JSON.parse in the browser, every event checked) and prints the page's verdict.
# Usage: bash tests/live/timeline_browser.sh FILE.json   (exit 1 unless "OK n")
set -euo pipefail
json=$1
page=$(mktemp -d /tmp/pfs_timeline_page.XXXXXX)
trap 'rm -rf "$page"' EXIT
cp "$(dirname "$0")/timeline.html" "$page/index.html"
python3 -c 'import json, sys; print("window.TRACE_TEXT = " + json.dumps(open(sys.argv[1]).read()) + ";")' \
  "$json" >"$page/trace.js"
dom=$(timeout 60 chromium --headless --disable-gpu --no-sandbox --user-data-dir="$page/profile" \
  --dump-dom "file://$page/index.html" 2>"$page/chromium.err" || true)
verdict=$(sed -n 's|.*<div id="result">\([^<]*\)</div>.*|\1|p' <<<"$dom")
echo "${verdict:-no verdict: $(tail -3 "$page/chromium.err")}"
[[ $verdict == OK\ * ]]
