"""The one console dialogue: a line the person types becomes what the session does, for the terminal console
(and any other text front end). A pure translation of text into session calls — no printing, no input.

While a plan awaits confirmation, `y`/`yes`/`ok` runs it, `n`/`no`/`cancel` drops it, `teach NAME` teaches it as a
new behaviour, an information command (`help`, `library`, `api`, `metrics`, `image PATH`) is answered, and
anything else corrects it. Otherwise `point`, `demo`, `undo` and `reset` are the script statements of the same
name (a plan they yield waits for confirmation), `teach NAME` starts a lesson, `quit` ends, and anything else is
said to the robot. These are console commands, not language: what the person says goes to the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .behaviours import definition_text
from .replies import Reply

HELP = """\
Say what the robot should do, e.g. "pick up the ball". Commands:
  point NAME U V            name the object at pixel (U, V) of the camera image (see: image PATH)
  point NAME X Y Z          name the object nearest a point (metres)
  demo NAME [OBJECT] x y z ; x y z ; ...   demonstrate a motion; it becomes skill NAME(target)
                            (a step may be close or open: the gripper grasps or lets go there)
  teach NAME                teach a behaviour by showing its steps (end with "that's it")
  undo NAME                 forget the newest version of something taught
  image PATH                save the camera image (PNG)
  library | api | metrics   what the library holds / the robot's API / this session's measures
  reset                     set the table up again (lessons are kept)
  listen FILE.wav           (with --speech) transcribe a recording; you confirm it before it is used
  quit                      end the session
When a plan is shown: y runs it, n cancels it, anything else corrects it (or: teach NAME)."""
YES = frozenset({"y", "yes", "ok", "go", "go ahead"})
NO = frozenset({"n", "no", "cancel", "stop"})
INFO = frozenset({"help", "library", "api", "metrics", "image"})
STATEMENTS = frozenset({"point", "demo", "undo", "reset"})


@dataclass(frozen=True)
class Turn:
    """What one typed line did: the session's replies, lines of information, and whether the person quit."""

    replies: tuple[Reply, ...] = ()
    lines: tuple[str, ...] = ()
    quit: bool = False


class Dialogue:
    """The console dialogue over one `SandboxSession` (see the module docstring)."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def greeting(self) -> list[str]:
        return [f"robot: Hello. {self.session.env.describe()}", *(f"note: {n}" for n in self.session.notes),
                'Type what you would say, or "help".']

    def prompt(self) -> str:
        return "confirm [y/n/correction/teach NAME]> " if self.session.mode == "confirm" else "you> "

    def respond(self, text: str) -> Turn:
        """One typed line (see the module docstring)."""
        words = text.split()
        if not words:
            return Turn()
        head = words[0].lower()
        if self.session.mode == "confirm" and head not in INFO | {"quit", "exit"}:
            return Turn((self._confirming(text, words),))
        if head in ("quit", "exit"):
            return Turn(quit=True)
        if head in INFO:
            return Turn(lines=tuple(self._info(head, words)))
        if head == "teach" and len(words) == 2:
            return Turn((self.session.teach(words[1]),))
        if head in STATEMENTS:
            return Turn((self._statement(text),))
        return Turn((self.session.say(text),))

    def _confirming(self, text: str, words: list[str]) -> Reply:
        if text.lower() in YES:
            return self.session.confirm()
        if text.lower() in NO:
            return self.session.cancel()
        if words[0].lower() == "teach" and len(words) == 2:
            return self.session.teach(words[1])
        return self.session.correct(text)

    def _info(self, head: str, words: list[str]) -> list[str]:
        session = self.session
        if head == "library":
            return library_lines(session.library)
        if head == "api":
            return [*(session.definition(a.name).rstrip() for a in session.space.actions),
                    *(f"object {o.name.upper()}: {o.doc}" for o in session.objects)]
        if head == "metrics":
            return [f"{k}: {v}" for k, v in session.metrics().to_dict().items()]
        if head == "image" and len(words) == 2:
            return [f"saved {session.env.save_image(words[1])}"]
        return HELP.splitlines()

    def _statement(self, text: str) -> Reply:
        """point / demo / undo / reset, read as the script statement (DataError for a bad one)."""
        from .script import parse_line

        statement = parse_line(text, 1, "console")
        assert statement is not None
        if statement.kind == "point":
            return self.session.point(statement.name, statement.where)
        if statement.kind == "demo":
            return self.session.demo(statement.name, statement.waypoints, statement.reference)
        if statement.kind == "undo":
            return self.session.undo(statement.name)
        return self.session.reset()


def library_lines(library: Any) -> list[str]:
    """What a library holds, one item a line."""
    lines = []
    for record in library.behaviours():
        lines.append(f"behaviour {record.name} (v{record.version}, depth {record.depth}): {record.doc}")
        lines += ["  " + line for line in definition_text(record.name, record.params, record.body).splitlines()]
    for record in library.objects():
        where = "" if record.position is None else " at ({:.2f}, {:.2f}, {:.2f})".format(*record.position)
        lines.append(f"object {record.name} (v{record.version}){where}: {record.description}")
    for record in library.skills():
        lines.append(f"skill {record.name}({', '.join(record.params)}) (v{record.version}): {record.doc}")
    return lines or ["the library is empty"]
