"""Both encodings of an OTLP request brought to one shape for comparison: protoc's
decoded text format (otlp_receiver.protoc_decode) and the JSON (json.loads)."""

KINDS = {"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2}
STATUS = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def _one(d, name, default=None):
    v = d.get(name)
    return v[0] if v else default


def _text(b):
    return b.decode("utf-8") if isinstance(b, bytes) else b


def _pb_value(v):
    if "string_value" in v:
        return _text(v["string_value"][0])
    if "int_value" in v:
        return int(v["int_value"][0])
    if "double_value" in v:
        return float(v["double_value"][0])
    raise ValueError("unexpected AnyValue %r" % v)


def _pb_attrs(msg, field="attributes"):
    return {_text(_one(kv, "key")): _pb_value(_one(kv, "value")) for kv in msg.get(field, [])}


def _json_value(v):
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        assert isinstance(v["intValue"], str), "OTLP JSON: 64-bit integers are strings"
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    raise ValueError("unexpected AnyValue %r" % v)


def _json_attrs(msg):
    return {kv["key"]: _json_value(kv["value"]) for kv in msg.get("attributes", [])}


def pb_spans(req):
    out = []
    for rs in req.get("resource_spans", []):
        res = _pb_attrs(_one(rs, "resource", {}))
        for ss in rs.get("scope_spans", []):
            for s in ss.get("spans", []):
                status = _one(s, "status", {})
                out.append({
                    "resource": res,
                    "traceId": _one(s, "trace_id").hex(),
                    "spanId": _one(s, "span_id").hex(),
                    "parentSpanId": _one(s, "parent_span_id", b"").hex(),
                    "name": _text(_one(s, "name")),
                    "kind": KINDS[_one(s, "kind", "SPAN_KIND_UNSPECIFIED")],
                    "start": int(_one(s, "start_time_unix_nano", "0")),
                    "end": int(_one(s, "end_time_unix_nano", "0")),
                    "attributes": _pb_attrs(s),
                    "status": STATUS[_one(status, "code", "STATUS_CODE_UNSET")],
                })
    return out


def json_spans(req):
    out = []
    for rs in req.get("resourceSpans", []):
        res = _json_attrs(rs.get("resource", {}))
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                assert isinstance(s["startTimeUnixNano"], str)
                for k in ("traceId", "spanId", "parentSpanId"):
                    assert s.get(k, "") == s.get(k, "").lower(), "ids are lower-case hex"
                out.append({
                    "resource": res,
                    "traceId": s["traceId"],
                    "spanId": s["spanId"],
                    "parentSpanId": s.get("parentSpanId", ""),
                    "name": s["name"],
                    "kind": s["kind"],
                    "start": int(s["startTimeUnixNano"]),
                    "end": int(s["endTimeUnixNano"]),
                    "attributes": _json_attrs(s),
                    "status": s.get("status", {}).get("code", 0),
                })
    return out


def _pb_number(p):
    if "as_int" in p:
        return int(p["as_int"][0])
    return float(_one(p, "as_double", "0"))


def pb_metrics(req):
    out = {}
    for rm in req.get("resource_metrics", []):
        for sm in rm.get("scope_metrics", []):
            for m in sm.get("metrics", []):
                name = _text(_one(m, "name"))
                entry = {"unit": _text(_one(m, "unit", b"")), "points": []}
                for kind in ("gauge", "sum", "histogram"):
                    if kind in m:
                        entry["type"] = kind
                        body = _one(m, kind)
                        if kind == "sum":
                            entry["monotonic"] = _one(body, "is_monotonic", "false") == "true"
                            entry["temporality"] = _one(body, "aggregation_temporality")
                        for p in body.get("data_points", []):
                            point = {"attributes": _pb_attrs(p), "start": int(_one(p, "start_time_unix_nano", "0"))}
                            if kind == "histogram":
                                point.update(count=int(_one(p, "count", "0")), sum=float(_one(p, "sum", "0")),
                                             bounds=[float(b) for b in p.get("explicit_bounds", [])],
                                             counts=[int(c) for c in p.get("bucket_counts", [])])
                            else:
                                point["value"] = _pb_number(p)
                            entry["points"].append(point)
                out[name] = entry
    return out


def json_metrics(req):
    out = {}
    for rm in req.get("resourceMetrics", []):
        for sm in rm.get("scopeMetrics", []):
            for m in sm.get("metrics", []):
                entry = {"unit": m.get("unit", ""), "points": []}
                for kind in ("gauge", "sum", "histogram"):
                    if kind in m:
                        entry["type"] = kind
                        body = m[kind]
                        if kind == "sum":
                            entry["monotonic"] = body.get("isMonotonic", False)
                            entry["temporality"] = "AGGREGATION_TEMPORALITY_CUMULATIVE" \
                                if body.get("aggregationTemporality") == 2 else body.get("aggregationTemporality")
                        for p in body.get("dataPoints", []):
                            point = {"attributes": _json_attrs(p), "start": int(p.get("startTimeUnixNano", "0"))}
                            if kind == "histogram":
                                assert all(isinstance(c, str) for c in p["bucketCounts"])
                                point.update(count=int(p["count"]), sum=float(p.get("sum", 0)),
                                             bounds=[float(b) for b in p.get("explicitBounds", [])],
                                             counts=[int(c) for c in p["bucketCounts"]])
                            else:
                                point["value"] = int(p["asInt"]) if "asInt" in p else float(p.get("asDouble", 0))
                            entry["points"].append(point)
                out[m["name"]] = entry
    return out
