"""Serving the web console: one session per server process, on loopback unless a token guards it.

`serve(open_session, host=..., port=..., token=...)` opens the session on its own thread (`SessionRunner`),
prints the page's address and runs uvicorn until interrupted; `ServerThread` runs an app in a background thread
on a free port (tests, benchmarks).
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any
from urllib.parse import quote

from ..errors import DataError
from .messages import MAX_JSON_BODY

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (127.0.0.0/8, ::1) or `localhost`."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, token: str | None) -> None:
    """A server on any address but loopback needs a token (DataError otherwise); a token is at least 16
    characters."""
    if token is not None and len(token) < 16:
        raise DataError("--token: at least 16 characters (e.g. " + secrets.token_urlsafe(16) + ")")
    if not is_loopback(host) and token is None:
        raise DataError(f"--host {host}: a server others can reach needs --token (e.g. --token "
                        f"{secrets.token_urlsafe(16)}); the default host 127.0.0.1 needs none")


def check_port(port: int, *, free: bool = False) -> None:
    """A TCP port: 1 to 65535 (0 too, meaning a free one, when `free`); DataError in one line otherwise."""
    low = 0 if free else 1
    if isinstance(port, bool) or not isinstance(port, int) or not low <= port <= 65535:
        raise DataError(f"--port {port}: a port is a whole number from {low} to 65535")


def host_names(host: str) -> frozenset[str]:
    """The Host names a loopback server on `host` answers to: the address it listens on, and `localhost` for
    the addresses that name resolves to (127.0.0.1, ::1)."""
    bare = host.strip("[]").lower()
    if bare in ("localhost", "127.0.0.1"):
        return frozenset({"localhost", "127.0.0.1"})
    if bare == "::1":
        return frozenset({"localhost", "::1"})
    return frozenset({bare})


def page_url(host: str, port: int, token: str | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={quote(token)}" if token else "")


def listen_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port (port 0: a free one); DataError in one line when it cannot be."""
    check_port(port, free=True)
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
    except OSError as err:
        sock.close()
        raise DataError(f"--host {host} --port {port}: cannot listen there ({err.strerror or err})") from None
    return sock


def uvicorn_config(app: Any, host: str, port: int) -> Any:
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off", ws_max_size=MAX_JSON_BODY,
                          ws_ping_interval=20.0, timeout_graceful_shutdown=3, server_header=False)


def serve(open_session: Callable[[ExitStack], Any], *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          token: str | None = None, recognizer: Any = None, announce: Callable[[str], None] = print) -> None:
    """Open the session, serve the console page for it until Ctrl-C, then close the session."""
    import uvicorn

    from .app import create_app
    from .console import WebConsole
    from .runner import SessionRunner

    check_port(port)
    check_exposure(host, token)
    sock = listen_socket(host, port)
    try:
        with SessionRunner(open_session) as runner:
            console = WebConsole(runner, recognizer)
            app = create_app(console, token=token, loopback=is_loopback(host), hosts=host_names(host))
            server = uvicorn.Server(uvicorn_config(app, host, port))
            announce(f"web console: {page_url(host, port, token)}  (Ctrl-C ends the session)")
            server.run(sockets=[sock])
    finally:
        sock.close()


class ServerThread:
    """Serves `app` on 127.0.0.1 and a free port in a background thread (`with ServerThread(app) as s: s.url`)."""

    def __init__(self, app: Any, host: str = DEFAULT_HOST) -> None:
        import uvicorn

        self.host = host
        self._socket = listen_socket(host, 0)
        self.port = int(self._socket.getsockname()[1])
        self.server = uvicorn.Server(uvicorn_config(app, host, self.port))
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._socket]}, daemon=True,
                                        name="web-console")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def start(self, timeout: float = 20.0) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the web console did not start")
            time.sleep(0.02)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self._thread.join(timeout)
        self._socket.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
