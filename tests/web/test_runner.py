"""The session runner keeps a session on one thread: calls from many threads run there one at a time, in order,
and the session is closed there too (SQLite connections and the simulator belong to the thread that opened them)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import pytest

from situated.web.runner import SessionRunner


class Recorder:
    """Stands in for a session: remembers which thread each call ran on and whether two ever overlapped."""

    def __init__(self) -> None:
        self.threads: set[int] = set()
        self.active = 0
        self.overlapped = False
        self.closed_on: int | None = None

    def work(self, _session: object) -> int:
        self.active += 1
        self.overlapped |= self.active > 1
        self.threads.add(threading.get_ident())
        threading.Event().wait(0.002)
        self.active -= 1
        return threading.get_ident()


def test_calls_from_many_threads_run_on_the_session_thread_one_at_a_time() -> None:
    recorder = Recorder()

    def open_session(stack: ExitStack) -> Recorder:
        stack.callback(lambda: setattr(recorder, "closed_on", threading.get_ident()))
        return recorder

    runner = SessionRunner(open_session)
    with ThreadPoolExecutor(8) as pool:
        idents = list(pool.map(lambda _: runner.call(recorder.work), range(40)))
    order = [runner.submit(lambda _s, i=i: i) for i in range(10)]
    assert [f.result() for f in order] == list(range(10))
    runner.close()
    assert len(set(idents)) == 1 and recorder.threads == set(idents) and not recorder.overlapped
    assert recorder.closed_on == idents[0] != threading.get_ident()
    with pytest.raises(RuntimeError, match="closed"):
        runner.submit(recorder.work)


def test_a_session_that_fails_to_open_is_an_error_and_closes_what_it_opened() -> None:
    closed = []

    def open_session(stack: ExitStack) -> object:
        stack.callback(lambda: closed.append(True))
        raise ValueError("no such scene")

    with pytest.raises(ValueError, match="no such scene"):
        SessionRunner(open_session)
    assert closed == [True]
