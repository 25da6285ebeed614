"""StreetEnv: VELMA street navigation with a Gymnasium-like reset/step interface.

An episode follows one instance: reset() places the agent at the route's start (Touchdown: start heading
snapped to the nearest out-edge; Map2seq: already facing the right way, and its first action is a forced
forward), then step(action) applies VELMA's corrected transition rules until the agent stops or the step
limit is reached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ...errors import DataError, SituatedError
from .graph import StreetGraph
from .transitions import State, closest_heading, correct_action, next_state
from .verbalizer import traffic_flow, verbalize
from .visibility import NoVisibility, VisibilitySource

DATASETS = ("map2seq", "touchdown")
MAX_STEPS = 55


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
class StreetStep:
    """Result of one step: the new observation, the action actually executed, and why the episode ended."""

    observation: Observation
    action: str
    terminated: bool
    truncated: bool


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
    ) -> None:
        self.graph = graph
        self.visibility: VisibilitySource = visibility if visibility is not None else NoVisibility()
        self.max_steps = max_steps
        self._instance: NavInstance | None = None
        self._states: list[State] = []
        self._actions: list[str] = []
        self._pano_path: list[str] = []
        self._texts: list[str] = []
        self._done = True

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

    def reset(self, instance: NavInstance) -> Observation:
        """Start an episode; for Map2seq the forced first forward is already taken when this returns."""
        self._instance = instance
        state = start_state(self.graph, instance)
        self._states = [state]
        self._actions = []
        self._pano_path = [state.panoid]
        self._done = False
        self._texts = [self._observe().text]
        if instance.forced_first_forward:
            # As in the released code the forced move is not corrected: it leaves even a dead-end start.
            return self._apply("forward").observation
        return self._observe()

    def step(self, action: str) -> StreetStep:
        """Correct and apply one action word; the episode ends on stop or after the step limit."""
        if self._done:
            raise SituatedError("the episode is over: call reset(instance) to start another")
        return self._apply(correct_action(self.graph, self.state.panoid, action, len(self._pano_path) == 1))

    def _apply(self, executed: str) -> StreetStep:
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
        observation = self._observe()
        self._texts.append(observation.text)
        return StreetStep(observation, executed, terminated, truncated)

    @property
    def trajectory(self) -> Trajectory:
        return Trajectory(
            tuple(self._states), tuple(self._actions), tuple(self._pano_path), tuple(self._texts)
        )

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
        return Observation(
            step=step,
            panoid=state.panoid,
            heading=state.heading,
            path_length=len(self._pano_path),
            text=verbalize(intersection, landmarks, traffic),
            intersection=intersection,
            landmarks=landmarks,
            traffic=traffic,
            done=self._done,
        )
