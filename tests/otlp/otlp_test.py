#!/usr/bin/env python3
"""pfs_otlp end to end: a region of tools/pfs_demo (real threads, statements, stages,
transactions, waits) exported to a receiver in this process (otlp_receiver.py) in
both encodings, decoded independently (protoc --decode for protobuf, json for JSON):

  - both encodings carry the same spans, and two exports give the same ids;
  - the span tree: every stage's parent is its statement's span, every transaction's
    parent the demo's consume statement, statements are roots but the producer's,
    which join the trace of the traceparent the demo gives them (TRACE_ID,
    PARENT_SPAN_ID), children lie inside their parent's time and trace; waits are at
    least --min-wait long;
  - the statement histogram's bounds are MySQL's bucket bounds (recomputed here, in
    seconds), its counts add up to the statement counts of the summary;
  - a receiver answering 503 (Retry-After: 0) twice, then 200: sent on the third try;
    400 is not retried;
  - continuous mode stopped and restarted over a running program sends no span twice.

Usage: otlp_test.py BUILD_DIR"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import otlp_normalize as norm  # noqa: E402
import otlp_receiver  # noqa: E402

BUILD = sys.argv[1]
PFS_OTLP = os.path.join(BUILD, "tools", "pfs_otlp")
PFS_DEMO = os.path.join(BUILD, "tools", "pfs_demo")
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)
    return condition


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k not in ("LD_PRELOAD", "PFS_REGION")}
    env.update(extra)
    return env


def run_otlp(args, env=None):
    p = subprocess.run([PFS_OTLP] + args, env=env or clean_env(), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr


def demo(region, seconds):
    # 5,000 statements: the producer, which stops first, still has some in the ring.
    return subprocess.Popen([PFS_DEMO, "--seconds=%d" % seconds],
                            env=clean_env(PFS_REGION=region, PFS_REGION_GROUP="", PFS_STATEMENTS_HISTORY_LONG_SIZE="5000"),
                            stdout=subprocess.DEVNULL)


def spans_of(requests):
    spans = []
    for path, ctype, _, body, status in requests:
        if path != "/v1/traces" or status != 200:
            continue
        if ctype == "application/json":
            spans += norm.json_spans(otlp_receiver.json_decode(body))
        else:
            check(ctype == "application/x-protobuf", "content type %s" % ctype)
            spans += norm.pb_spans(otlp_receiver.protoc_decode(path, body))
    return spans


def metrics_of(requests):
    out = {}
    for path, ctype, _, body, status in requests:
        if path == "/v1/metrics" and status == 200:
            out.update(norm.json_metrics(otlp_receiver.json_decode(body)) if ctype == "application/json"
                       else norm.pb_metrics(otlp_receiver.protoc_decode(path, body)))
    return out


def mysql_bucket_bounds():
    """MySQL's m_bucket_timer[1..449] (pfs_histogram.cc): 10 us, then * 10^(1/50)."""
    bounds, t = [], 10_000_000.0
    for _ in range(449):
        bounds.append(int(t))
        t *= 1.0471285480508996
    return bounds


