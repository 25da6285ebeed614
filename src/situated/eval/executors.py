"""Where an evaluation's episodes run: in this process, in a local process pool, or on a Ray cluster.

An evaluation is described without closures, so that it can travel to other processes and machines:

- an *episode job* (`EpisodeJob`): a picklable value (a `System.job`, e.g. `HouseholdJob`, `NavigationJob` in
  `eval.systems`) whose `build()` makes an episode function `(task, run) -> Episode`. A worker builds it once
  (model, planner, environment) and runs many episodes with it;
- *work items*: `(task, run)` pairs, the tasks sent as data (frozen dataclasses).

An `Executor` takes both and yields finished episodes as they complete, in any order. The calling process (the
driver, `eval.episode_runner.run_episodes`) is the only writer of the results store: it adds each episode as it
arrives, so a rerun episode (its worker died) or a resumed evaluation never writes an episode twice.

Executors:
- `SequentialExecutor`: in this process, one after the other (`--jobs 1`);
- `ThreadExecutor(n)`: n threads of this process, each with its own episode function; with an embedded model
  opened with `ModelSpec(sequences=n)`, their model calls are decoded together, n sequences of one llama.cpp
  context (`llm.llamacpp_batched`);
- `ProcessExecutor(n)`: n worker processes (spawned); a worker that dies is replaced and its episodes rerun;
- `RayExecutor`: one Ray task per episode, retried (`max_retries`) when its worker process dies; each worker
  process builds the job once and keeps it (a process-level cache) for the next episodes of the evaluation.

`choose_executor` maps the command-line options (`--executor local|processes|batched|ray`, `--jobs`,
`--ray-address`) to an executor and the model options its workers need.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import SituatedError
from ..llm.base import LLM
from ..llm.uri import parse_uri
from .episode import Episode, Task

EpisodeFn = Callable[[Any, int], Episode]
"""Runs one episode: (task, run index) -> Episode."""

WorkItem = tuple[Any, int]
"""One episode to run: (task, run index)."""

EXECUTORS: tuple[str, ...] = ("local", "processes", "batched", "ray")


@runtime_checkable
class EpisodeJob(Protocol):
    """A picklable description of an evaluation's episodes; `build()` runs in the worker, once."""

    def build(self) -> EpisodeFn: ...


class Executor(Protocol):
    """Runs `job`'s episodes for `items`; yields each finished episode as it completes (any order)."""

    def run(self, job: EpisodeJob, items: Sequence[WorkItem]) -> Iterator[Episode]: ...


@dataclass(frozen=True)
class FactoryJob:
    """A job from an episode-function factory (a closure): for the in-process executors only."""

    make: Callable[[], EpisodeFn]

    def build(self) -> EpisodeFn:
        return self.make()


def timed(fn: EpisodeFn, task: Task, run: int) -> Episode:
    """`fn(task, run)`, with the wall time filled in when the episode function left it at zero."""
    start = time.perf_counter()
    episode = fn(task, run)
    if episode.cost.seconds:
        return episode
    return replace(episode, cost=replace(episode.cost, seconds=time.perf_counter() - start))


# ---------------------------------------------------------------------------------------------- models in workers
@dataclass(frozen=True)
class ModelSpec:
    """How a worker opens the evaluation's model: URI, server, llama.cpp threads, cassette, batched sequences.

    `sequences > 1` (embedded models only): the process's threads share one llama.cpp context and are decoded
    together (`llm.llamacpp_batched.BatchedLlamaCppLLM`).
    """

    uri: str
    base_url: str | None = None
    threads: int | None = None
    cassette: str | None = None
    cassette_mode: str = "replay"
    sequences: int = 1
    server_limits: tuple[tuple[str, float], ...] = ()
    """A server model's `timeout`/`retries` (from SITUATED_OPENAI_TIMEOUT/_RETRIES where the command runs)."""
    n_ctx: int | None = None
    """An embedded model's context (None: the backend's default)."""
    lora: str | None = None
    """A LoRA adapter (llama.cpp GGUF) applied to an embedded model."""

    @property
    def embedded(self) -> bool:
        return parse_uri(self.uri).embedded

    @property
    def loads_weights(self) -> bool:
        """Whether opening it loads an embedded model (a cassette in replay mode never does)."""
        return self.embedded and not (self.cassette is not None and self.cassette_mode == "replay")

    def open(self) -> LLM:
        """The model, as this worker uses it (embedded weights are loaded once per process)."""
        opts: dict[str, Any] = {}
        if self.embedded and self.threads is not None:
            opts["n_threads"] = self.threads
        if self.embedded and self.n_ctx is not None:
            opts["n_ctx"] = self.n_ctx
        if self.embedded and self.lora is not None:
            opts["lora_path"] = self.lora
        if not self.embedded:
            if self.base_url is not None:
                opts["base_url"] = self.base_url
            opts.update(self.server_limits)
        inner: LLM | str = self.uri
        if self.embedded and self.sequences > 1 and self.loads_weights and self.lora is None:
            from ..llm.llamacpp_batched import BatchedLlamaCppLLM

            inner = BatchedLlamaCppLLM(parse_uri(self.uri).target, sequences=self.sequences, **opts)
            opts = {}
        if self.cassette is not None:
            from ..llm.cassette import wrap

            return wrap(inner, self.cassette, mode=self.cassette_mode, **opts)
        if not isinstance(inner, str):
            return inner
        from ..llm import load

        return load(self.uri, **opts)


