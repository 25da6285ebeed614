"""The web console's HTTP and websocket API without a browser (FastAPI's TestClient): actions move the world and
change the camera image; a token guards a server others can reach (401 without it); a loopback server refuses other
Host names and cross-site websockets; bad and oversized bodies are 4xx with one line, never a traceback. The model
is a ScriptedLLM (exact answers chosen here); the recorded model drives the page in test_console.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from fakes import ROOT, ScriptedLLM
from situated.errors import DataError

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketDenialResponse

from situated.web.app import create_app
from situated.web.messages import MAX_JSON_BODY, MAX_WAV_BODY
from situated.web.server import check_exposure, is_loopback, page_url
from web.conftest import LOOPBACK, web_console

TOKEN = "s3cret-token-for-tests-0123"


def pickup(obj: str) -> dict:
    return {"calls": [f"pickup({obj.upper()})"]}


def one_line_error(response) -> str:
    body = response.json()
    assert set(body) == {"error"}, body
    assert "\n" not in body["error"] and "Traceback" not in body["error"] and body["error"]
    return body["error"]


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory):
    llm = ScriptedLLM([pickup("ball")])
    with web_console(llm, tmp_path_factory.mktemp("lib") / "lib.db") as console:
        yield console


@pytest.fixture
def client(console) -> TestClient:
    return TestClient(create_app(console), base_url=LOOPBACK, raise_server_exceptions=False)


def test_a_plan_is_shown_then_confirmed_and_the_picture_and_world_change(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and 'id="camera"' in page.text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//|<link|@import""", page.text)  # self-contained
    before = client.get("/api/image.png")
    assert before.headers["content-type"] == "image/png" and before.content.startswith(b"\x89PNG")
    planned = client.post("/api/action", json={"type": "say", "text": "pick up the ball"}).json()
    assert planned["reply"]["kind"] == "plan" and planned["reply"]["plan"]["calls"] == ["pickup('ball')"]
    assert planned["state"]["mode"] == "confirm"
    assert client.get("/api/image.png").content == before.content  # nothing runs before the confirmation
    done = client.post("/api/action", json={"type": "confirm"}).json()
    assert done["reply"]["execution"]["ok"] and done["state"]["mode"] == "ready"
    assert done["state"]["image"]["version"] != planned["state"]["image"]["version"]
    assert client.get("/api/image.png").content != before.content
    check = client.post("/api/action", json={"type": "check", "condition": "'ball' in 'hands'"}).json()
    assert check["met"] is True
    history = client.get("/api/state").json()["history"]
    assert [t["text"] for t in history if t["who"] == "you"][:2] == ["pick up the ball", "(confirmed)"]
    assert history[0]["who"] == "robot" and history[0]["text"].startswith("Hello.")


def test_the_websocket_takes_the_same_actions_and_tells_other_pages(client: TestClient) -> None:
    with client.websocket_connect("ws://127.0.0.1:8000/ws") as first, \
            client.websocket_connect("ws://127.0.0.1:8000/ws") as second:
        first.send_text(json.dumps({"type": "look", "u": 0, "v": 0}))
        answer = first.receive_json()
        assert answer["type"] == "result" and answer["reply"]["kind"] == "notice"
        assert second.receive_json()["type"] == "state"
        first.send_text("{not json")
        assert first.receive_json() == {"type": "error", "status": 422, "error": "body: not valid JSON"}
        first.send_text(json.dumps({"type": "say", "text": "x" * (MAX_JSON_BODY + 1)}))
        assert first.receive_json()["status"] == 413
        first.send_bytes(b"\x00\x01")
        assert first.receive_json()["status"] == 422


