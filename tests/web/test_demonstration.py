"""Teaching on the web page's camera image, in a real browser (Playwright driving Debian's chromium): a motion
the robot asks to be shown is demonstrated by clicking keypoints (and dragging across the image) with the
gripper buttons, becomes a skill and runs on another object; a spot of the empty table is taught as a place by
clicking it; one request uses both.

The model's calls are the 1.5B model's, recorded in tests/cassettes/sandbox_skill_1.5b.jsonl and replayed (the
page's first turns are those of tests/sandbox/test_skill_lessons.py). With SITUATED_SCREENSHOTS=DIR the tests
save the screenshots of docs/sandbox_web.md there."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fakes import CASSETTES
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
CASSETTE = CASSETTES / "sandbox_skill_1.5b.jsonl"
MODE = os.environ.get("SITUATED_CASSETTE_MODE", "replay")
TIMEOUT = 60_000  # ms for anything the page waits for (a plan, a skill run)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def open_page(browser: Any, url: str) -> Any:
    page = browser.new_page(viewport={"width": 1200, "height": 860})
    page.problems = []
    page.on("console", lambda message: message.type == "error" and page.problems.append(message.text))
    page.on("pageerror", lambda error: page.problems.append(str(error)))
    page.set_default_timeout(TIMEOUT)
    expect.set_options(timeout=TIMEOUT)
    page.goto(url)
    page.wait_for_selector("body[data-ready=yes]")
    return page


def answered(page: Any, act: Any) -> str:
    """Do `act` and wait for the robot's next line; that line."""
    turns = page.locator("#log .robot").count()
    act()
    page.locator("#log .robot").nth(turns).wait_for()
    return page.locator("#log .robot").last.text_content()


def say(page: Any, text: str) -> str:
    page.fill("#utterance", text)
    return answered(page, lambda: page.click("#send"))


def confirm(page: Any) -> None:
    before = page.text_content("#execution")
    page.click("#confirm")
    page.locator("#plan-box").wait_for(state="hidden")
    expect(page.locator("#execution")).not_to_have_text(before)


def check(page: Any, condition: str) -> str:
    page.fill("#condition", condition)
    return answered(page, lambda: page.click("#check"))


def position(page: Any, u: float, v: float) -> dict[str, float]:
    box = page.locator("#camera").bounding_box()
    return {"x": (u + 0.5) * box["width"] / 320, "y": (v + 0.5) * box["height"] / 240}


def click_pixel(page: Any, u: int, v: int) -> None:
    page.locator("#camera").click(position=position(page, u, v))


def drag_pixels(page: Any, start: tuple[int, int], end: tuple[int, int]) -> None:
    box = page.locator("#camera").bounding_box()
    a, b = position(page, *start), position(page, *end)
    page.mouse.move(box["x"] + a["x"], box["y"] + a["y"])
    page.mouse.down()
    for k in range(1, 9):
        page.mouse.move(box["x"] + a["x"] + (b["x"] - a["x"]) * k / 8, box["y"] + a["y"] + (b["y"] - a["y"]) * k / 8)
    page.mouse.up()


def top_pixel(session: Any, name: str) -> tuple[int, int]:
    """The pixel of `name` whose point (lifted with the depth image) is highest: its top, as the camera sees it."""
    env = session.env
    seen = env.observe()
    rows, cols = np.nonzero(seen.segmentation == env.world.bodies[name].uid)
    best = max(range(0, len(rows), 3), key=lambda k: seen.pixel_to_point(int(cols[k]), int(rows[k]))[2])
    return int(cols[best]), int(rows[best])


def test_a_motion_is_demonstrated_by_clicking_keypoints_and_runs_on_another_object(browser: Any,
                                                                                    tmp_path: Path) -> None:
    if MODE == "replay" and not CASSETTE.is_file():
        pytest.fail(f"cassette {CASSETTE} missing; record it with SITUATED_CASSETTE_MODE=record")
    llm = cassette.wrap(MODEL, CASSETTE, mode=MODE, n_threads=2)
    with web_console(llm, tmp_path / "skills.db", motions=True) as console, \
            ServerThread(create_app(console)) as server:
        duck = console.runner.call(lambda s: top_pixel(s, "duck"))
        page = open_page(browser, server.url)

        said = say(page, "knock on the duck")
        assert said.startswith("I don't know how to knock. Show me how to knock, on the duck")
        assert page.locator("#showing").is_visible() and page.text_content("#showing-name") == "knock"
        assert page.input_value("#demo-name") == "knock"  # ready to be shown: clicks add keypoints
        for height in ("15", "4", "10", "4"):  # above the duck's top, down, up, down again
            page.fill("#demo-height", height)
            click_pixel(page, *duck)
        expect(page.locator("#demo-steps li")).to_have_count(4)
        expect(page.locator("#marks .mark")).to_have_count(4)
        shot(page, "skill_keypoints")
        said = answered(page, lambda: page.click("#demo-send"))
        assert said.startswith("I learned knock") and said.endswith("Shall I go ahead?")
        assert page.text_content("#plan") == "knock('duck')\n"  # the request, planned again with the new skill
        page.locator("#library-skills .entry[data-name=knock]").wait_for()
        shot(page, "skill_learned")
        confirm(page)
        assert "ok knock('duck')" in page.text_content("#execution")
        assert check(page, "'close' to 'duck'").endswith("yes.")

        say(page, "go home")
        confirm(page)
        say(page, "knock on the cube")  # another object, from another start pose
        assert page.text_content("#plan") == "knock('cube')\n"
        confirm(page)
        assert "ok knock('cube')" in page.text_content("#execution")
        assert check(page, "'close' to 'cube'").endswith("yes.")
        shot(page, "skill_used")
        assert page.problems == []
        page.close()