# ---------------------------------------------------------------------------------------------- in this process
class SequentialExecutor:
    """In this process, one episode after the other, with one episode function."""

    def run(self, job: EpisodeJob, items: Sequence[WorkItem]) -> Iterator[Episode]:
        if not items:
            return
        fn = job.build()
        for task, run in items:
            yield timed(fn, task, run)


class ThreadExecutor:
    """`jobs` threads of this process, each building its own episode function (its own planner and agent)."""

    def __init__(self, jobs: int) -> None:
        if jobs < 1:
            raise SituatedError(f"jobs must be >= 1, got {jobs}")
        self.jobs = jobs

    def run(self, job: EpisodeJob, items: Sequence[WorkItem]) -> Iterator[Episode]:
        if len(items) <= 1 or self.jobs == 1:
            yield from SequentialExecutor().run(job, items)
            return
        results: queue.Queue[tuple[Episode | None, BaseException | None]] = queue.Queue()
        pending: queue.Queue[WorkItem] = queue.Queue()
        for item in items:
            pending.put(item)
        stop = threading.Event()

        def worker() -> None:
            try:
                fn = job.build()
                while not stop.is_set():
                    try:
                        task, run = pending.get_nowait()
                    except queue.Empty:
                        return
                    results.put((timed(fn, task, run), None))
            except BaseException as err:  # handed to the driving thread, which re-raises it
                results.put((None, err))

        threads = [threading.Thread(target=worker, daemon=True) for _ in range(min(self.jobs, len(items)))]
        for thread in threads:
            thread.start()
        try:
            for _ in range(len(items)):
                episode, error = results.get()
                if error is not None:
                    raise error
                assert episode is not None
                yield episode
        finally:
            stop.set()


# ---------------------------------------------------------------------------------------------- worker processes
_WORKER_JOB: list[tuple[Any, EpisodeFn | None]] = []
"""This worker process's job and its built episode function: the process-level cache of a pool or Ray worker
(the model inside stays loaded between episodes). Holds one job; a different one replaces it."""


def run_in_worker(job: EpisodeJob, task: Task, run: int) -> Episode:
    """Run one episode of `job` in this (worker) process, building the job on first use."""
    if not _WORKER_JOB or _WORKER_JOB[0][0] != job or _WORKER_JOB[0][1] is None:
        _WORKER_JOB[:] = [(job, None)]
        _WORKER_JOB[0] = (job, job.build())
    fn = _WORKER_JOB[0][1]
    assert fn is not None
    return timed(fn, task, run)


def _pool_init(job: EpisodeJob) -> None:
    _WORKER_JOB[:] = [(job, None)]


def _pool_episode(task: Task, run: int) -> Episode:
    return run_in_worker(_WORKER_JOB[0][0], task, run)


def _check_picklable(job: EpisodeJob, where: str) -> None:
    import pickle

    try:
        pickle.dumps(job)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        raise SituatedError(f"this evaluation cannot run {where}: its episode job cannot be sent to another "
                            f"process ({err}); use --executor local") from None


