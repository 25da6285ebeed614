"""What the web page shows and does, without the web: a session's state, the camera image, the library, and the
user's actions applied to the session — each run on the session's own thread (`SessionRunner`).

Every method returns a `Future` of JSON-ready data. Errors in the user's input (a condition that does not parse, a
pixel outside the image) come back as `BadRequest`; the session's own refusals are replies of kind "error", as in
the terminal console.
"""

from __future__ import annotations

import hashlib
from collections import deque
from concurrent.futures import Future
from typing import Any

from ..errors import ParseError
from ..sandbox.behaviours import definition_text
from ..sandbox.replies import Reply
from ..sandbox.session import SandboxSession
from ..sandbox.speech import Recognizer, api_words
from .messages import (
    Action,
    BadRequest,
    Cancel,
    Check,
    Confirm,
    Correct,
    Demo,
    Keypoint,
    Look,
    Point,
    Reset,
    Say,
    Teach,
    Undo,
)
from .runner import SessionRunner

HISTORY = 200
"""Turns of the conversation kept for a page that is opened (or reloaded) later."""


class WebConsole:
    """The page's view of one session: `act`, `state`, `image`, `library`, `listen` (each a Future)."""

    def __init__(self, runner: SessionRunner[SandboxSession], recognizer: Recognizer | None = None) -> None:
        self.runner = runner
        self.recognizer = recognizer
        self.history: deque[dict[str, str]] = deque(maxlen=HISTORY)
        self._picture: tuple[bytes, str, tuple[int, int]] = (b"", "", (0, 0))
        """PNG, version, (width, height): replaced whole, so a reader on another thread sees one picture."""
        self.runner.call(self._render)
        self.runner.call(lambda s: self._said("robot", "greeting", f"Hello. {s.env.describe()}"))

    # -- what the page asks for --------------------------------------------------------------------------------

    def act(self, action: Action) -> Future[dict[str, Any]]:
        """Apply one user action; the result is `{"reply": ..., "state": ...}` (and `"met"` for a check)."""
        return self.runner.submit(lambda session: self._act(session, action))

    def state(self, history: bool = False) -> Future[dict[str, Any]]:
        """The session's state (mode, plan, lesson, API, world, image version), with the conversation if asked."""
        return self.runner.submit(lambda session: self._state(session, history))

    def image(self) -> tuple[bytes, str]:
        """The camera image as PNG and its version (a digest: it changes when the picture does)."""
        png, version, _size = self._picture
        return png, version

    def library(self) -> Future[dict[str, Any]]:
        """Everything taught, with versions: behaviours (as plan text), objects, skills; and the basic API."""
        return self.runner.submit(library_view)

    def listen(self, wav: bytes) -> Future[dict[str, Any]]:
        """Transcribe a recording under the current API's grammar. Nothing is said to the robot: the page shows
        the transcript and asks before sending it."""
        recognizer = self.recognizer
        if recognizer is None:
            raise BadRequest("speech input is off (start the console with --speech)", 404)

        def work(session: SandboxSession) -> dict[str, Any]:
            transcript = recognizer.transcribe(wav, *api_words(session))
            return transcript.to_dict()

        return self.runner.submit(work)

    # -- on the session's thread -------------------------------------------------------------------------------

    def _act(self, session: SandboxSession, action: Action) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if isinstance(action, Say):
            self._said("you", "say", action.text)
            reply = session.say(action.text)
        elif isinstance(action, Confirm):
            self._said("you", "confirm", "(confirmed)")
            reply = session.confirm()
        elif isinstance(action, Cancel):
            self._said("you", "cancel", "(cancelled)")
            reply = session.cancel()
        elif isinstance(action, Correct):
            self._said("you", "correct", action.text)
            reply = session.correct(action.text)
        elif isinstance(action, Teach):
            self._said("you", "teach", f"teach {action.name}")
            reply = session.teach(action.name)
        elif isinstance(action, Undo):
            self._said("you", "undo", f"undo {action.name}")
            reply = session.undo(action.name)
        elif isinstance(action, Reset):
            self._said("you", "reset", "(reset the table)")
            reply = session.reset()
        elif isinstance(action, Point):
            reply = self._point(session, action)
        elif isinstance(action, Demo):
            reply = self._demo(session, action)
        elif isinstance(action, Look):
            self._pixel(action.u, action.v)
            seen = session.env.object_at_pixel(action.u, action.v)
            reply = Reply("notice", f"That is the {seen.replace('_', ' ')}." if seen else "There is no object there.")
            extra["object"] = seen
        else:
            assert isinstance(action, Check)
            try:
                met = session.check(action.condition)
            except ParseError as err:
                raise BadRequest(f"condition: {' '.join(str(err).split())}") from None
            extra["met"] = met
            reply = Reply("notice", f"{action.condition}: {'yes' if met else 'no'}.")
        self._said("robot", reply.kind, reply.say)
        self._render(session)
        return {"reply": reply.to_dict(), "state": self._state(session, False), **extra}

    def _point(self, session: SandboxSession, action: Point) -> Reply:
        self._pixel(action.u, action.v)
        name = action.name.strip().lower().replace(" ", "_") if action.name else None
        if name is None:
            if session.pending_object is None:
                return Reply("error", "I am not waiting for anything to be pointed at: give the object a name first.")
            name = session.pending_object.name
        self._said("you", "point", f"point {name} at ({action.u}, {action.v})")
        return session.point(name, (action.u, action.v))

    def _demo(self, session: SandboxSession, action: Demo) -> Reply:
        """Keypoints lifted to 3-D with the depth image (raised by their height), gripper events as they are."""
        steps: list[tuple[float, float, float] | str] = []
        for step in action.steps:
            if isinstance(step, Keypoint):
                self._pixel(step.u, step.v)
                x, y, z = session.env.pixel_to_point(step.u, step.v)
                steps.append((round(x, 4), round(y, 4), round(z + step.height, 4)))
            else:
                steps.append(step)
        name = action.name.strip().lower().replace(" ", "_")
        reference = action.object.strip().lower().replace(" ", "_") if action.object else None
        shown = " ; ".join(s if isinstance(s, str) else "{:.3f} {:.3f} {:.3f}".format(*s) for s in steps)
        self._said("you", "demo", f"demo {name}{' ' + reference if reference else ''} {shown}")
        return session.demo(name, steps, reference)

    def _pixel(self, u: int, v: int) -> None:
        width, height = self._picture[2]
        if not (0 <= u < width and 0 <= v < height):
            raise BadRequest(f"pixel ({u}, {v}) is outside the {width}×{height} camera image")

    def _render(self, session: SandboxSession) -> None:
        from ..envs.tabletop.png import encode_png

        rgb = session.env.image()
        png = encode_png(rgb)
        if png != self._picture[0]:
            self._picture = (png, hashlib.sha256(png).hexdigest()[:16], (int(rgb.shape[1]), int(rgb.shape[0])))

    def _said(self, who: str, kind: str, text: str) -> None:
        self.history.append({"who": who, "kind": kind, "text": text})

    def _state(self, session: SandboxSession, history: bool) -> dict[str, Any]:
        _png, version, (width, height) = self._picture
        state = session.status() | {
            "world": session.env.describe(),
            "image": {"version": version, "width": width, "height": height},
            "speech": None if self.recognizer is None else self.recognizer.engine,
        }
        if history:
            state["history"] = list(self.history)
        return state


def library_view(session: SandboxSession) -> dict[str, Any]:
    """What the library holds, newest versions with the numbers of all versions; and the API's functions."""
    library = session.library

    def versions(name: str) -> list[int]:
        return [r.version for r in library.versions(name)]

    return {
        "behaviours": [{"name": r.name, "version": r.version, "versions": versions(r.name), "params": list(r.params),
                        "doc": r.doc, "text": definition_text(r.name, r.params, r.body), "depth": r.depth,
                        "calls": list(r.calls), "in_api": r.name in session.space}
                       for r in library.behaviours()],
        "objects": [{"name": r.name, "version": r.version, "versions": versions(r.name),
                     "position": None if r.position is None else [round(v, 3) for v in r.position],
                     "description": r.description, "source": r.source} for r in library.objects()],
        "skills": [{"name": r.name, "version": r.version, "versions": versions(r.name), "params": list(r.params),
                    "doc": r.doc, "kind": r.kind} for r in library.skills()],
        "functions": [session.definition(a.name).rstrip() for a in session.space.actions],
    }
