"""StreetEnv: VELMA street navigation with a Gymnasium-like reset/step interface.

An episode follows one instance: reset() places the agent at the route's start (Touchdown: start heading
snapped to the nearest out-edge; Map2seq: already facing the right way, and its first action is a forced
forward), then step(Call(word)) applies VELMA's corrected transition rules until the agent stops or the step
limit is reached. It implements the Environment protocol step-wise: each StepResult carries the verbalized
observation, whether the episode is over and the action the rules actually executed; the structured
observation is `env.observation`, and `env.correct(word)` tells an agent what a word would become here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ...actions import STREET_SPACE
from ...errors import DataError, SituatedError
from ...program import Call, Condition
from ..base import StepResult
from ..checked import CallWording, checked_step
from .graph import StreetGraph
from .transitions import State, closest_heading, correct_action, next_state
from .verbalizer import traffic_flow, verbalize
from .visibility import NoVisibility, VisibilitySource

DATASETS = ("map2seq", "touchdown")
TURNS = frozenset({"left", "right", "turn_around"})
MAX_STEPS = 55
STREET_WORDING = CallWording(unknown=None, arity="{action} takes no arguments, got {got}")
"""Every street action takes no arguments; an unknown word is corrected to forward (`correct_action`)."""


@dataclass(frozen=True)
class NavInstance:
    """One navigation task: a gold route of panoramas, a start heading and the instructions."""

    id: str
    dataset: str
    route: tuple[str, ...]
    start_heading: float
    instruction: str
    landmarks: tuple[str, ...] = ()

    @property
    def task_id(self) -> str:
        return self.id

    @property
    def forced_first_forward(self) -> bool:
        """Map2seq agents start facing the right way and always move forward first."""
        return self.dataset == "map2seq"


@dataclass(frozen=True)
class Observation:
    """What the agent perceives after `step` actions, with `text` the verbalized form ("" when nothing)."""

    step: int
    panoid: str
    heading: int
    path_length: int
    text: str
    intersection: int | None = None
    landmarks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    traffic: str | None = None
    done: bool = False


@dataclass(frozen=True)
class Trajectory:
    """Everything one episode did: states[i] is the state after actions[:i]; pano_path lists each move."""

    states: tuple[State, ...]
    actions: tuple[str, ...]
    pano_path: tuple[str, ...]
    observations: tuple[str, ...]


def start_state(graph: StreetGraph, instance: NavInstance) -> State:
    """The initial state: the route's first panorama, the start heading snapped to the nearest out-edge."""
    if not instance.route:
        raise DataError(f"instance {instance.id}: empty route")
    for panoid in instance.route:
        if panoid not in graph:
            raise DataError(f"instance {instance.id}: route panorama {panoid} is not in the graph")
    start = instance.route[0]
    out = graph.out_edges(start)
    heading = closest_heading(instance.start_heading, out) if out else round(instance.start_heading) % 360
    return State(start, heading)


