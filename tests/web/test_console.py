"""The web console in a real browser (Playwright driving Debian's chromium) against a server on 127.0.0.1.

- The gift-bag lesson through the page, with the 1.5B model's recorded calls (tests/cassettes/
  sandbox_gift_bag_1.5b.jsonl, replayed: the same utterances in the same order as examples/sandbox/gift_bag.session):
  "pack the ball" is unknown, the page asks to be taught, each step's plan is shown before it runs and confirmed,
  the camera image changes, "That's it" teaches pack(item), which then packs the toy car; the library browser
  shows it and undoes it.
- Pointing: a ScriptedLLM (exact answers; the recording has no unknown object) asks where "the racer" is; a click
  on the toy car in the camera image teaches it and the utterance is planned again; "Point" mode names the cube.
- Speech: a WAV made by espeak-ng is uploaded, its transcript shown and only sent once the user says so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes import CASSETTE_MODE, CASSETTES, ScriptedLLM
from situated.llm import cassette

pytest.importorskip("playwright.sync_api", reason="browser tests need playwright: pip install playwright")

from playwright.sync_api import expect, sync_playwright

from situated.web.app import create_app
from situated.web.server import ServerThread
from web.conftest import pixel_of, shot, web_console

CHROMIUM = shutil.which("chromium")
if CHROMIUM is None:
    pytest.skip("browser tests need Debian's chromium: apt-get install -y chromium", allow_module_level=True)

MODEL = "llamacpp:qwen2.5-coder-1.5b"
CASSETTE = CASSETTES / "sandbox_gift_bag_1.5b.jsonl"
TIMEOUT = 30_000  # ms for anything the page waits for (a plan, a skill run)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def open_page(browser: Any, url: str) -> Any:
    """The console page, loaded; `page.problems` collects its script errors and console errors (a blocked
    resource, a Content-Security-Policy violation)."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.problems = []
    page.on("console", lambda message: message.type == "error" and page.problems.append(message.text))
    page.on("pageerror", lambda error: page.problems.append(str(error)))
    page.set_default_timeout(TIMEOUT)
    expect.set_options(timeout=TIMEOUT)
    page.goto(url)
    page.wait_for_selector("body[data-ready=yes]")
    return page


def image_bytes(page: Any) -> bytes:
    """The camera image the page shows now, fetched from its own address."""
    return page.request.get(page.locator("#camera").evaluate("img => img.src")).body()


def say(page: Any, text: str) -> None:
    turns = page.locator("#log .robot").count()
    page.fill("#utterance", text)
    page.click("#send")
    page.locator("#log .robot").nth(turns).wait_for()  # the robot answered


def last_said(page: Any) -> str:
    return page.locator("#log .robot").last.text_content()


def confirm(page: Any) -> None:
    before = page.text_content("#execution")
    page.click("#confirm")
    page.locator("#plan-box").wait_for(state="hidden")
    expect(page.locator("#execution")).not_to_have_text(before)


def check(page: Any, condition: str) -> str:
    page.fill("#condition", condition)
    turns = page.locator("#log .robot").count()
    page.click("#check")
    page.locator("#log .robot").nth(turns).wait_for()
    return last_said(page)


def click_pixel(page: Any, u: int, v: int) -> None:
    """Click pixel (u, v) of the camera image, wherever the page has scaled it to."""
    box = page.locator("#camera").bounding_box()
    page.locator("#camera").click(position={"x": (u + 0.5) * box["width"] / 320,
                                            "y": (v + 0.5) * box["height"] / 240})


def test_a_behaviour_is_taught_and_used_through_the_page(browser: Any, tmp_path: Path) -> None:
    llm = cassette.wrap(MODEL, CASSETTE, mode=CASSETTE_MODE)  # replayed: never loads the model
    with web_console(llm, tmp_path / "gifts.db") as console, ServerThread(create_app(console)) as server:
        page = open_page(browser, server.url)
        assert "Hello." in page.locator("#log").text_content()
        first_image = image_bytes(page)

        say(page, "pack the ball")
        assert "I don't know how to pack" in last_said(page)
        assert page.locator("#teaching").is_visible() and page.text_content("#teaching-name") == "pack"

        say(page, "pick up the ball")  # the plan is shown before anything moves
        assert page.locator("#plan-box").is_visible() and page.text_content("#plan") == "pickup('ball')\n"
        assert page.text_content("#mode") == "teaching pack" and image_bytes(page) == first_image
        confirm(page)
        assert "ok pickup('ball')" in page.text_content("#execution")
        assert image_bytes(page) != first_image  # the arm moved in the camera image
        assert check(page, "'ball' in 'hands'").endswith("yes.")

        # "go to the gift bag" moves the arm only (no goal), "let go of it" drops the ball: each step as said
        for step, calls in (("go to the gift bag", "goto('gift_bag')"), ("let go of it", "release()")):
            say(page, step)
            assert page.text_content("#plan") == calls + "\n"
            confirm(page)
        assert check(page, "'ball' in 'gift_bag'").endswith("yes.")
        assert page.text_content("#teaching-steps").split("\n") == ["pickup('ball')", "goto('gift_bag')", "release()"]
        shot(page, "behaviour_steps")
        turns = page.locator("#log .robot").count()
        page.click("#done")  # "that's it"
        page.locator("#log .robot").nth(turns).wait_for()
        page.locator("#teaching").wait_for(state="hidden")
        assert "I learned pack" in page.locator("#log").text_content()
        library = page.locator("#library-behaviours .entry[data-name=pack]")
        library.wait_for()
        assert "def pack(item):" in library.text_content() and "v1" in library.text_content()
        assert "pack(item)" in page.text_content("#library-api")
        shot(page, "behaviour_learned")

        say(page, "pack the toy car")  # the taught behaviour, shown with the skills it runs
        assert page.text_content("#plan") == "pack('toy_car')\n" and page.locator("#plan-expanded-box").is_visible()
        assert "goto('gift_bag')" in page.text_content("#plan-expanded")
        packed_before = image_bytes(page)
        confirm(page)
        assert "FAILED" not in page.text_content("#execution") and image_bytes(page) != packed_before
        assert check(page, "'toy_car' in 'gift_bag'").endswith("yes.")
        assert page.request.get(server.url + "api/state").json()["mode"] == "ready"

        library.locator("button").click()  # undo from the library browser
        expect(page.locator("#library-behaviours .entry")).to_have_count(0)
        assert "I forgot pack" in page.locator("#log").text_content()
        assert page.problems == []
        page.close()


