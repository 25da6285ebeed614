"""pybullet, imported in this one place with its build-time banner silenced.

pybullet's C code prints `pybullet build time: ...` to the process's standard error when it is imported, which
would precede every one-line `error:` of a command. File descriptors 1 and 2 are pointed at /dev/null for the
import only (Python's own streams are flushed first, so nothing of ours is lost).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def _silenced_fds() -> Iterator[None]:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            stream.flush()
    saved: list[tuple[int, int]] = []
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        yield
        return
    try:
        for fd in (1, 2):
            with contextlib.suppress(OSError):
                saved.append((fd, os.dup(fd)))
                os.dup2(devnull, fd)
        yield
    finally:
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
        os.close(devnull)


with _silenced_fds():
    import pybullet
    import pybullet_data
    from pybullet_utils.bullet_client import BulletClient

__all__ = ["BulletClient", "pybullet", "pybullet_data"]
