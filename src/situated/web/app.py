"""The web console's HTTP and websocket API (FastAPI), in front of one `WebConsole`.

    GET  /                  the page (static/console.html: one file, inline CSS and JS, nothing from elsewhere)
    GET  /api/state         mode, plan awaiting confirmation, lesson, API, world, image version, conversation
    GET  /api/image.png     the camera image (PNG)
    GET  /api/library       what has been taught, with versions
    POST /api/action        one action (`messages.Action`, JSON) → {"reply", "state"}
    POST /api/listen        a WAV recording (audio/wav) → {"text", "seconds", "engine"} (with --speech)
    WS   /ws                the same actions as JSON text messages; every open page gets each new state

Security: `Guard` refuses requests without the token when one is set (`Authorization: Bearer T`, or `?token=T`
for the page, the image and the websocket, which cannot send headers) with 401; on a loopback server without a
token it refuses every Host name but the address it listens on (DNS rebinding), and a websocket whose Origin is
another site (403). POST bodies must say their type (application/json, audio/wav), which a cross-site form
cannot send without the browser asking first. Bodies are size-limited; every error is `{"error": "one line"}`
with a 4xx status (5xx for a failing model or a bug, still one line, the traceback only in the server's log).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from concurrent.futures import Future
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketState

from ..errors import BackendError, SituatedError
from .console import WebConsole
from .messages import MAX_JSON_BODY, MAX_WAV_BODY, BadRequest, read_action

log = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WAV_TYPES = ("audio/wav", "audio/x-wav", "audio/wave")
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                               "img-src 'self'; connect-src 'self'; media-src 'self'; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def page_html() -> str:
    """The console page (package data)."""
    return resources.files("situated.web").joinpath("static/console.html").read_text(encoding="utf-8")


def create_app(console: WebConsole, *, token: str | None = None, loopback: bool = True,
               hosts: frozenset[str] = LOOPBACK_NAMES) -> FastAPI:
    """The FastAPI app serving `console`; `token` is required on every request when given; `loopback` says the
    server listens on a loopback address only, and then without a token only the Host names in `hosts` (the
    address it listens on, `server.host_names`) are answered."""
    app = FastAPI(title="situated sandbox", docs_url=None, redoc_url=None, openapi_url=None)
    page = page_html()
    sockets: set[WebSocket] = set()

    async def broadcast(state: dict[str, Any], source: WebSocket | None) -> None:
        for socket in list(sockets):
            if socket is not source and socket.application_state == WebSocketState.CONNECTED:
                try:
                    await socket.send_json({"type": "state", "state": state})
                except (RuntimeError, WebSocketDisconnect, OSError):
                    sockets.discard(socket)

    @app.get("/", response_class=HTMLResponse)
    async def index() -> HTMLResponse:
        return HTMLResponse(page, headers=PAGE_HEADERS)

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/api/state")
    async def state() -> dict[str, Any]:
        return await wait(console.state(history=True))

    @app.get("/api/image.png")
    async def image() -> Response:
        png, version = console.image()
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-store", "ETag": f'"{version}"'})

    @app.get("/api/library")
    async def library() -> dict[str, Any]:
        return await wait(console.library())

    @app.post("/api/action")
    async def action(request: Request) -> dict[str, Any]:
        body = await read_body(request, MAX_JSON_BODY, ("application/json",))
        result = await wait(console.act(read_action(body)))
        await broadcast(result["state"], None)
        return result

    @app.post("/api/listen")
    async def listen(request: Request) -> dict[str, Any]:
        body = await read_body(request, MAX_WAV_BODY, WAV_TYPES)
        return await wait(console.listen(body))

    @app.websocket("/ws")
    async def websocket(socket: WebSocket) -> None:
        sockets.add(socket)  # before the page hears it is connected, so it misses no state sent after that
        try:
            await socket.accept()
            while True:
                message = await socket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                try:
                    text = message.get("text")
                    if text is None:
                        raise BadRequest("send each action as one JSON text message")
                    result = await wait(console.act(read_action(text)))
                except Exception as err:  # one line back to this page; the socket stays open
                    status, problem = error_of(err)
                    await socket.send_json({"type": "error", "status": status, "error": problem})
                    continue
                await socket.send_json({"type": "result", **result})
                await broadcast(result["state"], socket)
        except WebSocketDisconnect:
            return
        finally:
            sockets.discard(socket)

    async def refused(request: Request, err: Exception) -> JSONResponse:
        status, problem = error_of(err)
        return JSONResponse({"error": problem}, status_code=status)

    for kind in (BadRequest, SituatedError, RequestValidationError, StarletteHTTPException, Exception):
        app.add_exception_handler(kind, refused)
    app.add_middleware(Guard, token=token, loopback=loopback, hosts=hosts)
    return app


async def wait(future: Future[Any]) -> Any:
    """Await work submitted to the session's thread."""
    return await asyncio.wrap_future(future)