class StreetEnv:
    """A street graph with VELMA's rules; one episode at a time.

    The agent is asked for another action while it has taken at most `max_steps` actions (the released loop),
    so an episode holds at most max_steps + 1 actions, the forced Map2seq forward included. `max_steps=None`
    lifts the limit (gold replays: one Touchdown dev route needs 68 actions).
    """

    def __init__(
        self,
        graph: StreetGraph,
        visibility: VisibilitySource | None = None,
        max_steps: int | None = MAX_STEPS,
        *,
        count_intersections: bool = False,
    ) -> None:
        """`count_intersections` (beyond VELMA) adds to each intersection sentence how many intersections the
        agent has reached since it last turned (or since the start); one it starts at is not counted."""
        self.graph = graph
        self.count_intersections = count_intersections
        self.visibility: VisibilitySource = visibility if visibility is not None else NoVisibility()
        self.max_steps = max_steps
        self._instance: NavInstance | None = None
        self._states: list[State] = []
        self._actions: list[str] = []
        self._pano_path: list[str] = []
        self._texts: list[str] = []
        self._done = True
        self._observation = Observation(0, "", 0, 0, "")

    @property
    def instance(self) -> NavInstance:
        if self._instance is None:
            raise SituatedError("no episode: call reset(instance) first")
        return self._instance

    @property
    def state(self) -> State:
        return self._states[-1]

    @property
    def done(self) -> bool:
        return self._done

    @property
    def observation(self) -> Observation:
        """What the agent perceives now (structured; `.text` is what a language model is shown)."""
        return self._observation

    def reset(self, task: NavInstance | None = None) -> str:
        """Start an episode of `task` (an instance; None repeats the last one); returns the observation text.
        For Map2seq the forced first forward is already taken when this returns."""
        instance = task if task is not None else self.instance
        self._instance = instance
        state = start_state(self.graph, instance)
        self._states = [state]
        self._actions = []
        self._pano_path = [state.panoid]
        self._done = False
        self._observation = self._observe()
        self._texts = [self._observation.text]
        if instance.forced_first_forward:
            # As in the released code the forced move is not corrected: it leaves even a dead-end start.
            self._apply("forward")
        return self._observation.text

    def correct(self, word: str) -> str:
        """The action VELMA's rules would execute for `word` here (left on a plain street is forward, ...)."""
        return correct_action(self.graph, self.state.panoid, word, len(self._pano_path) == 1)

    def step(self, call: Call) -> StepResult:
        """Correct and apply one action (a call without arguments: `Call("left")`); the episode ends on stop
        or after the step limit. A call with arguments is refused (`checked_step`)."""
        if self._done:
            raise SituatedError("the episode is over: call reset(instance) to start another")
        return checked_step(call, STREET_SPACE, STREET_WORDING,
                            lambda checked: self._apply(self.correct(checked.action), checked.action))

    def _apply(self, executed: str, asked: str | None = None) -> StepResult:
        state = self.state
        prev = self._states[-2].panoid if len(self._states) > 1 else None
        new = next_state(self.graph, state, prev, executed)
        self._states.append(new)
        self._actions.append(executed)
        if new.panoid != state.panoid:
            self._pano_path.append(new.panoid)
        terminated = executed == "stop"
        limit = self.max_steps
        truncated = not terminated and limit is not None and len(self._actions) > limit
        self._done = terminated or truncated
        self._observation = self._observe()
        self._texts.append(self._observation.text)
        note = f"{asked} became {executed} here" if asked is not None and executed != asked else ""
        if truncated:
            note = (note + "; " if note else "") + f"step limit of {limit} reached"
        return StepResult(True, note, (f"at {new.panoid} facing {new.heading}",), self._observation.text,
                          self._done, executed)

    # ------------------------------------------------------------------ the rest of the Environment protocol
    def holds(self, condition: Condition) -> bool:
        """`'close' to PANOID`: the agent is at that panorama or next to it; `PANOID is 'stopped'`: the episode
        ended there. Other conditions do not apply to streets (False)."""
        at = self.state.panoid
        if condition.kind == "close" and condition.args:
            target = str(condition.args[0])
            held = at == target or target in self.graph.adjacent(at)
        elif condition.kind == "state" and len(condition.args) == 2 and condition.args[1] == "stopped":
            held = self._done and at == str(condition.args[0])
        else:
            return False
        return held != condition.negated

    def describe(self, near: str | None = None) -> str:
        return self._observation.text

    def snapshot(self) -> dict:
        return {"panoid": self.state.panoid, "heading": self.state.heading, "step": len(self._actions),
                "path": list(self._pano_path), "done": self._done}

    @property
    def trajectory(self) -> Trajectory:
        return Trajectory(
            tuple(self._states), tuple(self._actions), tuple(self._pano_path), tuple(self._texts)
        )

    def _arrived_at_intersection(self, index: int) -> bool:
        """Whether state `index` is an arrival at an intersection (moved there, more than two streets)."""
        panoid = self._states[index].panoid
        return (index > 0 and self._states[index - 1].panoid != panoid
                and self.graph.degree(panoid) > 2)

    def _turned(self) -> bool:
        return any(a in TURNS for a in self._actions)

    def _intersections_since_turn(self) -> int:
        """Intersections arrived at since the last turn (left, right, turn_around), this one included."""
        count = 0
        for index in range(len(self._states) - 1, 0, -1):
            if self._actions[index - 1] in TURNS:
                break
            count += self._arrived_at_intersection(index)
        return count

    def _observe(self) -> Observation:
        step = len(self._actions)
        state = self.state
        prev = self._states[-2].panoid if len(self._states) > 1 else None
        degree = self.graph.degree(state.panoid)
        intersection = degree if degree > 2 and state.panoid != prev else None
        landmarks = dict(self.visibility.visible(state.panoid, state.heading, self.instance.landmarks))
        traffic = None
        if step == 0 and self.instance.dataset == "touchdown":
            traffic = traffic_flow(self.graph, state.panoid, state.heading)
        count = self._intersections_since_turn() if intersection is not None and self.count_intersections else None
        count = count or None  # the start itself is not counted (nor said to be the 0th)
        return Observation(
            step=step,
            panoid=state.panoid,
            heading=state.heading,
            path_length=len(self._pano_path),
            text=verbalize(intersection, landmarks, traffic, count=count, turned=self._turned()),
            intersection=intersection,
            landmarks=landmarks,
            traffic=traffic,
            done=self._done,
        )