def check_tree(spans, min_wait_ns):
    by_id = {s["spanId"]: s for s in spans}
    check(len(by_id) == len(spans), "span ids are unique (%d spans, %d ids)" % (len(spans), len(by_id)))
    kinds = {}
    for s in spans:
        kind = s["name"].split("/")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
        check(s["end"] >= s["start"] > 1_600_000_000 * 10**9, "times are Unix ns: %r" % s)
        check(s["resource"].get("service.name") and s["resource"].get("process.pid"), "resource %r" % s["resource"])
        parent = by_id.get(s["parentSpanId"])
        if kind == "stage":
            check(parent is not None or s["parentSpanId"] != "", "stage %s has a parent" % s["spanId"])
            if parent:
                check(parent["name"].startswith("statement/demo/"), "stage's parent %s is a statement" % parent["name"])
        if kind == "transaction":
            check(s["parentSpanId"] != "", "transaction has a parent")
            if parent:
                check(parent["name"] == "statement/demo/consume", "transaction's parent is %s" % parent["name"])
        if s["name"] == "statement/demo/produce":
            # The producer gives each request the caller's traceparent
            # 00-4bf92f3577b34da6a3ce929d<i as 8 hex>-00f067aa<i as 8 hex>-01 (tools/pfs_demo.cpp):
            # its span is in that trace, under the caller's span.
            i = int(s["attributes"]["db.query.text"].split("(")[1].rstrip(")"))
            check(s["traceId"] == "4bf92f3577b34da6a3ce929d%08x" % i and s["parentSpanId"] == "00f067aa%08x" % i,
                  "the caller's trace context of request %d: %s %s" % (i, s["traceId"], s["parentSpanId"]))
        elif kind == "statement":
            check(s["parentSpanId"] == "", "the demo's other statements are roots")
            # A consumer's last statement finds the queue closed and has no text.
            text = s["attributes"].get("db.query.text")
            check(text.split(" ")[0] in ("INSERT", "SELECT") if text else s["name"] == "statement/demo/consume",
                  "db.query.text %r of %s" % (text, s["name"]))
        if kind == "wait":
            check(s["end"] - s["start"] >= min_wait_ns - 1, "wait of %d ns under --min-wait" % (s["end"] - s["start"]))
        if parent:
            check(parent["traceId"] == s["traceId"], "a child is in its parent's trace")
            check(parent["attributes"]["thread.id"] == s["attributes"]["thread.id"], "a child is on its parent's thread")
            # 1 us of slack: the stage and statement timers are read separately.
            check(parent["start"] <= s["start"] + 1000 and s["end"] <= parent["end"] + 1000,
                  "%s lies inside %s" % (s["name"], parent["name"]))
            check(parent["attributes"]["perfschema.event_id"] < s["attributes"]["perfschema.event_id"],
                  "a parent's EVENT_ID is lower")
    return kinds


def comparable(spans):
    return sorted((s["spanId"], s["traceId"], s["parentSpanId"], s["name"], s["kind"], s["start"], s["end"],
                   sorted(s["attributes"].items()), s["status"]) for s in spans)


