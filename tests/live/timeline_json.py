#!/usr/bin/env python3
"""Checks a timeline (Chrome trace-event JSON from pfs_trace_merge --format=chrome or
scripts/timeline.sql) against the waits it must hold.

Usage: timeline_json.py TIMELINE.json EXPECTED.csv [--only-expected-threads]
       timeline_json.py TIMELINE.json --nesting [--schema NAME]

EXPECTED.csv: thread_id,event_id,timer_start,timer_wait (picoseconds), one row per
finished wait. The JSON must parse; its "wait" complete events (of the expected
threads only, with --only-expected-threads) must be exactly those waits, one each,
on track tid = thread_id, with ts and dur equal to TIMER_START and TIMER_WAIT in
microseconds, exactly. With --nesting (a timeline of scripts/timeline.sql): it must
hold statements, stages and waits, and every event whose parent (args.nesting_event_id,
same thread) is in it must lie within the parent's time, exactly (so the program's
waits must use the timer of its stages and statements: PFS_WAIT_TIMER=NANOSECOND;
the timers' baselines agree only to about a microsecond). With --schema NAME too:
every statement's args.current_schema must be NAME, the program's CURRENT_SCHEMA
(not PostgreSQL's current_schema). Prints "ok: ..." lines; exits 1 at the first
failure."""
import csv
import decimal
import json
import sys


def fail(message):
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def ok(message):
    print(f"ok: {message}")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            trace = json.load(f, parse_float=decimal.Decimal)
    except ValueError as e:
        fail(f"{path} does not parse as JSON: {e}")
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        fail(f"{path} has no traceEvents array")
    ok(f"{path} parses: {len(events)} trace events")
    return events


def check_nesting(events):
    million = decimal.Decimal(1000000)
    spans, kinds = {}, {}
    for e in events:
        if e.get("ph") == "X":
            spans[(e["tid"], e["args"]["event_id"])] = (e["ts"], e["ts"] + e["dur"])
            kinds[e.get("cat")] = kinds.get(e.get("cat"), 0) + 1
    for kind in ("statement", "stage", "wait"):
        if kinds.get(kind, 0) == 0:
            fail(f"no {kind} in the timeline ({kinds})")
    ok(f"the timeline holds {kinds}")
    slack = decimal.Decimal(0)
    nested, worst = 0, decimal.Decimal(0)
    for e in events:
        parent = e.get("args", {}).get("nesting_event_id") if e.get("ph") == "X" else None
        if parent is None or (e["tid"], parent) not in spans:
            continue
        start, end = spans[(e["tid"], parent)]
        child_start, child_end = spans[(e["tid"], e["args"]["event_id"])]
        out = max(start - child_start, child_end - end, decimal.Decimal(0))
        worst = max(worst, out)
        if out > slack:
            fail(f"{e['cat']} {e['name']} ({e['tid']}, {e['args']['event_id']}) lies {out} us outside its parent {parent}")
        nested += 1
    if nested == 0:
        fail("no event has its parent in the timeline")
    ok(f"{nested} events lie within their parent's time (largest overhang {worst * million:.0f} ps)")


def check_schema(events, schema):
    statements = [e for e in events if e.get("ph") == "X" and e.get("cat") == "statement"]
    if not statements:
        fail("no statement in the timeline")
    other = {e["args"].get("current_schema") for e in statements} - {schema}
    if other:
        fail(f"statements with current_schema {sorted(map(str, other))}, not the program's {schema!r}")
    ok(f"the {len(statements)} statements keep the program's current_schema {schema!r}")


def main():
    path = sys.argv[1]
    events = load(path)
    if sys.argv[2] == "--nesting":
        check_nesting(events)
        if "--schema" in sys.argv[3:]:
            check_schema(events, sys.argv[sys.argv.index("--schema") + 1])
        return
    expected_path = sys.argv[2]
    only_expected = "--only-expected-threads" in sys.argv[3:]
    expected = {}
    with open(expected_path, newline="") as f:
        for thread_id, event_id, start, wait in csv.reader(f):
            expected[(int(thread_id), int(event_id))] = (int(start), int(wait))
    threads = {t for t, _ in expected}

    million = decimal.Decimal(1000000)
    seen = {}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "wait":
            continue
        if only_expected and e.get("tid") not in threads:
            continue
        key = (e["tid"], e["args"]["event_id"])
        if key in seen:
            fail(f"wait {key} appears twice")
        seen[key] = (decimal.Decimal(e["ts"]) * million, decimal.Decimal(e["dur"]) * million)
        if e.get("pid") is None or not isinstance(e.get("name"), str) or "source" not in e["args"]:
            fail(f"wait {key} lacks pid, name or source: {e}")
    if len(seen) != len(expected):
        fail(f"{len(seen)} wait events, {len(expected)} finished waits expected")
    ok(f"one complete event per finished wait ({len(seen)})")
    for key, (start, wait) in expected.items():
        if key not in seen:
            fail(f"wait (thread_id, event_id) = {key} is missing")
        ts, dur = seen[key]
        if ts != start or dur != wait:
            fail(f"wait {key}: ts {ts / million} dur {dur / million} us, TIMER_START {start} TIMER_WAIT {wait} ps")
    ok("ts and dur are TIMER_START and TIMER_WAIT in microseconds, exactly, on track tid = THREAD_ID")


main()
