"""An OTLP/HTTP receiver for the tests: accepts POST /v1/traces and /v1/metrics in
both encodings (application/x-protobuf, application/json; gzip when the request says
so), keeps every request, and can answer the first N requests with an error status
(503 with Retry-After: 0, to test retries). Decodes with independent decoders:
Debian's protoc (--decode, with tests/otlp/proto/otlp.proto written from the OTLP
specification) for protobuf, python3's json for JSON."""
import codecs
import gzip
import json
import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "proto")
MESSAGES = {"/v1/traces": "otlp_test.ExportTraceServiceRequest",
            "/v1/metrics": "otlp_test.ExportMetricsServiceRequest"}


class Receiver:
    def __init__(self):
        self.requests = []  # (path, content_type, encoding, body bytes, status answered)
        self.fail_first = 0
        self.fail_status = 503
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with receiver.lock:
                    failing = receiver.fail_first > 0
                    if failing:
                        receiver.fail_first -= 1
                    status = receiver.fail_status if failing else (200 if self.path in MESSAGES else 404)
                    receiver.requests.append((self.path, self.headers.get("Content-Type"),
                                              self.headers.get("Content-Encoding"), body, status))
                self.send_response(status)
                if failing:
                    self.send_header("Retry-After", "0")
                ctype = self.headers.get("Content-Type", "application/x-protobuf")
                answer = b"{}" if ctype == "application/json" else b""
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def endpoint(self):
        return "http://127.0.0.1:%d" % self.port

    def take(self):
        with self.lock:
            r, self.requests = self.requests, []
        return r

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def protoc_decode(path, body):
    """The request as protoc's text format, parsed into dicts of lists."""
    out = subprocess.run(["protoc", "--proto_path=" + PROTO_DIR, "--decode=" + MESSAGES[path], "otlp.proto"],
                         input=body, capture_output=True, check=True).stdout.decode("latin-1")
    return parse_text_format(out)


_FIELD = re.compile(r'^\s*([A-Za-z_0-9]+)(?::\s*(.*)|\s*\{)$')


def parse_text_format(text):
    root = {}
    stack = [root]
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.strip() == "}":
            stack.pop()
            continue
        m = _FIELD.match(line)
        if not m:
            raise ValueError("cannot parse protoc output line: %r" % line)
        name, value = m.group(1), m.group(2)
        if value is None:
            child = {}
            stack[-1].setdefault(name, []).append(child)
            stack.append(child)
        else:
            if value.startswith('"'):
                value = codecs.escape_decode(value[1:-1].encode("latin-1"))[0]
            stack[-1].setdefault(name, []).append(value)
    return root


def json_decode(body):
    return json.loads(body.decode("utf-8"))