def main():
    work = tempfile.mkdtemp(prefix="pfs_otlp_test.")
    region = os.path.join(work, "demo.pfs")
    check(demo(region, 1).wait(timeout=60) == 0, "pfs_demo ran")
    receiver = otlp_receiver.Receiver()
    try:
        min_wait = "20us"
        # 1. protobuf (the default), endpoint from the environment.
        rc, err = run_otlp(["--region", region, "--once", "--min-wait", min_wait],
                           clean_env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint))
        check(rc == 0, "protobuf export: %s" % err)
        pb_requests = receiver.take()
        pb = spans_of(pb_requests)
        pb_metrics = metrics_of(pb_requests)
        kinds = check_tree(pb, 20_000)
        print("protobuf: %d spans %r, %d metrics" % (len(pb), kinds, len(pb_metrics)))
        check(any(s["name"] == "statement/demo/produce" for s in pb), "the producer's traced statements exported")
        for k in ("statement", "stage", "transaction", "wait"):
            check(kinds.get(k, 0) > 0, "spans of kind %s exported" % k)
        # 2. JSON with gzip, by the environment; the service name from OTEL_SERVICE_NAME.
        rc, err = run_otlp(["--region", region, "--once", "--min-wait", min_wait, "--endpoint", receiver.endpoint],
                           clean_env(OTEL_EXPORTER_OTLP_PROTOCOL="http/json", OTEL_EXPORTER_OTLP_COMPRESSION="gzip",
                                     OTEL_SERVICE_NAME="otlp-test", OTEL_EXPORTER_OTLP_HEADERS="x-test=a%20b"))
        check(rc == 0, "json export: %s" % err)
        json_requests = receiver.take()
        check(all(r[2] == "gzip" and r[1] == "application/json" for r in json_requests), "gzip JSON requests")
        js = spans_of(json_requests)
        check(all(s["resource"]["service.name"] == "otlp-test" for s in js), "OTEL_SERVICE_NAME")
        for s in pb + js:
            s.pop("resource")
        check(comparable(pb) == comparable(js), "protobuf and JSON exports carry the same spans and ids")
        js_metrics = metrics_of(json_requests)
        check(set(js_metrics) == set(pb_metrics), "the same metrics in both encodings")

        # 3. Metrics: the statement histogram against MySQL's bounds and the summary counts.
        for name, metrics in (("protobuf", pb_metrics), ("json", js_metrics)):
            h = metrics.get("perfschema.statements.latency")
            if not check(h and h["type"] == "histogram" and len(h["points"]) == 1, "%s statement histogram" % name):
                continue
            p = h["points"][0]
            check(p["bounds"] == [b / 1e12 for b in mysql_bucket_bounds()], "%s histogram bounds are MySQL's" % name)
            check(len(p["counts"]) == 450 and sum(p["counts"]) == p["count"] > 0, "%s bucket counts" % name)
            counts = metrics["perfschema.statements.count"]
            check(counts["type"] == "sum" and counts["monotonic"], "%s statement counts are a monotonic sum" % name)
            check(sum(x["value"] for x in counts["points"]) == p["count"],
                  "%s histogram count %d equals the statements' COUNT_STAR %d" %
                  (name, p["count"], sum(x["value"] for x in counts["points"])))
            check(p["start"] > 0 and all(x["start"] == p["start"] for x in counts["points"]),
                  "%s cumulative points start at the region's creation" % name)
            check("perfschema.lost" in metrics and metrics["perfschema.lost"]["type"] == "gauge", "lost gauges")

        # The program's own metrics (setup_metrics) of the fixture's known values: the
        # enabled meter "shop" only.
        fixture = os.path.join(work, "fixture.pfs")
        check(subprocess.run([os.path.join(BUILD, "tools", "pfs_fixture"), fixture]).returncode == 0, "pfs_fixture ran")
        rc, err = run_otlp(["--region", fixture, "--once", "--signals", "metrics", "--endpoint", receiver.endpoint])
        check(rc == 0, "fixture metrics export: %s" % err)
        fm = metrics_of(receiver.take())
        orders, carts = fm.get("shop.orders"), fm.get("shop.open_carts")
        check(orders and orders["type"] == "sum" and orders["monotonic"] and orders["points"][0]["value"] == 112,
              "the program's counter shop.orders = 112: %r" % orders)
        check(carts and carts["type"] == "sum" and not carts["monotonic"] and carts["points"][0]["value"] == 2,
              "the program's up-down counter shop.open_carts = 2: %r" % carts)
        check(fm.get("shop.revenue", {}).get("points", [{}])[0].get("value") == 12.75, "shop.revenue = 12.75")
        check(not any(k.startswith("pool.") for k in fm), "a disabled meter's metrics are not exported")

        # 4. Retries: 503 twice (Retry-After: 0), then 200.
        receiver.fail_first, receiver.fail_status = 2, 503
        rc, err = run_otlp(["--region", region, "--once", "--signals", "metrics", "--endpoint", receiver.endpoint])
        got = receiver.take()
        check(rc == 0 and [r[4] for r in got] == [503, 503, 200] and got[0][3] == got[2][3],
              "503, 503, then 200 with the same body: %r %s" % ([r[4] for r in got], err))
        check("2 retries" in err, "the retries are reported: %s" % err)
        receiver.fail_first, receiver.fail_status = 1, 400
        rc, err = run_otlp(["--region", region, "--once", "--signals", "metrics", "--endpoint", receiver.endpoint])
        check(rc == 1 and len(receiver.take()) == 1, "400 is not retried: %s" % err)

        # 5. A collector that is away: the queue keeps --max-queue requests, the older
        # ones are dropped and counted.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            away = "http://127.0.0.1:%d" % s.getsockname()[1]  # closed again: refused
        rc, err = run_otlp(["--region", region, "--once", "--signals", "traces", "--min-wait", min_wait,
                            "--max-batch", "100", "--max-queue", "2", "--max-attempts", "1", "--endpoint", away])
        m = re.search(r"(\d+) spans, .* sent 0 requests, 0 retries, (\d+) queued, (\d+) dropped \((\d+) spans", err)
        # The two requests kept hold the last 101 to 200 spans.
        check(rc == 1 and m and int(m.group(2)) == 2 and
              int(m.group(1)) - 200 <= int(m.group(4)) < int(m.group(1)) - 100, "queue overflow counted: %s" % err)

        # 6. A directory of regions: one resource per process, the spans of each
        # region as when it is exported alone; a file that is not a region is skipped.
        fleet = os.path.join(work, "fleet")
        os.mkdir(fleet)
        second = os.path.join(fleet, "b.pfs")
        check(demo(second, 1).wait(timeout=60) == 0, "a second pfs_demo ran")
        shutil.copy(region, os.path.join(fleet, "a.pfs"))
        with open(os.path.join(fleet, "notes.txt"), "w") as f:
            f.write("not a region\n")
        rc, err = run_otlp(["--region", fleet, "--once", "--signals", "traces", "--min-wait", min_wait,
                            "--protocol", "http/json", "--endpoint", receiver.endpoint])
        fleet_spans = spans_of(receiver.take())
        pids = {s["resource"]["process.pid"] for s in fleet_spans}
        rc2, _ = run_otlp(["--region", second, "--once", "--signals", "traces", "--min-wait", min_wait,
                           "--endpoint", receiver.endpoint])
        alone = len(spans_of(receiver.take()))
        check(rc == 0 and rc2 == 0 and "notes.txt" in err and len(pids) == 2 and len(fleet_spans) == len(pb) + alone,
              "directory: %d spans of %d processes (%d + %d alone): %s" % (len(fleet_spans), len(pids), len(pb),
                                                                          alone, err))

        # 7. Continuous mode over a running program, stopped and restarted: no span twice.
        live = os.path.join(work, "live.pfs")
        state = os.path.join(work, "live.state")
        program = demo(live, 5)
        time.sleep(1)
        args = ["--region", live, "--interval", "0.3", "--state", state, "--min-wait", min_wait, "--signals",
                "traces", "--endpoint", receiver.endpoint]
        counts = []
        for run in range(2):
            exporter = subprocess.Popen([PFS_OTLP] + args, env=clean_env(), stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            exporter.send_signal(signal.SIGTERM)
            exporter.communicate(timeout=60)
            counts.append(len(receiver.requests))
        program.wait(timeout=60)
        rc, err = run_otlp(["--region", live, "--once", "--state", state, "--min-wait", min_wait, "--signals",
                            "traces", "--endpoint", receiver.endpoint])
        check(rc == 0, "the last export after the program ended: %s" % err)
        spans = spans_of(receiver.take())
        ids = [s["spanId"] for s in spans]
        check(len(ids) == len(set(ids)), "no span twice across restarts (%d spans, %d distinct)" %
              (len(ids), len(set(ids))))
        check(counts[0] > 0 and counts[1] > counts[0], "both runs sent requests: %r" % counts)
        by_id = {s["spanId"]: s for s in spans}
        split = [s for s in spans if s["parentSpanId"] in by_id and by_id[s["parentSpanId"]]["traceId"] != s["traceId"]]
        check(not split, "exports at different times agree on trace ids (%d children apart)" % len(split))
        print("continuous: %d spans over two runs and a last --once" % len(ids))
    finally:
        receiver.close()
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("%d checks failed" % len(failures))
        return 1
    print("pfs_otlp: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
