"""A loopback HTTP server that serves a saved site by URL path, with injectable faults."""
from __future__ import annotations

import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class FaultySite:
    """Serve ``site_dir`` on 127.0.0.1. ``faults[path]`` is a list of per-request behaviours
    consumed in order (the last one repeats): "ok", "429", "500", "hang", "truncate",
    "no_html_end", "pdf", "404", "huge" (the page padded by ``huge_bytes``, with its Content-Length)
    and "huge_stream" (the same with no Content-Length: read until the server hangs up)."""

    def __init__(self, site_dir: Path, faults: dict[str, list[str]] | None = None, hang_s: float = 3.0,
                 huge_bytes: int = 2 ** 20):
        self.site_dir = site_dir
        self.faults = faults or {}
        self.hang_s = hang_s
        self.huge_bytes = huge_bytes
        self.hits: dict[str, int] = defaultdict(int)
        self.user_agents: set[str] = set()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                path = self.path.split("?")[0]
                n = site.hits[path]
                site.hits[path] += 1
                site.user_agents.add(self.headers.get("User-Agent", ""))
                plan = site.faults.get(path, ["ok"])
                action = plan[min(n, len(plan) - 1)]
                target = site.site_dir / path.lstrip("/")
                if action == "404" or not target.is_file():
                    return self._send(404, b"<html>not found</html>", "text/html")
                body = target.read_bytes()
                if action == "429":
                    return self._send(429, b"slow down", "text/plain", {"Retry-After": "1"})
                if action == "500":
                    return self._send(500, b"oops", "text/plain")
                if action == "hang":
                    time.sleep(site.hang_s)
                    return self._send(200, body, "text/html; charset=utf-8")
                if action == "truncate":  # promise the whole page, send half, hang up
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if action == "no_html_end":
                    return self._send(200, body[: len(body) // 2], "text/html; charset=utf-8")
                if action in ("huge", "huge_stream"):  # a real page, padded inside its body
                    big = body.replace(b"</body>", b"<p>" + b"x" * site.huge_bytes + b"</p></body>", 1)
                    if action == "huge":
                        return self._send(200, big, "text/html; charset=utf-8")
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.end_headers()
                    try:
                        self.wfile.write(big)
                    except OSError:  # the client stopped reading
                        pass
                    self.close_connection = True
                    return
                if action == "pdf":
                    return self._send(200, b"%PDF-1.4 ...", "application/pdf")
                return self._send(200, body, "text/html; charset=utf-8")

            def _send(self, code, body, ctype, headers=None):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "FaultySite":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
