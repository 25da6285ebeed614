"""A street-navigation agent that reads the directions once and then counts: the model turns the directions into a
short route, and the agent walks it by counting intersections and steps (no model call per step).

A route is a list of legs, each an action and where to take it, counted since the last turn (or the start)::

    left at intersection 1
    right at intersection 3
    stop 4 steps after the turn

"at intersection N": on arriving at the N-th intersection; "K steps after intersection N": K forward moves
after it ("after the turn" / "after the start" when no intersection was passed since). A leg is taken as soon as
the walk has got that far, so an overcounted block still ends at the next intersection instead of never.

Example routes are derived from gold routes of the training area by replaying their gold actions through the
same counting (`route_example`), so the prompt's examples, the derivation and the walk share one definition of
"intersection N" and "K steps"; a derived route walked again reproduces its gold route exactly (tested). The
model writes a route under a grammar (only those line shapes, at most `MAX_TURNS` turns, a final stop); nothing it
writes is executed: the agent reads numbers and action words from the parsed lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..envs.streets.env import TURNS, NavInstance, Observation, StreetEnv
from ..envs.streets.graph import StreetGraph
from ..envs.streets.oracle import gold_actions
from ..errors import DataError, SituatedError
from ..llm.base import LLM
from ..program import Call
from .base import ModelUsage
from .direction_words import turn_counts, turn_words
from .retrieval import Retriever, nearest

MAX_TURNS = 8
"""Turn legs a model-written route may have before its stop (gold training routes: at most 6)."""
MAX_COUNT = 59
"""The largest intersection or step count a route line may say (an episode has at most 55 steps)."""
TASK_LINE = (
    "Turn walking directions into a route. Count the intersections you reach after each turn (or after the "
    "start); turns happen at intersections. The last line says where to stop: at an intersection, or a number "
    "of steps after an intersection, after the last turn or after the start."
)
_LINE = re.compile(
    r"^(?P<action>left|right|turn_around|stop) (?:at intersection (?P<at>\d+)|at the start|"
    r"(?P<steps>\d+) steps? after (?:intersection (?P<after>\d+)|the turn|the start))$"
)


@dataclass(frozen=True)
class Leg:
    """Take `action` once `intersections` intersections were reached since the last turn (or the start), and
    then `steps` forward moves."""

    action: str
    intersections: int = 0
    steps: int = 0

    def text(self, turned: bool) -> str:
        """The route line; `turned`: an earlier leg turned (so a count of 0 reads "after the turn")."""
        if self.intersections and not self.steps:
            return f"{self.action} at intersection {self.intersections}"
        if not self.intersections and not self.steps:
            return f"{self.action} at the start" if not turned else f"{self.action} 0 steps after the turn"
        where = f"intersection {self.intersections}" if self.intersections else "the turn" if turned else "the start"
        return f"{self.action} {self.steps} step{'s' if self.steps != 1 else ''} after {where}"


def render_route(legs: Sequence[Leg]) -> str:
    """The route as the prompt shows it: one line per leg."""
    lines = [leg.text(any(earlier.action in TURNS for earlier in legs[:i])) for i, leg in enumerate(legs)]
    return "".join(line + "\n" for line in lines)


def parse_route(text: str, *, strict: bool = True) -> tuple[Leg, ...]:
    """The legs of a written route, up to and including the first stop. `strict`: DataError naming the first
    line that is not a route line; otherwise such lines are passed over (a server model that ignores the
    grammar may add prose). A route without a stop line is returned as far as it goes."""
    legs: list[Leg] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = " ".join(raw.split())
        if not line:
            continue
        match = _LINE.match(line)
        if match is None:
            if strict:
                raise DataError(f"route line {number}: not a route line: {line[:60]!r}")
            continue
        count = match["at"] or match["after"] or "0"
        legs.append(Leg(match["action"], min(int(count), MAX_COUNT), min(int(match["steps"] or 0), MAX_COUNT)))
        if legs[-1].action == "stop":
            break
    return tuple(legs)


def route_grammar(max_turns: int = MAX_TURNS, turns: Sequence[str] | None = None,
                  counts: Sequence[int] | None = None) -> str:
    """GBNF for a route: up to `max_turns` turn lines, then one stop line; counts 0-59. `turns`: the left/right
    turns in this order (each may follow a turn_around line), so the model writes only where they happen;
    `counts` (one per turn): each turn is also fixed "at intersection N", so the model writes only the stop."""
    if turns:
        if any(t not in ("left", "right") for t in turns) or len(turns) > max_turns:
            raise ValueError(f"turns must be at most {max_turns} of left/right, got {list(turns)}")
        if counts is not None and (len(counts) != len(turns) or not all(0 < n <= MAX_COUNT for n in counts)):
            raise ValueError(f"counts must be one of 1-{MAX_COUNT} per turn, got {list(counts)}")
        places = [f'"at intersection {n}"' for n in counts] if counts is not None else ["place"] * len(turns)
        fixed = " ".join(f'around? "{t} " {where} "\\n"' for t, where in zip(turns, places, strict=True))
        head = [f'root ::= {fixed} around? "stop " place "\\n"', 'around ::= "turn_around " place "\\n"']
    else:
        head = [f'root ::= turn{{0,{max_turns}}} "stop " place "\\n"',
                'turn ::= ("left" | "right" | "turn_around") " " place "\\n"']
    return "\n".join((
        *head,
        'place ::= "at intersection " count | "at the start" | count " step" "s"? " after " anchor',
        'anchor ::= "intersection " count | "the turn" | "the start"',
        'count ::= [0-9] | [1-5] [0-9]',
    ))


class RouteTracker:
    """How far the walk has got since the last turn (or the start): intersections reached, and forward moves
    since the last of them (or since the turn)."""

    def __init__(self) -> None:
        self.intersections = 0
        self.steps = 0

    def observe(self, observation: Observation, last_action: str) -> None:
        """Count what the last executed action did: arrived at an intersection, or moved one step on."""
        if observation.intersection is not None and observation.step > 0:
            self.intersections += 1
            self.steps = 0
        elif last_action == "forward":
            self.steps += 1

    def reached(self, leg: Leg) -> bool:
        return (self.intersections, self.steps) >= (leg.intersections, leg.steps)

    def restart(self) -> None:
        """A leg's action was taken: counting starts again."""
        self.intersections = self.steps = 0