class ProcessExecutor:
    """`jobs` spawned worker processes; each builds the job once (model included) and runs episodes with it.

    A worker that dies (killed, out of memory) breaks the pool: the episodes that had not come back are run again
    in a fresh pool, at most `max_restarts` times.
    """

    def __init__(self, jobs: int, *, max_restarts: int = 3) -> None:
        if jobs < 1:
            raise SituatedError(f"jobs must be >= 1, got {jobs}")
        self.jobs = jobs
        self.max_restarts = max_restarts
        self.restarts = 0

    def run(self, job: EpisodeJob, items: Sequence[WorkItem]) -> Iterator[Episode]:
        if not items:
            return
        _check_picklable(job, "in worker processes")
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        left = list(items)
        while left:
            pool = ProcessPoolExecutor(max_workers=min(self.jobs, len(left)), mp_context=context,
                                       initializer=_pool_init, initargs=(job,))
            futures: dict[Future[Episode], WorkItem] = {}
            clean = False
            try:
                broken = False
                try:
                    for task, run in left:
                        futures[pool.submit(_pool_episode, task, run)] = (task, run)
                except (BrokenProcessPool, OSError):  # a worker died while the pool was starting
                    broken = True
                while futures and not broken:
                    done, _ = wait(futures, return_when=FIRST_COMPLETED)
                    for future in done:
                        item = futures.pop(future)
                        try:
                            episode = future.result()
                        except BrokenProcessPool:
                            futures[future] = item  # not finished: run it again
                            broken = True
                            continue
                        left.remove(item)
                        yield episode
                clean = not broken
                if broken:
                    for future, item in list(futures.items()):  # finished before the pool broke: keep them
                        if future.done() and not future.cancelled() and future.exception() is None:
                            del futures[future]
                            left.remove(item)
                            yield future.result()
                    self.restarts += 1
                    if self.restarts > self.max_restarts:
                        ids = ", ".join(f"{t.task_id} run {r}" for t, r in left[:3])
                        raise SituatedError(f"worker processes died {self.restarts} times; episodes not finished "
                                            f"include {ids}")
            finally:
                if not clean:
                    _stop_pool(pool)
                pool.shutdown(wait=True, cancel_futures=True)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Terminate a pool's workers (after an error or an interrupt: running episodes are abandoned)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.terminate()