def test_keypoints_can_be_dragged_and_gripper_events_added_then_cleared(browser: Any, tmp_path: Path) -> None:
    with web_console(_Unused(), tmp_path / "lib.db") as console, ServerThread(create_app(console)) as server:
        ball = console.runner.call(lambda s: pixel_of(s, "ball"))
        page = open_page(browser, server.url)
        page.click("#demo-mode")
        drag_pixels(page, (ball[0] - 30, ball[1]), ball)  # a drag: up to 5 keypoints along it
        expect(page.locator("#demo-steps li")).to_have_count(5)
        page.click("#demo-close")
        click_pixel(page, ball[0], ball[1] - 20)
        page.click("#demo-open")
        steps = page.locator("#demo-steps li").all_text_contents()
        assert steps[5:] == ["close the gripper", f"({ball[0]}, {ball[1] - 20}) 10 cm up", "open the gripper"]
        assert steps[0].startswith(f"({ball[0] - 30}, ") and steps[4].startswith(f"({ball[0]}, {ball[1]})")
        page.click("#demo-clear")
        expect(page.locator("#demo-steps li")).to_have_count(0)
        expect(page.locator("#marks .mark")).to_have_count(0)
        assert page.problems == []
        page.close()


class _Unused:
    """A model that must not be asked: nothing here is said to the robot."""

    uri = "unused"

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the model was asked ({name})")


def table_pixel(session: Any) -> tuple[int, int]:
    """A pixel of the empty table within the arm's easy reach, 10 cm or more from every object."""
    env = session.env
    seen = env.observe()
    objects = [np.array(o["position"][:2]) for o in env.snapshot()["objects"].values()]
    for v in range(60, 200, 4):
        for u in range(40, 280, 4):
            if seen.object_at_pixel(u, v) is not None:
                continue
            x, y, z = seen.pixel_to_point(u, v)
            if abs(z) < 0.01 and 0.4 < x < 0.6 and all(np.linalg.norm(p - (x, y)) > 0.1 for p in objects):
                return u, v
    raise AssertionError("no free table pixel")


def test_a_place_is_taught_by_clicking_the_empty_table(browser: Any, tmp_path: Path) -> None:
    with web_console(_Unused(), tmp_path / "lib.db") as console, ServerThread(create_app(console)) as server:
        spot = console.runner.call(table_pixel)
        page = open_page(browser, server.url)
        page.fill("#point-name", "corner")
        page.click("#point-mode")
        said = answered(page, lambda: click_pixel(page, *spot))
        assert said == "Now I know the corner."
        page.locator("#library-objects .entry[data-name=corner]").wait_for()
        shot(page, "place")
        assert "corner" in console.runner.call(lambda s: [o.name for o in s.objects])
        page.close()


def test_a_place_and_a_motion_taught_on_the_page_are_used_in_one_request(browser: Any, tmp_path: Path) -> None:
    if MODE == "replay" and not CASSETTE.is_file():
        pytest.fail(f"cassette {CASSETTE} missing; record it with SITUATED_CASSETTE_MODE=record")
    llm = cassette.wrap(MODEL, CASSETTE, mode=MODE, n_threads=2)
    with web_console(llm, tmp_path / "skills.db", motions=True) as console, \
            ServerThread(create_app(console)) as server:
        duck = console.runner.call(lambda s: top_pixel(s, "duck"))
        spot = console.runner.call(table_pixel)
        page = open_page(browser, server.url)
        say(page, "knock on the duck")
        for height in ("15", "4", "10", "4"):
            page.fill("#demo-height", height)
            click_pixel(page, *duck)
        assert answered(page, lambda: page.click("#demo-send")).startswith("I learned knock")
        confirm(page)

        page.fill("#point-name", "corner")  # a place: a click on the bare table
        page.click("#point-mode")
        assert answered(page, lambda: click_pixel(page, *spot)) == "Now I know the corner."
        say(page, "knock on the corner")  # the taught motion at the taught place
        assert page.text_content("#plan") == "knock('corner')\n"
        confirm(page)
        assert "ok knock('corner')" in page.text_content("#execution")
        assert check(page, "'close' to 'corner'").endswith("yes.")
        shot(page, "place_and_skill")
        assert page.problems == []
        page.close()