@dataclass(frozen=True)
class RouteExample:
    """Directions and the route their gold path walks (derived by `route_example`)."""

    id: str
    instruction: str
    legs: tuple[Leg, ...]


def route_example(graph: StreetGraph, instance: NavInstance) -> RouteExample:
    """The route of `instance`'s gold path: its gold actions replayed and counted as the agent counts (DataError
    when they do not end with stop)."""
    env = StreetEnv(graph, None, max_steps=None)
    env.reset(instance)
    tracker = RouteTracker()
    legs: list[Leg] = []
    last = env.trajectory.actions[-1] if env.trajectory.actions else ""
    for action in gold_actions(graph, instance)[len(env.trajectory.actions):]:
        tracker.observe(env.observation, last)
        if action != "forward":
            legs.append(Leg(action, tracker.intersections, tracker.steps))
            tracker.restart()
        env.step(Call(action))
        last = env.trajectory.actions[-1]
    if not legs or legs[-1].action != "stop":
        raise DataError(f"instance {instance.id}: its gold actions do not end with stop")
    return RouteExample(instance.id, instance.instruction, tuple(legs))


def render_example(directions: str, legs: Sequence[Leg] | None = None) -> str:
    """One directions/route block of the prompt (`legs` None: the open block the model completes)."""
    text = f"Directions: {' '.join(directions.split())}\nRoute:\n"
    return text + (render_route(legs) + "\n" if legs is not None else "")