# ---------------------------------------------------------------------------------------------- Ray
def _ray_episode(job: EpisodeJob, task: Task, run: int) -> Episode:
    """One Ray task: one episode, in a worker process that keeps the built job for the next ones."""
    return run_in_worker(job, task, run)


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables that are not set yet (Ray reads them, its processes inherit them); restore."""
    added = {k: v for k, v in values.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise SituatedError("--executor ray needs Ray: pip install 'situated[ray]'") from None
    return ray


class RayExecutor:
    """One Ray task per episode, on the cluster at `address` (or `RAY_ADDRESS`), else on a local Ray instance
    started for this evaluation with `jobs` CPUs and shut down after it.

    A task whose worker process dies is retried up to `max_retries` times (Ray reruns it; the driver gets one
    result per episode). Errors raised by an episode are not retried: they end the evaluation as they would
    locally. Each task asks for `cpus` CPUs (the llama.cpp threads of an embedded model). At most `window`
    episodes are in flight at once (default: twice the cluster's CPUs / `cpus`), so that tasks with large scene
    graphs are not all copied into the object store at the start.
    """

    def __init__(self, address: str | None = None, *, jobs: int | None = None, cpus: float = 1,
                 max_retries: int = 3, window: int | None = None, temp_dir: Path | None = None) -> None:
        self.address = address
        self.jobs = jobs
        self.cpus = cpus
        self.max_retries = max_retries
        self.window = window
        self.temp_dir = temp_dir

    def run(self, job: EpisodeJob, items: Sequence[WorkItem]) -> Iterator[Episode]:
        if not items:
            return
        ray = _import_ray()
        _check_picklable(job, "on Ray")
        with _environment({"RAY_USAGE_STATS_ENABLED": "0"}):
            started = self._connect(ray)
            try:
                yield from self._run(ray, job, items)
            finally:
                if started:
                    ray.shutdown()

    def _connect(self, ray: Any) -> bool:
        """Connect to the cluster (True when this call started a local instance that it must shut down)."""
        import logging

        if ray.is_initialized():
            return False  # the caller's own connection (e.g. a local instance it started)
        address = self.address or os.environ.get("RAY_ADDRESS")
        options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
        if address:
            ray.init(address=address, **options)
            return True
        # A local instance for this evaluation only: no token file written to ~/.ray (RAY_AUTH_MODE=disabled;
        # an explicit RAY_AUTH_MODE wins), no dashboard, and workers that import this very `situated`.
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)
        with _environment({"RAY_AUTH_MODE": "disabled"}):
            previous = os.environ.get("PYTHONPATH")
            os.environ["PYTHONPATH"] = path
            try:
                ray.init(num_cpus=self.jobs, include_dashboard=False,
                         _temp_dir=str(self.temp_dir) if self.temp_dir else None, **options)
            finally:
                if previous is None:
                    os.environ.pop("PYTHONPATH", None)
                else:
                    os.environ["PYTHONPATH"] = previous
        return True

    def _run(self, ray: Any, job: EpisodeJob, items: Sequence[WorkItem]) -> Iterator[Episode]:
        from ray.exceptions import RayTaskError

        remote = ray.remote(_ray_episode).options(max_retries=self.max_retries, retry_exceptions=False,
                                                  num_cpus=self.cpus, name="situated-episode")
        window = self.window or max(2, int(2 * ray.cluster_resources().get("CPU", 1) / max(self.cpus, 1e-3)))
        job_ref = ray.put(job)
        left = list(items)
        pending: dict[Any, WorkItem] = {}
        try:
            while left or pending:
                while left and len(pending) < window:
                    task, run = left.pop(0)
                    pending[remote.remote(job_ref, task, run)] = (task, run)
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    task, run = pending.pop(ref)
                    try:
                        yield ray.get(ref)
                    except RayTaskError as err:
                        cause = getattr(err, "cause", None)
                        if isinstance(cause, SituatedError):
                            raise cause from None
                        raise
                    except ray.exceptions.RayError as err:
                        raise SituatedError(f"episode {task.task_id} run {run} failed on Ray after "
                                            f"{self.max_retries} retries: {str(err).splitlines()[0][:200]}") from None
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)


# ---------------------------------------------------------------------------------------------- choosing
def choose_executor(kind: str, jobs: int, model: ModelSpec | None = None, *, ray_address: str | None = None,
                    cpus: int | None = None) -> tuple[Executor, ModelSpec | None]:
    """The executor for `--executor kind --jobs N` and the model options its workers need.

    - `local`, jobs 1: this process, sequentially.
    - `local`, jobs N with a server model (`openai:`): N threads sharing the server.
    - `local`, jobs N otherwise: N worker processes (as `processes`).
    - `processes`: N worker processes whatever the model; an embedded model gets cores / N llama.cpp threads in
      each (at least 1) unless `--threads` says otherwise.
    - `batched` (embedded models): N threads of this process whose model calls are decoded together, N sequences
      of one llama.cpp context, one copy of the weights (`llm.llamacpp_batched`). On the 2-core machine of
      docs/benchmarks.md ("Evaluation throughput") it beat one-at-a-time only while other work competed for the
      cores, and N processes did better on a quiet machine; hence not the default.
    - `ray`: one Ray task per episode on the cluster at `ray_address` (or `RAY_ADDRESS`, else a local instance
      with N CPUs); each task asks for the model's llama.cpp threads (default 1) as CPUs.

    Recording a cassette (`record`/`auto`) from several processes would interleave its lines: refused.
    """
    if kind not in EXECUTORS:
        raise SituatedError(f"--executor must be one of {', '.join(EXECUTORS)}, not {kind!r}")
    if jobs < 1:
        raise SituatedError(f"--jobs must be >= 1, got {jobs}")
    cores = cpus or os.cpu_count() or 1
    records = model is not None and model.cassette is not None and model.cassette_mode != "replay"
    if kind == "local" and jobs == 1:
        return SequentialExecutor(), model
    if kind == "local" and model is not None and not model.embedded:
        return ThreadExecutor(jobs), model
    if kind == "batched":
        if model is None or not model.loads_weights:
            raise SituatedError("--executor batched needs an embedded model whose calls are not replayed "
                                "(--model llamacpp:..., no --cassette-mode replay)")
        return ThreadExecutor(jobs), replace(model, sequences=jobs)
    if records:  # the worker processes would all append to the cassette
        where = "--jobs must be 1" if kind == "local" else f"--executor {kind} cannot be used"
        raise SituatedError(f"{where} to record a cassette (one process writes it): use --executor batched, or "
                            "replay it with --cassette-mode replay")
    if kind in ("local", "processes"):
        if model is not None and model.embedded and model.threads is None:
            model = replace(model, threads=max(1, cores // jobs))
        return ProcessExecutor(jobs), model
    threads = model.threads if model is not None and model.embedded and model.threads else 1
    if model is not None and model.embedded:
        model = replace(model, threads=threads)
    return RayExecutor(ray_address, jobs=jobs, cpus=threads), model
