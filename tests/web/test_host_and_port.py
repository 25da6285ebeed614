"""Issue 28, findings 5 and 6: a port out of range is a one-line usage error (not an OverflowError), and the Host
check of a loopback server answers exactly the address it listens on (127.0.0.2 included)."""

from __future__ import annotations

import socket
from contextlib import ExitStack
from typing import Any

import pytest
from fastapi.testclient import TestClient

from situated.cli import main
from situated.errors import DataError
from situated.web import server


@pytest.mark.parametrize("port", ["99999", "-1", "65536"])
def test_a_port_out_of_range_is_a_one_line_usage_error(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "--web", "--port", port]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: --port {port}: a port is a whole number from 1 to 65535"


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class StubConsole:
    """Stands in for the web console: the Host check runs before any route reaches it."""

    def __init__(self, runner: Any, recognizer: Any = None) -> None:
        self.runner = runner


def served_app(host: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The app `server.serve` builds for `host` (uvicorn's run replaced by keeping the app)."""
    import uvicorn

    from situated.web import console

    kept: list[Any] = []
    monkeypatch.setattr(console, "WebConsole", StubConsole)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: kept.append(self.config.app))

    def open_session(stack: ExitStack) -> object:
        return object()

    server.serve(open_session, host=host, port=free_port(host), announce=lambda line: None)
    return kept[0]


@pytest.mark.parametrize(("host", "answered", "refused"), [
    ("127.0.0.2", ["127.0.0.2"], ["127.0.0.1", "localhost", "::1", "attacker.example"]),
    ("127.0.0.1", ["127.0.0.1", "localhost"], ["127.0.0.2", "::1", "attacker.example"]),
])
def test_the_host_check_answers_the_loopback_address_served(
        host: str, answered: list[str], refused: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    app = served_app(host, monkeypatch)
    client = TestClient(app, raise_server_exceptions=False)
    for name in answered:
        assert client.get("/favicon.ico", headers={"Host": f"{name}:8000"}).status_code == 204, name
    for name in refused:
        shown = f"[{name}]" if ":" in name else name
        response = client.get("/favicon.ico", headers={"Host": f"{shown}:8000"})
        assert response.status_code == 403 and "is not this loopback server" in response.json()["error"], name


def test_listen_socket_checks_the_port_before_binding() -> None:
    with pytest.raises(DataError, match="--port 70000: a port is a whole number from 0 to 65535"):
        server.listen_socket("127.0.0.1", 70000)
