"""`situated sandbox`: talk to a simulated arm and teach it (Vocal Sandbox), in a terminal or from a script.

`situated sandbox --scene gift_bag --library DB --model URI` is a console: type what you would say; the robot
shows its plan as calls and asks you to confirm (y), cancel (n), correct it (type the correction) or teach
(`teach NAME`). Console commands: `point NAME U V`, `demo NAME [OBJECT] x y z ; ...`, `undo NAME`, `teach NAME`,
`image PATH`, `library`, `api`, `reset`, `metrics`, `help`, `quit`.
`situated sandbox --script FILE ...` runs a `situated-session/1` script unattended (`-` reads it from stdin).
`situated sandbox --web [--host H --port P --token T]` serves the same session as a local web page (`situated.web`);
`--speech` adds spoken input (`listen FILE.wav` in the console, recordings on the page), always confirmed first.
`situated sandbox library --library DB` lists what a library holds; `situated sandbox report DB` prints each
session's measures and draws them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import DataError, SituatedError
from ..sandbox.console import Dialogue
from . import app
from .models import BaseUrlOpt, ThreadsOpt, open_model

sandbox_app = typer.Typer(
    help="Vocal Sandbox: a robot arm you teach by talking (console, scripts, library, report).",
    invoke_without_command=True,
    no_args_is_help=False,
)
app.add_typer(sandbox_app, name="sandbox")

DEFAULT_MODEL = "llamacpp:qwen2.5-coder-1.5b"
LibraryOpt = Annotated[Path, typer.Option("--library", help="The skill library file (created if absent).")]


# -------------------------------------------------------------------------------------------------------------
# Rendering


def reply_lines(reply: Any) -> list[str]:
    """A session reply as plain lines for the terminal."""
    lines = [f"robot: {reply.say}"]
    if reply.taught is not None and reply.taught.kind == "behaviour":
        lines += ["  " + line for line in reply.taught.text.splitlines()]
    if reply.plan is not None and reply.kind == "plan":
        lines.append("plan:")
        lines += ["  " + line for line in reply.plan.text.splitlines()]
        if reply.plan.depth:
            lines.append("which runs:")
            lines += ["  " + line for line in reply.plan.expanded.splitlines()]
        if reply.plan.goal:
            lines.append("so that: " + ", ".join(reply.plan.to_dict()["goal"]))
    if reply.execution is not None:
        for call in reply.execution.calls:
            if not call.ran:
                lines.append(f"  -- {call.call}: not run")
                continue
            indent = "  "
            if call.behaviour:
                lines.append(f"  {call.call}")
                indent = "    "
            for skill in call.skills:
                if skill.ok:
                    changes = f"  ({', '.join(skill.changes)})" if skill.changes else ""
                    lines.append(f"{indent}ok {skill.call}{changes}")
                else:
                    lines.append(f"{indent}FAILED {skill.call}: {skill.reason}")
    return lines


def _say(lines: Iterable[str], out: Callable[[str], None]) -> None:
    for line in lines:
        out(line)


def _print(line: str) -> None:
    print(line, flush=True)


# -------------------------------------------------------------------------------------------------------------
# Console


def run_console(session: Any, read: Callable[[str], str] = input, out: Callable[[str], None] = _print,
                recognizer: Any = None) -> None:
    """The terminal loop: utterances and commands in, replies out, until `quit` or end of input. With a speech
    `recognizer`, `listen FILE.wav` transcribes a recording and, once the user confirms it, uses it as typed."""

    dialogue = Dialogue(session)
    _say(dialogue.greeting(), out)
    while True:
        try:
            text = read(dialogue.prompt()).strip()
        except EOFError:
            out("")
            return
        if not text:
            continue
        try:
            if text.split()[0].lower() == "listen" and len(text.split()) == 2 and text.lower().endswith(".wav"):
                text = listen_lines(session, recognizer, text.split()[1], read, out)
                if not text:
                    continue
            turn = dialogue.respond(text)
            _say(turn.lines, out)
            for reply in turn.replies:
                _say(reply_lines(reply), out)
            if turn.quit:
                return
        except SituatedError as err:
            out(f"error: {' '.join(str(err).split())}")


def listen_lines(session: Any, recognizer: Any, path: str, read: Callable[[str], str],
                 out: Callable[[str], None]) -> str:
    """Transcribe a WAV file, show what was heard and ask before using it: the text to use ('' for none)."""
    from ..sandbox.speech import MAX_WAV_BYTES, api_words

    if recognizer is None:
        out("speech is off: start the console with --speech")
        return ""
    file = Path(path)
    try:
        if file.stat().st_size > MAX_WAV_BYTES:
            raise DataError(f"{path}: too large for one utterance (at most {MAX_WAV_BYTES} bytes)")
        data = file.read_bytes()
    except OSError as err:
        raise DataError(f"{path}: cannot read ({err.strerror or err})") from None
    heard = recognizer.transcribe(data, *api_words(session))
    if not heard.text:
        out(f"heard nothing I know ({heard.engine}, {heard.seconds:.1f} s); type it instead")
        return ""
    out(f'heard: "{heard.text}" ({heard.engine}, {heard.seconds:.1f} s)')
    try:
        answer = read("use it? [y = yes, n = no, or type the right words] ").strip()
    except EOFError:
        return ""
    if answer.lower() in ("y", "yes"):
        return heard.text
    return "" if answer.lower() in ("", "n", "no") else answer


def _demo_steps(steps: Any) -> str:
    """`3 waypoints, close, open`: a demo's waypoint count and its gripper events."""
    events = [s for s in steps if isinstance(s, str)]
    return f"{len(steps) - len(events)} waypoints" + "".join(f", {e}" for e in events)