def test_a_token_guards_a_server_others_can_reach(console) -> None:
    client = TestClient(create_app(console, token=TOKEN, loopback=False), base_url="http://192.168.1.20:8000",
                        raise_server_exceptions=False)
    for path in ("/", "/api/state", "/api/image.png", "/api/library"):
        refused = client.get(path)
        assert refused.status_code == 401 and "token" in one_line_error(refused)
    assert client.get("/", params={"token": "wrong" + TOKEN}).status_code == 401
    assert client.post("/api/action", json={"type": "look", "u": 1, "v": 1}).status_code == 401
    page = client.get("/", params={"token": TOKEN})
    assert page.status_code == 200 and "Content-Security-Policy" in page.headers
    assert client.get("/api/state", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    with pytest.raises(WebSocketDenialResponse) as denied:
        client.websocket_connect("ws://192.168.1.20:8000/ws").__enter__()
    assert denied.value.status_code == 401
    with client.websocket_connect(f"ws://192.168.1.20:8000/ws?token={TOKEN}") as socket:
        socket.send_text(json.dumps({"type": "look", "u": 1, "v": 1}))
        assert socket.receive_json()["type"] == "result"


def test_a_loopback_server_refuses_other_hosts_and_cross_site_websockets(client: TestClient) -> None:
    rebound = client.get("/api/state", headers={"Host": "attacker.example"})
    assert rebound.status_code == 403 and "host" in one_line_error(rebound)
    with pytest.raises(WebSocketDenialResponse) as denied:
        client.websocket_connect("ws://127.0.0.1:8000/ws", headers={"Origin": "http://attacker.example"}).__enter__()
    assert denied.value.status_code == 403
    with client.websocket_connect("ws://127.0.0.1:8000/ws", headers={"Origin": LOOPBACK}) as socket:
        socket.send_text(json.dumps({"type": "look", "u": 1, "v": 1}))
        assert socket.receive_json()["type"] == "result"


@pytest.mark.parametrize(("body", "status", "problem"), [
    (b"{not json", 422, "not valid JSON"),
    (b"[1, 2]", 422, "object"),
    (b'{"type": "fly"}', 422, "unknown action"),
    (b'{"text": "hello"}', 422, "type: missing"),
    (b'{"type": "say"}', 422, "text: Field required"),
    (b'{"type": "say", "text": "hi", "sudo": true}', 422, "sudo"),
    (b'{"type": "say", "text": 42}', 422, "text: Input should be a valid string"),
    (b'{"type": "say", "text": "' + b"a" * 501 + b'"}', 422, "at most 500 characters"),
    (b'{"type": "point", "u": -1, "v": 3}', 422, "u: Input should be greater than or equal to 0"),
    (b'{"type": "point", "u": 5000, "v": 3, "name": "cup"}', 422, "outside the 320"),
    (b'{"type": "teach", "name": "rm -rf /"}', 422, "name: expected a name"),
    (b'{"type": "check", "condition": "import os"}', 422, "condition:"),
])
def test_bad_bodies_are_refused_with_one_line(client: TestClient, body: bytes, status: int, problem: str) -> None:
    response = client.post("/api/action", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == status and problem in one_line_error(response)


def test_wrong_types_unknown_paths_and_oversized_bodies_are_4xx(client: TestClient) -> None:
    form = client.post("/api/action", content=b'{"type": "confirm"}', headers={"Content-Type": "text/plain"})
    assert form.status_code == 415 and "application/json" in one_line_error(form)
    assert client.get("/api/nothing").status_code == 404 and one_line_error(client.get("/api/nothing"))
    assert client.put("/api/action").status_code == 405
    big = client.post("/api/action", content=b" " * (MAX_JSON_BODY + 1), headers={"Content-Type": "application/json"})
    assert big.status_code == 413 and "too large" in one_line_error(big)

    def stream():  # no Content-Length: the body is counted as it arrives
        for _ in range(40):
            yield b" " * 1024

    chunked = client.post("/api/action", content=stream(), headers={"Content-Type": "application/json"})
    assert chunked.status_code == 413
    wav = client.post("/api/listen", content=b"\0" * (MAX_WAV_BODY + 1), headers={"Content-Type": "audio/wav"})
    assert wav.status_code == 413
    off = client.post("/api/listen", content=b"RIFF", headers={"Content-Type": "audio/wav"})
    assert off.status_code == 404 and "--speech" in one_line_error(off)


def test_a_failing_model_is_one_line_without_a_traceback(tmp_path) -> None:
    with web_console(ScriptedLLM([]), tmp_path / "lib.db") as console:  # no answer left: the stand-in raises
        client = TestClient(create_app(console), base_url=LOOPBACK, raise_server_exceptions=False)
        response = client.post("/api/action", json={"type": "say", "text": "pick up the ball"})
        assert response.status_code == 500 and "internal error" in one_line_error(response)
        assert client.get("/api/state").status_code == 200  # the session is still there


def test_only_loopback_goes_without_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.20") and not is_loopback("example.org")
    check_exposure("127.0.0.1", None)
    check_exposure("0.0.0.0", TOKEN)
    with pytest.raises(DataError, match="needs --token"):
        check_exposure("0.0.0.0", None)
    with pytest.raises(DataError, match="at least 16"):
        check_exposure("0.0.0.0", "short")
    assert page_url("0.0.0.0", 8000, TOKEN) == f"http://0.0.0.0:8000/?token={TOKEN}"


def test_the_cli_refuses_an_exposed_server_without_a_token(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "situated", "sandbox", "--web", "--host", "0.0.0.0",
                           "--library", str(tmp_path / "lib.db")], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error: --host 0.0.0.0:") \
        and "Traceback" not in proc.stderr
    assert not (tmp_path / "lib.db").exists()  # refused before anything was opened
