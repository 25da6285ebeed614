"""One sandbox session on one worker thread: every call to it runs there, one at a time.

A `SandboxSession` is not thread-safe, and the skill library's SQLite connection belongs to the thread that opened
it, so the session is opened, used and closed on the runner's own thread; a web server's request handlers submit
work to it and await the result.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any, Generic, TypeVar

T = TypeVar("T")
S = TypeVar("S")


class SessionRunner(Generic[S]):
    """Owns what `open_session(stack)` returns (anything it needs closed goes on `stack`) on a single worker
    thread; `submit(fn)` runs `fn(session)` there."""

    def __init__(self, open_session: Callable[[ExitStack], S]) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-session")
        self._stack = ExitStack()
        self._session: S | None = None
        self._closed = False
        try:
            self._session = self._executor.submit(open_session, self._stack).result()
        except BaseException:
            self._executor.submit(self._stack.close).result()
            self._executor.shutdown()
            raise

    def submit(self, fn: Callable[[S], T]) -> Future[T]:
        """Run `fn(session)` on the session's thread, after everything submitted before it."""
        if self._closed or self._session is None:
            raise RuntimeError("the session is closed")
        session = self._session
        return self._executor.submit(fn, session)

    def call(self, fn: Callable[[S], T], timeout: float | None = None) -> T:
        """`submit(fn)` and wait for its result."""
        return self.submit(fn).result(timeout)

    def close(self) -> None:
        """Close the session (on its thread) after the work already submitted; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._executor.submit(self._stack.close).result()
        finally:
            self._executor.shutdown()

    def __enter__(self) -> SessionRunner[S]:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
