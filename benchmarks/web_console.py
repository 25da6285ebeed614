"""Measures the web console (not a test): page load in chromium, and an action's round trip through the page, over
HTTP and over the websocket, each against the same action called directly on the session's thread (the baseline,
same process). The model replays the 1.5B recording of the gift-bag session (no model is loaded).

    PYTHONPATH=src:tests python benchmarks/web_console.py [--loads 10] [--actions 50]

Prints one line per measure (median ms, and the ratio to the direct call where there is one); last line JSON.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from fakes import CASSETTES
from situated.llm import cassette
from situated.web.app import create_app
from situated.web.messages import Check, Look
from situated.web.server import ServerThread
from web.conftest import web_console


def median_ms(samples: list[float]) -> float:
    return round(1000 * statistics.median(samples), 2)


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--actions", type=int, default=50)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    llm = cassette.wrap("llamacpp:qwen2.5-coder-1.5b", CASSETTES / "sandbox_gift_bag_1.5b.jsonl", mode="replay")
    result: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, web_console(llm, Path(tmp) / "lib.db") as console, \
            ServerThread(create_app(console)) as server, httpx.Client(base_url=server.url) as http, \
            sync_playwright() as playwright:
        look = Look(type="look", u=160, v=120)
        result["direct_look_ms"] = median_ms(timed(lambda: console.act(look).result(), args.actions))
        body = {"type": "look", "u": 160, "v": 120}
        result["http_look_ms"] = median_ms(timed(lambda: http.post("api/action", json=body).raise_for_status(),
                                                 args.actions))
        result["http_image_ms"] = median_ms(timed(lambda: http.get("api/image.png").raise_for_status(), args.actions))
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page()
        loads = []
        for _ in range(args.loads):
            started = time.perf_counter()
            page.goto(server.url)
            page.wait_for_selector("body[data-ready=yes]")
            loads.append(time.perf_counter() - started)
        result["page_load_ms"] = median_ms(loads)
        page.wait_for_timeout(300)  # the websocket opens after the page is ready

        def through_page(fill: str, selector: str, button: str) -> float:
            turns = page.locator("#log .robot").count()
            page.fill(selector, fill)
            started = time.perf_counter()
            page.click(button)
            page.locator("#log .robot").nth(turns).wait_for()
            return time.perf_counter() - started

        check = Check(type="check", condition="'ball' in 'gift_bag'")
        result["direct_check_ms"] = median_ms(timed(lambda: console.act(check).result(), args.actions))
        result["page_check_ms"] = median_ms([through_page("'ball' in 'gift_bag'", "#condition", "#check")
                                             for _ in range(args.actions)])
        result["page_say_replayed_ms"] = round(1000 * through_page("pack the ball", "#utterance", "#send"), 1)
        result["page_plan_replayed_ms"] = round(1000 * through_page("pick up the ball", "#utterance", "#send"), 1)
        started = time.perf_counter()
        page.click("#confirm")
        page.locator("#execution div").first.wait_for()
        result["page_confirm_pickup_ms"] = round(1000 * (time.perf_counter() - started), 1)
        browser.close()
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"http look / direct look: {result['http_look_ms'] / result['direct_look_ms']:.2f}x; "
          f"page check / direct check: {result['page_check_ms'] / result['direct_check_ms']:.2f}x")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
