"""The web console's message bodies (HTTP and websocket), checked by pydantic at the border.

An action is one JSON object whose `type` says what the user did: `{"type": "say", "text": "pack the ball"}`,
`{"type": "confirm"}`, `{"type": "point", "u": 120, "v": 88}` (the object the robot asked about) or with a `name`,
`{"type": "demo", "name": "knock", "steps": [{"u": 200, "v": 90, "height": 0.1}, "close", ...]}` (keypoints clicked
on the camera image, each lifted to 3-D with the depth image and raised `height` metres above the surface seen
there, and gripper events), ... Anything else — an unknown type or field, a missing field, a text too long, a
negative pixel — is refused with one line naming the field (`BadRequest`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, TypeAdapter
from pydantic import ValidationError as PydanticError

MAX_TEXT = 500
"""Longest utterance or correction (the session's own limit)."""
MAX_NAME = 40
MAX_CONDITION = 200
MAX_PIXEL = 10_000
MAX_DEMO_STEPS = 64
MAX_HEIGHT = 0.5
"""Highest a demonstration's keypoint may be raised above the surface clicked (m)."""
MAX_JSON_BODY = 16 * 1024
"""Largest JSON body (HTTP) or websocket message accepted, in bytes."""
MAX_WAV_BODY = 4 * 1024 * 1024
"""Largest uploaded recording, in bytes (30 s of 16-bit mono audio at 48 kHz is 2.9 MB)."""

Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME, pattern=r"^\s*[A-Za-z][A-Za-z0-9_ ]*\s*$")]
Pixel = Annotated[int, Field(ge=0, le=MAX_PIXEL)]


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Say(_Action):
    """An utterance (typed, or a confirmed transcript)."""

    type: Literal["say"]
    text: Text


class Confirm(_Action):
    type: Literal["confirm"]


class Cancel(_Action):
    type: Literal["cancel"]


class Correct(_Action):
    """A correction of the plan awaiting confirmation."""

    type: Literal["correct"]
    text: Text


class Teach(_Action):
    """Start teaching a behaviour explicitly."""

    type: Literal["teach"]
    name: Name


class Point(_Action):
    """A click on the camera image: names the object at pixel (u, v) — `name`, or the object the robot asked
    about when `name` is absent."""

    type: Literal["point"]
    u: Pixel
    v: Pixel
    name: Name | None = None


class Keypoint(_Action):
    """A demonstration's waypoint: pixel (u, v) of the camera image, `height` metres above the surface there."""

    u: Pixel
    v: Pixel
    height: Annotated[float, Field(ge=0.0, le=MAX_HEIGHT, allow_inf_nan=False)] = 0.1


class Demo(_Action):
    """A demonstration: keypoints clicked on the camera image and gripper events, in order; it becomes skill
    `name` (`object`: what it is shown on; default the object the robot asked about, else the nearest one)."""

    type: Literal["demo"]
    name: Name
    object: Name | None = None
    steps: Annotated[list[Keypoint | Literal["close", "open"]], Field(min_length=1, max_length=MAX_DEMO_STEPS)]


class Look(_Action):
    """What is at pixel (u, v)? (Nothing is taught.)"""

    type: Literal["look"]
    u: Pixel
    v: Pixel


class Undo(_Action):
    type: Literal["undo"]
    name: Name


class Reset(_Action):
    type: Literal["reset"]


class Check(_Action):
    """Test a plan-language condition in the world now (`'ball' in 'gift_bag'`)."""

    type: Literal["check"]
    condition: Annotated[str, Field(min_length=1, max_length=MAX_CONDITION)]


Action = Annotated[Say | Confirm | Cancel | Correct | Teach | Point | Demo | Look | Undo | Reset | Check,
                   Field(discriminator="type")]


class ActionMessage(RootModel[Action]):
    """One action, as the page sends it."""


_ACTION = TypeAdapter(ActionMessage)


class BadRequest(ValueError):
    """A body that does not fit: `status` is the HTTP status, the message one line."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


def read_action(body: bytes | str) -> Action:
    """An action from a JSON body; BadRequest (one line) when it is not one."""
    if len(body) > MAX_JSON_BODY:
        raise BadRequest(f"message too large: {len(body)} bytes (at most {MAX_JSON_BODY})", 413)
    try:
        return _ACTION.validate_json(body).root
    except PydanticError as err:
        raise BadRequest(one_line(err)) from None


def one_line(err: PydanticError) -> str:
    """The first problem pydantic found, as `field: problem` on one line."""
    first = err.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in first["loc"] if not isinstance(p, int)) or "body"
    if first["type"] == "json_invalid":
        return "body: not valid JSON"
    if first["type"] == "union_tag_invalid":
        return f"type: unknown action (one of {', '.join(TYPES)})"
    if first["type"] == "union_tag_not_found":
        return f"type: missing (one of {', '.join(TYPES)})"
    if first["type"] == "string_pattern_mismatch":
        return f"{_strip_tag(where)}: expected a name (a letter, then letters, digits or '_')"
    return " ".join(f"{_strip_tag(where)}: {first['msg']}".split())


TYPES = ("say", "confirm", "cancel", "correct", "teach", "point", "demo", "look", "undo", "reset", "check")


def _strip_tag(where: str) -> str:
    """`say.text` → `text` (pydantic prefixes a discriminated union's fields with the tag)."""
    head, _, rest = where.partition(".")
    return rest if head in TYPES and rest else where
