"""Building household planners from command-line style options (one per worker)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..actions import PROGPROMPT_SPACE
from ..errors import SituatedError
from ..llm.base import LLM
from .base import Planner
from .langprompt import LangPromptPlanner
from .progprompt import ProgPromptPlanner
from .progprompt_prompt import ABLATIONS
from .retrieval import make_retriever


def household_planner_factory(llm: LLM, examples: Mapping[str, str], *, n_examples: int = 3,
                              ablation: str = "full", grammar: bool = True, langprompt: bool = False,
                              seed: int = 0, max_repairs: int = 0, retriever: str | None = None,
                              goals: bool = False, plan_tokens: int | None = None,
                              scene_examples: bool = False, preconditions: bool = False,
                              keep_steps: bool = False, room_walks: bool = False,
                              open_first: bool = False, skip_done: bool = False) -> Callable[[], Planner]:
    """A factory of ProgPrompt (or LangPrompt) planners; builds one at once so bad settings fail early. With
    `retriever` (minilm or bm25) the examples are the `n_examples` plans nearest to each task, the retriever
    loaded once and shared by the planners. `scene_examples`: examples naming fewer objects the scene lacks first;
    `preconditions`: a failing call's missing steps are searched for before the model rewrites it; `keep_steps`:
    only where the model's rewrite would give the task step up; `room_walks`: a walk to the room is written
    before each move into another room; `open_first`: the search only for calls that fail for want of
    something opened; `skip_done`: a call whose effect already holds is dropped, the rest kept as written."""
    if ablation not in ABLATIONS:
        raise SituatedError(f"--ablation must be one of {', '.join(ABLATIONS)}, not {ablation!r}")
    if max_repairs < 0:
        raise SituatedError(f"--repairs must be >= 0, got {max_repairs}")

    chosen = make_retriever(retriever) if retriever is not None else None

    def make() -> Planner:
        if langprompt:
            return LangPromptPlanner(llm, PROGPROMPT_SPACE, examples, n_examples=n_examples, seed=seed)
        return ProgPromptPlanner(llm, PROGPROMPT_SPACE, examples, n_examples=n_examples, seed=seed,
                                 ablation=ablation, constrained=grammar, max_repairs=max_repairs,
                                 retriever=chosen, state_goals=goals, max_plan_tokens=plan_tokens,
                                 scene_examples=scene_examples, preconditions=preconditions,
                                 keep_steps=keep_steps, room_walks=room_walks, open_first=open_first,
                                 skip_done=skip_done)

    make()
    return make