async def read_body(request: Request, limit: int, types: tuple[str, ...]) -> bytes:
    """The request body, if its Content-Type is one of `types` and it has at most `limit` bytes (415, 413)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in types:
        raise BadRequest(f"Content-Type must be {types[0]}, not {kind or 'missing'}", 415)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadRequest(f"body too large: {declared} bytes (at most {limit})", 413)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BadRequest(f"body too large: more than {limit} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


def error_of(err: BaseException) -> tuple[int, str]:
    """HTTP status and one line for any error; a bug's traceback goes to the log only."""
    if isinstance(err, BadRequest):
        return err.status, one_line(str(err))
    if isinstance(err, BackendError):
        return 502, one_line(f"the model failed: {err}")
    if isinstance(err, SituatedError):
        return 400, one_line(str(err))
    if isinstance(err, RequestValidationError):
        first = err.errors()[0] if err.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return 422, one_line(f"{where}: {first.get('msg', 'bad request')}")
    if isinstance(err, StarletteHTTPException):
        return err.status_code, one_line(str(err.detail))
    log.error("web console: unexpected error", exc_info=err)
    return 500, f"internal error ({type(err).__name__}); see the server's log"


def one_line(text: str) -> str:
    return " ".join(text.split())[:500]


class Guard:
    """ASGI middleware: the token (when set), the Host of a loopback server, the Origin of a websocket."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback: bool,
                 hosts: frozenset[str] = LOOPBACK_NAMES) -> None:
        self.app = app
        self.token = token
        self.loopback = loopback
        self.hosts = frozenset(h.lower() for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        status, problem = self.check(scope)
        if not problem:
            await self.app(scope, receive, send)
            return
        response = JSONResponse({"error": problem}, status_code=status)
        if scope["type"] == "http":
            await response(scope, receive, send)
            return
        socket = WebSocket(scope, receive, send)
        if "websocket.http.response" in scope.get("extensions", {}):
            await socket.send_denial_response(response)
        else:
            await socket.close(code=1008, reason=problem[:100])

    def check(self, scope: Scope) -> tuple[int, str]:
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.loopback and not self.token and hostname(host).lower() not in self.hosts:
            return 403, f"host {host!r} is not this loopback server"
        if self.token is not None and scope.get("path") != "/favicon.ico":  # browsers ask for it without the token
            given = bearer(headers.get("authorization", ""))
            if given is None:
                given = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token") or [""])[0]
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return 401, "missing or wrong token: open the page with ?token=... as the server printed it"
        origin = headers.get("origin")
        if scope["type"] == "websocket" and origin and urlsplit(origin).netloc.lower() != host.lower():
            return 403, f"websocket from another site ({origin}) refused"
        return 0, ""


def hostname(host: str) -> str:
    """`127.0.0.1:8000` → `127.0.0.1`; `[::1]:8000` → `::1`."""
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def bearer(value: str) -> str | None:
    scheme, _, credentials = value.partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" and credentials.strip() else None