def _step_lines(step: Any) -> list[str]:
    line = step.line
    if line.kind == "expect":
        return [f"expect {line.text}: {'met' if step.met else 'NOT MET'}"]
    head = {"user": f"you: {line.text}", "reset": "reset", "undo": f"undo {line.name}",
            "point": f"point {line.name} {' '.join(f'{v:g}' for v in line.where)}",
            "demo": f"demo {line.name} ({_demo_steps(line.waypoints)})"}[line.kind]
    out = [f"[{line.number}] {head}"]
    for reply in step.replies:
        out += reply_lines(reply)
    return out


@sandbox_app.callback()
def sandbox_command(
    ctx: typer.Context,
    scene: Annotated[str, typer.Option("--scene", help="Built-in scene (gift_bag, ...) or a scene file.")] = "gift_bag",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the scene's layout.")] = 0,
    library: LibraryOpt = Path("sandbox.db"),
    model: Annotated[str, typer.Option("--model", help="Model URI.")] = DEFAULT_MODEL,
    threads: ThreadsOpt = None,
    base_url: BaseUrlOpt = None,
    cassette: Annotated[Path | None, typer.Option("--cassette", help="Record/replay model calls here.")] = None,
    cassette_mode: Annotated[str, typer.Option("--cassette-mode", help="replay, record or auto.")] = "replay",
    script: Annotated[str | None, typer.Option("--script", help="Run a situated-session/1 script ('-': stdin).")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="Script mode: end with one JSON line of totals.")] = False,
    web: Annotated[bool, typer.Option("--web", help="Serve the session as a local web page instead.")] = False,
    host: Annotated[str, typer.Option("--host", help="Web: address to listen on (other than loopback needs --token)."
                                      )] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Web: port.")] = 8000,
    token: Annotated[str | None, typer.Option("--token", help="Web: required on every request (?token=T).")] = None,
    speech: Annotated[bool, typer.Option("--speech", help="Spoken input: `listen FILE.wav` / recordings on the page."
                                         )] = False,
    asr: Annotated[str | None, typer.Option("--asr", help="Speech engine: pocketsphinx (default), "
                                            "whisper:/path/model.bin, faster-whisper:/path/dir (local files only).")]
    = None,
    demonstrations: Annotated[bool, typer.Option(
        "--demonstrations", help="The robot may ask to be shown a motion it lacks (answered by `demo`).")] = False,
    condition: Annotated[str, typer.Option("--condition", help="teaching, or no-teaching (the study's baseline: "
                                           "nothing can be taught; spell out the skills).")] = "teaching",
) -> None:
    """Talk to the simulated arm (console or --web page), or run a scripted session (--script)."""
    if ctx.invoked_subcommand is not None:
        return
    from ..sandbox.study import one_condition

    recognizer = _front_end(web, script, host, token, speech, asr)
    models = {"model": model, "cassette": cassette, "cassette_mode": cassette_mode, "threads": threads,
              "base_url": base_url, "motions": demonstrations, "condition": one_condition(condition)}
    if web:
        _serve_web(scene, seed, library, models, host, port, token, recognizer)
    else:
        _run_local(scene, seed, library, models, script, as_json, recognizer)


def _front_end(web: bool, script: str | None, host: str, token: str | None, speech: bool,
               asr: str | None) -> Any:
    """Refuse option combinations that cannot work; the speech recognizer, if asked for."""
    if web and script is not None:
        raise DataError("--web serves a live session; it does not run --script")
    if web:
        from ..web.server import check_exposure

        check_exposure(host, token)
    if not (speech or asr):
        return None
    from ..sandbox.speech import open_recognizer

    return open_recognizer(asr or "pocketsphinx")


def _open_llm(models: dict[str, Any]) -> Any:
    return open_model(models["model"], cassette=models["cassette"], cassette_mode=models["cassette_mode"],
                      threads=models["threads"], base_url=models["base_url"], conversation=True)


