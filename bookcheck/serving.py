"""The one loopback server of the book's tooling and checks: ``serve`` a built site on
127.0.0.1 as a static host does (bookcheck.site_check, the site checks; bookbuild.pdf, make pdf).

The server is a process of its own (``python -m bookcheck.serving DIRECTORY [PREFIX]``, which
prints its base URL and serves until it is ended), so the process that checks the site runs no
server thread."""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import io
import os
import subprocess
import sys
from pathlib import Path

COMPRESSIBLE = {".html", ".js", ".mjs", ".css", ".json", ".svg", ".xml", ".txt", ".map", ".ipynb"}


@contextlib.contextmanager
def serve(directory: Path, prefix: str = "/"):
    """Serve ``directory`` under ``prefix`` on 127.0.0.1 (a free port) as a host such as GitHub
    Pages does: gzip when the browser asks, the site's 404.html for a missing file; yield the
    base URL. The server runs in a process of its own, ended when the block ends."""
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, "-m", "bookcheck.serving", str(directory), prefix],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        base = proc.stdout.readline().strip()
        if not base.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the server of {directory} did not start (exit {proc.wait()})")
        yield base
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def unused_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now, for a server that binds it later (make
    serve binds its port a minute or more after it is chosen: it first sets up its venv and builds
    the book). The port lies below the kernel's ephemeral range where there is room, since every
    socket bound to port 0 in the meantime (torch.distributed's stores and Gloo in the pages step)
    is given a port from that range, never one outside it."""
    import random
    import socket

    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):  # not Linux: any port the kernel hands out
        low = 0
    candidates = random.sample(range(max(1024, low - 8192), low), min(64, max(0, low - 1024)))
    for port in [*candidates, 0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError("no free port on 127.0.0.1")


def _server(directory: Path, prefix: str = "/"):
    """The HTTP server ``serve`` runs (not started)."""

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
    return http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)


if __name__ == "__main__":
    directory, prefix = Path(sys.argv[1]), (sys.argv[2] if len(sys.argv) > 2 else "/")
    server = _server(directory, prefix)
    print(f"http://127.0.0.1:{server.server_address[1]}{prefix}", flush=True)
    server.serve_forever()
