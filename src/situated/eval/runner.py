"""The one episode runner: tasks × runs through an episode function into a results store, resumable.

Each system supplies the episode function (`eval.household`, `eval.navigation`, ...); the runner skips the
episodes the store already holds, runs the rest (in worker threads when `jobs > 1`, each worker with its own
episode function, e.g. its own planner) and lets the store append each one as it finishes. Only the calling
thread writes to the store.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..errors import SituatedError
from .episode import Cost, Episode, Task
from .store import ResultsStore

EpisodeFn = Callable[[Any, int], Episode]
"""Runs one episode: (task, run index) -> Episode."""

Progress = Callable[[int, int, Episode | None], None]
"""Called as `on_progress(done, total, episode)`: once at the start (episode None), then after each episode."""


def _timed(fn: EpisodeFn, task: Task, run: int) -> Episode:
    start = time.perf_counter()
    episode = fn(task, run)
    if episode.cost.seconds:
        return episode
    return replace(episode, cost=replace(episode.cost, seconds=time.perf_counter() - start))


def run_episodes(tasks: Sequence[Task], runs: int, make_episode_fn: Callable[[], EpisodeFn], store: ResultsStore, *,
                 jobs: int = 1, on_progress: Progress | None = None) -> list[Episode]:
    """Run every (task, run) that `store` lacks; return the episodes of all of them, task-major per run."""
    if runs < 1 or jobs < 1:
        raise SituatedError(f"runs and jobs must be >= 1 (got {runs}, {jobs})")
    work = [(task, run) for run in range(runs) for task in tasks]
    keys = [(task.task_id, run) for task, run in work]
    if len(set(keys)) != len(keys):
        raise SituatedError("task ids are not unique; cannot tell their episodes apart")
    todo = [(task, run) for task, run in work if (task.task_id, run) not in store]
    done = len(work) - len(todo)
    if on_progress is not None:
        on_progress(done, len(work), None)
    if jobs == 1 or len(todo) <= 1:
        fn = make_episode_fn() if todo else None
        for task, run in todo:
            episode = _timed(fn, task, run)
            store.add(episode)
            done += 1
            if on_progress is not None:
                on_progress(done, len(work), episode)
        return store.select(keys)
    results: queue.Queue[tuple[Episode | None, BaseException | None]] = queue.Queue()
    pending: queue.Queue[tuple[Task, int]] = queue.Queue()
    for item in todo:
        pending.put(item)
    stop = threading.Event()

    def worker() -> None:
        try:
            fn = make_episode_fn()
            while not stop.is_set():
                try:
                    task, run = pending.get_nowait()
                except queue.Empty:
                    return
                results.put((_timed(fn, task, run), None))
        except BaseException as err:  # handed to the writing thread, which re-raises it
            results.put((None, err))

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(min(jobs, len(todo)))]
    for thread in threads:
        thread.start()
    try:
        for _ in range(len(todo)):
            episode, error = results.get()
            if error is not None:
                raise error
            assert episode is not None
            store.add(episode)
            done += 1
            if on_progress is not None:
                on_progress(done, len(work), episode)
    finally:
        stop.set()
    return store.select(keys)


def cost_of(completions: Sequence[Any]) -> Cost:
    """The model cost of some completions (anything with completion_tokens, prompt_tokens and seconds)."""
    return Cost(tokens=sum(c.completion_tokens for c in completions),
                prompt_tokens=sum(c.prompt_tokens for c in completions), calls=len(completions),
                model_seconds=sum(c.seconds for c in completions))
