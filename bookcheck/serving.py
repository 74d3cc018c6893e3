"""The one loopback server of the book's tooling and checks: ``serve`` a built site on
127.0.0.1 as a static host does (tests/site_check.py, the site checks; bookcheck.pdf, make pdf)."""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import io
import threading
from pathlib import Path

COMPRESSIBLE = {".html", ".js", ".mjs", ".css", ".json", ".svg", ".xml", ".txt", ".map", ".ipynb"}


@contextlib.contextmanager
def serve(directory: Path, prefix: str = "/"):
    """Serve ``directory`` under ``prefix`` on 127.0.0.1 (a free port) as a host such as GitHub
    Pages does: gzip when the browser asks, the site's 404.html for a missing file; yield the
    base URL. The one loopback server of the site checks."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def translate_path(self, path):
            if not path.startswith(prefix):
                return str(Path(directory) / "__outside_prefix__")
            return super().translate_path("/" + path[len(prefix):])

        def send_error(self, code, message=None, explain=None):
            page = Path(directory) / "404.html"
            if code == 404 and page.is_file():
                body = page.read_bytes()
                self.send_response(404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().send_error(code, message, explain)

        def send_head(self):
            path = Path(self.translate_path(self.path.split("?", 1)[0]))
            if path.is_dir():
                if not self.path.split("?", 1)[0].endswith("/"):
                    return super().send_head()
                path = path / "index.html"
            wants = "gzip" in self.headers.get("Accept-Encoding", "")
            if not (wants and path.is_file() and path.suffix in COMPRESSIBLE):
                return super().send_head()
            body = compressed(path)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)

    cache = {}

    def compressed(path: Path) -> bytes:
        """Each file gzipped once per server."""
        st = path.stat()
        key = (str(path), st.st_mtime_ns, st.st_size)
        if key not in cache:
            cache[key] = gzip.compress(path.read_bytes(), 6)
        return cache[key]

    handler = functools.partial(Handler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    finally:
        server.shutdown()
        server.server_close()