class RouteAgent:
    """NavAgent: one model call per episode writes the route (after `shots` examples, the nearest to the
    directions when a `retriever` is given, nearest last); then each step is counted, not asked.
    `follow_turn_words`: when the directions name their turns (`turn_words`), the grammar fixes those turns in
    that order and the model writes only where each happens and where to stop; `follow_word_counts` also fixes
    where each happens (`direction_words.turn_counts`), so the model writes only the stop line."""

    def __init__(self, llm: LLM, examples: Sequence[RouteExample], *, shots: int = 5,
                 retriever: Retriever | None = None, max_tokens: int = 160,
                 follow_turn_words: bool = False, follow_word_counts: bool = False) -> None:
        if shots < 0 or (shots and not examples):
            raise SituatedError(f"the route agent needs examples for {shots} shots")
        self.llm = llm
        self.examples = tuple(examples)
        self.shots = shots
        self.retriever = retriever
        self.max_tokens = max_tokens
        self.grammar = route_grammar()
        self.follow_turn_words = follow_turn_words or follow_word_counts
        self.follow_word_counts = follow_word_counts
        self.legs: tuple[Leg, ...] = ()
        self.route_text = ""
        self.usage = ModelUsage()
        self._next = 0
        self._tracker = RouteTracker()
        self._last = ""

    def examples_for(self, instance: NavInstance) -> tuple[RouteExample, ...]:
        """The examples an episode's prompt shows: the first `shots`, or the nearest (nearest last)."""
        pool = [e for e in self.examples if e.id != instance.id]
        if self.retriever is None:
            return tuple(pool[: self.shots])
        by_id = {e.id: e for e in pool}
        chosen = nearest(self.retriever, instance.instruction, {e.id: e.instruction for e in pool}, self.shots)
        return tuple(by_id[i] for i in reversed(chosen))

    def prompt(self, instance: NavInstance) -> str:
        blocks = [render_example(e.instruction, e.legs) for e in self.examples_for(instance)]
        return TASK_LINE + "\n\n" + "".join(blocks) + render_example(instance.instruction)

    def grammar_for(self, instance: NavInstance) -> str:
        """The route grammar of an episode: its turn words fixed when `follow_turn_words` finds 1 to MAX_TURNS."""
        words = turn_words(instance.instruction) if self.follow_turn_words else ()
        if not 0 < len(words) <= MAX_TURNS:
            return self.grammar
        if self.follow_word_counts:
            return route_grammar(turns=words, counts=turn_counts(instance.instruction))
        return route_grammar(turns=words)

    def reset(self, instance: NavInstance) -> None:
        answer = self.llm.complete(self.prompt(instance), stop=("\n\n",), max_tokens=self.max_tokens,
                                   temperature=0.0, grammar=self.grammar_for(instance))
        self.usage.count(answer)
        self.route_text = answer.text
        legs = parse_route(answer.text, strict=False)
        if not legs or legs[-1].action != "stop":  # cut off by max_tokens: stop at the next intersection
            legs = (*legs, Leg("stop", 1, 0))
        self.start(legs, instance)

    def start(self, legs: Sequence[Leg], instance: NavInstance) -> None:
        """Walk `legs` from `instance`'s start (the counting begins again)."""
        self.legs = tuple(legs)
        self._next = 0
        self._tracker = RouteTracker()
        self._last = "forward" if instance.forced_first_forward else ""

    def record(self, executed: str) -> None:
        """The action the environment executed (the runner reports it)."""
        self._last = executed

    def act(self, observation: Observation) -> str:
        self._tracker.observe(observation, self._last)
        leg = self.legs[self._next] if self._next < len(self.legs) else Leg("stop")
        if self._tracker.reached(leg):
            self._next += 1
            self._tracker.restart()
            self._last = leg.action
            return leg.action
        self._last = "forward"
        return "forward"