def _serve_web(scene: str, seed: int, library: Path, models: dict[str, Any], host: str, port: int,
               token: str | None, recognizer: Any) -> None:
    from ..web.server import serve

    def open_session(stack: Any) -> Any:
        from ..envs.tabletop import TabletopEnv
        from ..sandbox import SkillLibrary
        from ..sandbox.session import SandboxSession

        lib = stack.enter_context(SkillLibrary.open(library))
        env = TabletopEnv(scene, seed=seed)
        stack.callback(env.close)
        return stack.enter_context(SandboxSession(env, _open_llm(models), lib, scene=scene, model=models["model"],
                                                  motions=models["motions"], condition=models["condition"]))

    serve(open_session, host=host, port=port, token=token, recognizer=recognizer, announce=_print)


def _run_local(scene: str, seed: int, library: Path, models: dict[str, Any], script: str | None, as_json: bool,
               recognizer: Any) -> None:
    """The console, or a script run unattended."""
    from ..envs.tabletop import TabletopEnv
    from ..sandbox import SkillLibrary
    from ..sandbox.script import iter_script, read_script
    from ..sandbox.session import SandboxSession

    statements: Iterable[Any] | None = None
    if script is not None:
        statements = iter_script(sys.stdin, "<stdin>") if script == "-" else read_script(script)
    with SkillLibrary.open(library) as lib:
        env = TabletopEnv(scene, seed=seed)
        try:
            with SandboxSession(env, _open_llm(models), lib, scene=scene, model=models["model"],
                                motions=models["motions"], condition=models["condition"]) as session:
                if statements is None:
                    run_console(session, recognizer=recognizer)
                else:
                    _run_script(session, statements, as_json)
        finally:
            env.close()


def _run_script(session: Any, statements: Iterable[Any], as_json: bool) -> None:
    from ..sandbox.script import run_script

    for note in session.notes:
        _print(f"note: {note}")
    result = run_script(session, statements, lambda step: _say(_step_lines(step), _print))
    metrics = session.metrics()
    _print(f"{result.met}/{result.expectations} expectations met; {result.utterances} utterances, "
           f"{result.confirmations} plans run, {result.skill_failures} skill failures, taught "
           f"{', '.join(result.taught) or 'nothing'}; {metrics.model_calls} model calls, "
           f"{metrics.prompt_tokens + metrics.completion_tokens} tokens, "
           f"{metrics.model_seconds:.1f} s in the model")
    for unmet in result.unmet:
        _print(f"not met: {unmet}")
    if as_json:
        _print(json.dumps(result.to_dict() | {
            "model_calls": metrics.model_calls, "prompt_tokens": metrics.prompt_tokens,
            "completion_tokens": metrics.completion_tokens, "model_seconds": metrics.model_seconds,
            "seconds": metrics.seconds}))


# `sandbox library` (list, export, import) lives in cli/sandbox_library.py.


REPORT_ROWS = ("utterances", "supervision", "confirmations", "corrections", "cancellations", "teaching",
               "behaviours_taught", "behaviour_calls", "skills_per_behaviour", "max_depth", "skills", "skill_failures",
               "met", "expectations", "model_calls", "prompt_tokens", "completion_tokens", "model_seconds", "seconds")


@sandbox_app.command("report")
def report_command(
    library: Annotated[Path, typer.Argument(help="The skill library file.")],
    out: Annotated[Path | None, typer.Option("--out", help="Draw the measures per session into this PNG.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line: the measures per session.")]
    = False,
) -> None:
    """Each session's measures (supervision, teaching, behaviour complexity, skill failures, time)."""
    from rich.console import Console
    from rich.table import Table

    from ..sandbox import SkillLibrary
    from ..sandbox.metrics import session_metrics

    if not library.exists():
        raise DataError(f"{library}: no such library file")
    with SkillLibrary.open(library) as lib:
        rows = [session_metrics(s, lib.events(s.id)) for s in lib.sessions()]
    console = Console(highlight=False)
    for row in rows:
        console.print(f"session {row.session}: scene {row.scene}, model {row.model}")
    table = Table(title=f"sessions in {library}")
    table.add_column("measure")
    for row in rows:
        table.add_column(f"session {row.session}", justify="right")
    data = [row.to_dict() for row in rows]
    for key in REPORT_ROWS:
        table.add_row(key.replace("_", " "), *(f"{d[key]:.1f}" if isinstance(d[key], float) else str(d[key])
                                              for d in data))
    console.print(table)
    if out is not None:
        from ..sandbox.study_figure import draw_report

        _print(f"wrote {draw_report(rows, out)}")
    if as_json:
        _print(json.dumps([r.to_dict() for r in rows]))


from . import eval_sandbox as _eval_sandbox  # noqa: E402,F401  (registers `situated eval sandbox`)