def test_objects_are_taught_by_clicking_the_camera_image(browser: Any, tmp_path: Path) -> None:
    llm = ScriptedLLM([{"unknown_object": "racer"}, {"word": "racer", "is": "thing"}, {"word": "racer", "is": "thing"},
                       {"calls": ["pickup(RACER)"]}])
    with web_console(llm, tmp_path / "lib.db") as console, ServerThread(create_app(console)) as server:
        car = console.runner.call(lambda s: pixel_of(s, "toy_car"))
        cube = console.runner.call(lambda s: pixel_of(s, "cube"))
        page = open_page(browser, server.url)

        click_pixel(page, *cube)  # nothing asked for: a click says what is there
        expect(page.locator("#log .robot").last).to_have_text("That is the cube.")

        say(page, "pick up the racer")
        assert page.locator("#pointing").is_visible() and page.text_content("#pointing-name") == "racer"
        turns = page.locator("#log .robot").count()
        click_pixel(page, *car)
        page.locator("#log .robot").nth(turns).wait_for()
        assert last_said(page).startswith("Now I know the racer.")
        assert page.text_content("#plan") == "pickup('racer')\n"  # the utterance was planned again
        confirm(page)
        assert check(page, "'toy_car' in 'hands'").endswith("yes.")

        page.fill("#point-name", "present")  # Point mode: name something, then click it
        page.click("#point-mode")
        turns = page.locator("#log .robot").count()
        click_pixel(page, *cube)
        page.locator("#log .robot").nth(turns).wait_for()
        assert last_said(page) == "Now I know the present."
        objects = page.locator("#library-objects")
        expect(objects.locator(".entry")).to_have_count(2)
        assert "pointed" in objects.text_content() and re.search(r"racer\s+v1", objects.text_content())
        assert page.problems == []
        page.close()


def test_the_page_carries_the_token_it_was_opened_with(browser: Any, tmp_path: Path) -> None:
    token = "token-for-the-browser-test-42"
    llm = ScriptedLLM([{"calls": ["pickup(DUCK)"]}])
    with web_console(llm, tmp_path / "lib.db") as console, \
            ServerThread(create_app(console, token=token, loopback=False)) as server:
        refused = browser.new_page()
        assert refused.goto(server.url).status == 401
        refused.close()
        page = open_page(browser, f"{server.url}?token={token}")  # state, image, library over HTTP with it
        say(page, "pick up the duck")  # over the websocket, which takes it from the query
        assert page.text_content("#plan") == "pickup('duck')\n"
        confirm(page)
        assert "ok pickup('duck')" in page.text_content("#execution")
        assert page.problems == []
        page.close()


def test_a_spoken_utterance_is_shown_and_sent_only_when_confirmed(browser: Any, tmp_path: Path) -> None:
    if shutil.which("espeak-ng") is None:
        pytest.skip("speech tests synthesize audio with espeak-ng: apt-get install -y espeak-ng")
    pytest.importorskip("pocketsphinx", reason="speech input needs pocketsphinx: pip install 'situated[speech]'")
    from situated.sandbox.speech import SphinxRecognizer

    wav = tmp_path / "pack.wav"
    subprocess.run(["espeak-ng", "-v", "en-us+f2", "-s", "160", "-w", str(wav), "pack the ball"], check=True)
    llm = ScriptedLLM([{"unknown_behaviour": "pack", "objects": ["BALL"]}])
    with web_console(llm, tmp_path / "lib.db", SphinxRecognizer()) as console, \
            ServerThread(create_app(console)) as server:
        page = open_page(browser, server.url)
        assert page.locator("#speech").is_visible()
        page.set_input_files("#speech-file", str(wav))
        page.locator("#heard-box").wait_for()
        assert page.input_value("#transcript") == "pack the ball"
        assert llm.calls == [] and "pack the ball" not in page.text_content("#log")  # nothing sent yet
        page.click("#use-transcript")
        page.locator("#teaching").wait_for()
        assert page.text_content("#teaching-name") == "pack" and len(llm.calls) == 1
        assert page.problems == []
        page.close()
