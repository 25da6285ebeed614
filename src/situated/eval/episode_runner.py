"""The one episode runner: tasks × runs through an executor into a results store, resumable.

Each system supplies its episodes as a job (its `System.job`, e.g. `eval.systems.household_episodes.HouseholdJob`: a
picklable description whose `build()` makes the episode function) or, for in-process runs, as a factory of
episode functions. The runner skips the episodes the store already holds, hands the rest to an executor
(`eval.executors`: this process, threads, worker processes or Ray) and adds each episode to the store as it
arrives. Only the calling thread writes to the store, so however the episodes are run, retried or resumed,
each is written exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import SituatedError
from .episode import Cost, Episode, Task
from .executors import EpisodeFn, EpisodeJob, Executor, FactoryJob, SequentialExecutor, ThreadExecutor
from .store import ResultsStore

__all__ = ["EpisodeFn", "Progress", "cost_of", "run_episodes"]

Progress = Callable[[int, int, Episode | None], None]
"""Called as `on_progress(done, total, episode)`: once at the start (episode None), then after each episode."""


def run_episodes(tasks: Sequence[Task], runs: int, episodes: EpisodeJob | Callable[[], EpisodeFn],
                 store: ResultsStore, *, jobs: int = 1, executor: Executor | None = None,
                 on_progress: Progress | None = None) -> list[Episode]:
    """Run every (task, run) that `store` lacks, each task's runs one after the other; return the episodes of
    all of them, task-major per run.

    `episodes` is a job (anything with `build()`) or a factory of episode functions (one per worker). Without
    `executor`, `jobs` > 1 runs that many threads of this process, else one after the other.
    """
    if runs < 1 or jobs < 1:
        raise SituatedError(f"runs and jobs must be >= 1 (got {runs}, {jobs})")
    job = episodes if isinstance(episodes, EpisodeJob) else FactoryJob(episodes)
    if executor is None:
        executor = SequentialExecutor() if jobs == 1 else ThreadExecutor(jobs)
    work = [(task, run) for run in range(runs) for task in tasks]
    keys = [(task.task_id, run) for task, run in work]
    if len(set(keys)) != len(keys):
        raise SituatedError("task ids are not unique; cannot tell their episodes apart")
    # computed task-major: the runs of a task follow each other and share its prompt in the model's prefix cache
    todo = [(task, run) for task in tasks for run in range(runs) if (task.task_id, run) not in store]
    wanted = {(task.task_id, run) for task, run in todo}
    done = len(work) - len(todo)
    if on_progress is not None:
        on_progress(done, len(work), None)
    for episode in executor.run(job, todo):
        if episode.key not in wanted:
            raise SituatedError(f"the executor returned episode {episode.task!r} run {episode.run}, "
                                "which was not asked for")
        if episode.key in store:
            continue  # a second copy of a rerun episode: the first one stays
        store.add(episode)
        done += 1
        if on_progress is not None:
            on_progress(done, len(work), episode)
    missing = [key for key in wanted if key not in store]
    if missing:
        raise SituatedError(f"{len(missing)} episodes did not come back from the executor, e.g. "
                            f"{missing[0][0]!r} run {missing[0][1]}")
    return store.select(keys)


def cost_of(completions: Sequence[Any]) -> Cost:
    """The model cost of some completions (anything with completion_tokens, prompt_tokens and seconds)."""
    return Cost(tokens=sum(c.completion_tokens for c in completions),
                prompt_tokens=sum(c.prompt_tokens for c in completions), calls=len(completions),
                model_seconds=sum(c.seconds for c in completions))
