"""Training a LoRA adapter on navigation traces (VELMA-FT and VELMA-RBL), resumable, with checkpoint selection.

Settings follow VELMA's appendix: LoRA r 8, alpha 16, dropout 0.05 on q_proj/v_proj; AdamW lr 3e-4 with a 0.1
warmup and linear decay; batches of 16 routes (gradients accumulated route by route); loss only on action tokens
(`tokens.encode`). VELMA-RBL: each epoch, each route is walked by the model itself with probability `mix`
(lambda, 0.5) and relabelled by the oracle (`traces.student_trace`), otherwise teacher-forced.

Selection: `held` training-area routes are set aside (never trained on); before training and after each epoch the
adapter's next-action accuracy (teacher-forced, greedy over the five actions) and TC (the model walks alone) on
them are measured, and the epoch with the best TC (then accuracy) is the adapter written to `OUT/adapter/` (PEFT)
and `OUT/adapter.gguf` (llama.cpp). After every optimizer step `OUT/checkpoint/` holds the adapter, optimizer,
schedule and position, so an interrupted run started again with the same command goes on from there.
"""

from __future__ import annotations

import inspect
import json
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import files
from ..envs.streets.env import MAX_STEPS, NavInstance
from ..errors import DataError, SituatedError
from ..eval.store import fingerprint
from .base import BaseModel
from .lora_gguf import export_lora_gguf
from .tokens import IGNORE, Encoded, encode
from .traces import Trace, TrainingRoutes, student_trace, teacher_trace, walk

METHODS = ("ft", "rbl")
ACTIONS = ("forward", "left", "right", "turn_around", "stop")
RECORD_FORMAT = "situated-lora/1"


@dataclass(frozen=True)
class Settings:
    """What a training run does (recorded beside the adapter; a resumed run must have the same)."""

    method: str = "ft"
    epochs: int = 1
    lr: float = 3e-4
    batch: int = 16
    warmup: float = 0.1
    rank: int = 8
    alpha: int = 16
    dropout: float = 0.05
    target_modules: tuple[str, ...] = ("q_proj", "v_proj")
    mix: float = 0.5
    """VELMA-RBL's lambda: the chance that the model walks a route itself."""
    held: int = 4
    """Training-area routes set aside for selection (next-action accuracy, TC)."""
    limit: int | None = None
    seed: int = 0
    max_steps: int = MAX_STEPS

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise SituatedError(f"--method must be one of {', '.join(METHODS)}, not {self.method!r}")
        for name, value, least in (("--epochs", self.epochs, 1), ("--batch", self.batch, 1), ("--held", self.held, 1),
                                   ("--limit", self.limit or 1, 1)):
            if value < least:
                raise SituatedError(f"{name} must be at least {least}, got {value}")
        if not (0.0 < self.lr < 1.0 and math.isfinite(self.lr)):
            raise SituatedError(f"--lr must lie in (0, 1), got {self.lr}")
        if not 0.0 <= self.mix <= 1.0:
            raise SituatedError(f"--mix must lie in [0, 1], got {self.mix}")


@dataclass
class Evaluation:
    """The adapter after `epoch` epochs (0: the base) on the held-out routes."""

    epoch: int
    accuracy: float
    """Next-action accuracy in percent (teacher-forced, greedy over the five actions)."""
    tc: float
    """Task completion in percent (the model walks alone)."""
    decisions: int
    routes: int


@dataclass
class Progress:
    """Where a run is: epochs finished, routes done in the current epoch, the losses so far, the evaluations."""

    epoch: int = 0
    done: int = 0
    losses: list[dict[str, Any]] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "done": self.done, "losses": self.losses, "seconds": round(self.seconds, 1),
                "evaluations": [asdict(e) for e in self.evaluations]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Progress:
        return cls(int(data["epoch"]), int(data["done"]), list(data["losses"]),
                   [Evaluation(**e) for e in data["evaluations"]], float(data.get("seconds", 0.0)))


Report = Callable[[str, int, int, float | None], None]
"""Called as `report(phase, done, total, loss)` while a run goes on ("evaluating", "training")."""


def split_routes(routes: TrainingRoutes, settings: Settings) -> tuple[list[NavInstance], list[NavInstance]]:
    """(training routes, held-out routes): `held` routes drawn by `seed` are set aside; `limit` cuts the rest."""
    order = list(routes.instances)
    random.Random(settings.seed).shuffle(order)
    if len(order) <= settings.held:
        raise DataError(f"{len(order)} training-area routes: too few to hold out {settings.held} and train")
    held, train = order[: settings.held], order[settings.held:]
    return train[: settings.limit] if settings.limit else train, held


class TorchPolicy:
    """The model as a navigation policy: the likeliest of the five actions by its first token (the decoding
    grammar's greedy choice), reusing the KV cache while each prompt extends the last."""

    def __init__(self, model: Any, tokenize: Callable[[str], list[int]]) -> None:
        self.model = model
        self.tokenize = tokenize
        self.first = {word: tokenize(f" {word}")[0] for word in ACTIONS}
        self._text = ""
        self._cache: Any = None
        forward = type(model.get_base_model() if hasattr(model, "get_base_model") else model).forward
        self._cache_arg = "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"

    def __call__(self, prompt: str) -> str:
        import torch
        from transformers import DynamicCache

        if self._cache is None or not prompt.startswith(self._text):
            self._text, self._cache = "", DynamicCache()
        ids = self.tokenize(prompt[len(self._text):])
        with torch.no_grad():  # the cache is filled in place
            out = self.model(input_ids=torch.tensor([ids], device=self.model.device), use_cache=True, logits_to_keep=1,
                             **{self._cache_arg: self._cache})
        self._text = prompt
        logits = out.logits[0, -1]
        return max(ACTIONS, key=lambda word: float(logits[self.first[word]]))


def route_loss(model: Any, encoded: Encoded) -> Any:
    """Mean cross-entropy of the learned tokens of one encoded trace (logits only where they are needed)."""
    import torch
    import torch.nn.functional as F

    positions = [i - 1 for i, label in enumerate(encoded.labels) if label != IGNORE and i > 0]
    if not positions:
        raise DataError(f"route {encoded.id}: nothing to learn")
    device = model.device
    targets = torch.tensor([encoded.labels[i + 1] for i in positions], device=device)
    out = model(input_ids=torch.tensor([encoded.ids], device=device),
                logits_to_keep=torch.tensor(positions, device=device), use_cache=False)
    return F.cross_entropy(out.logits[0].float(), targets)


def next_action_accuracy(model: Any, tokenize: Callable[[str], list[int]], traces: Sequence[Trace]) -> tuple[int, int]:
    """(correct, decisions): how often the likeliest action's first token is the gold one, teacher-forced."""
    import torch

    first = [tokenize(f" {word}")[0] for word in ACTIONS]
    correct = total = 0
    for trace in traces:
        encoded = encode(trace, tokenize)
        positions = [p - 1 for p in encoded.first_action_positions() if p > 0]
        with torch.no_grad():
            out = model(input_ids=torch.tensor([encoded.ids], device=model.device),
                        logits_to_keep=torch.tensor(positions, device=model.device), use_cache=False)
        for row, position in zip(out.logits[0], positions, strict=True):
            choice = first[int(torch.argmax(row[first]))]
            correct += int(choice == encoded.labels[position + 1])
            total += 1
    return correct, total


class Trainer:
    """One run: `base` with a fresh (or resumed) LoRA adapter, trained on `train`, selected on `held`."""

    def __init__(self, base: BaseModel, routes: TrainingRoutes, settings: Settings, out: Path,
                 report: Report | None = None) -> None:
        self.base = base
        self.routes = routes
        self.settings = settings
        self.out = out
        self.report = report or (lambda phase, done, total, loss: None)
        self.train, self.held = split_routes(routes, settings)
        self.key = fingerprint({"settings": asdict(settings), "base": base.sha256,
                                "train": [i.id for i in self.train], "held": [i.id for i in self.held]})
        self.progress = Progress()

    # ------------------------------------------------------------------------------------------- state on disk
    @property
    def checkpoint(self) -> Path:
        return self.out / "checkpoint"

    def _load_state(self) -> bool:
        """Resume from OUT/checkpoint when it holds this run; DataError when it holds another."""
        state_file = self.checkpoint / "state.json"
        if not state_file.is_file():
            return False
        state = files.read_json(state_file, what="training state")
        if state.get("key") != self.key:
            raise DataError(f"{self.out}: holds a training run with other settings, base or routes; give another "
                            "--out (or delete it)")
        import torch
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        device = str(self.model.device)
        set_peft_model_state_dict(self.model, load_file(str(self.checkpoint / "adapter.safetensors"), device=device))
        self.optimizer.load_state_dict(torch.load(self.checkpoint / "optimizer.pt", weights_only=True,
                                                  map_location=device))
        self.scheduler.load_state_dict(torch.load(self.checkpoint / "scheduler.pt", weights_only=True))
        self.progress = Progress.from_json(state["progress"])
        return True

    def _save_state(self) -> None:
        import torch
        from peft import get_peft_model_state_dict
        from safetensors.torch import save_file

        tmp = self.out / ".checkpoint.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        save_file({k: v.contiguous() for k, v in get_peft_model_state_dict(self.model).items()},
                  str(tmp / "adapter.safetensors"))
        torch.save(self.optimizer.state_dict(), tmp / "optimizer.pt")
        torch.save(self.scheduler.state_dict(), tmp / "scheduler.pt")
        (tmp / "state.json").write_text(json.dumps({"key": self.key, "progress": self.progress.to_json()}) + "\n")
        old = self.out / ".checkpoint.old"
        shutil.rmtree(old, ignore_errors=True)
        if self.checkpoint.exists():
            self.checkpoint.rename(old)
        tmp.rename(self.checkpoint)
        shutil.rmtree(old, ignore_errors=True)

    # ---------------------------------------------------------------------------------------------- the run
    def _prepare(self) -> None:
        from peft import LoraConfig, get_peft_model
        from torch.optim import AdamW
        from transformers import get_linear_schedule_with_warmup

        s = self.settings
        config = LoraConfig(r=s.rank, lora_alpha=s.alpha, lora_dropout=s.dropout, bias="none",
                            target_modules=list(s.target_modules), task_type="CAUSAL_LM")
        self.model = get_peft_model(self.base.model, config)
        steps = math.ceil(len(self.train) / s.batch) * s.epochs
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = AdamW(trainable, lr=s.lr)
        # warmup rounded down: a run of one optimizer step must not take it at learning rate 0
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, int(s.warmup * steps), steps)
        self.policy = TorchPolicy(self.model, self.base.tokenize)

    def run(self) -> dict[str, Any]:
        """Train (or go on training) and write the selected adapter, its GGUF, the curves and the record."""
        import torch

        torch.manual_seed(self.settings.seed)
        self.out.mkdir(parents=True, exist_ok=True)
        self._prepare()
        resumed = self._load_state()
        held_traces = [teacher_trace(self.routes.graph, i) for i in self.held]
        if not self.progress.evaluations:
            self._evaluate(0, held_traces)
            self._save_state()
        s = self.settings
        while self.progress.epoch < s.epochs:
            epoch = self.progress.epoch
            order = list(self.train)
            random.Random(f"{s.seed}-{epoch}").shuffle(order)
            self.model.train()
            for index in range(self.progress.done, len(order)):
                start = time.perf_counter()
                instance = order[index]
                loss = route_loss(self.model, encode(self._trace(instance, epoch), self.base.tokenize))
                batch_size = min(s.batch, len(order) - (index - index % s.batch))
                (loss / batch_size).backward()
                value = float(loss.detach())
                self.progress.losses.append({"epoch": epoch + 1, "route": instance.id, "loss": round(value, 5)})
                self.progress.seconds += time.perf_counter() - start
                self.report("training", epoch * len(order) + index + 1, s.epochs * len(order), value)
                if (index + 1) % s.batch == 0 or index + 1 == len(order):
                    self.optimizer.step()
                    self.scheduler.step()
                    self.optimizer.zero_grad()
                    self.progress.done = index + 1
                    self._save_state()
            self._evaluate(epoch + 1, held_traces)
            self.progress.epoch, self.progress.done = epoch + 1, 0
            self._save_state()
        return self._finish(resumed)

    def _trace(self, instance: NavInstance, epoch: int) -> Trace:
        graph = self.routes.graph
        if self.settings.method == "rbl" and random.Random(f"{self.settings.seed}-{epoch}-{instance.id}").random() \
                < self.settings.mix:
            self.model.eval()
            try:
                return student_trace(graph, instance, self.policy, self.settings.max_steps)
            finally:
                self.model.train()
        return teacher_trace(graph, instance)

    def _evaluate(self, epoch: int, held_traces: Sequence[Trace]) -> None:
        start = time.perf_counter()
        self.model.eval()
        self.report("evaluating", 0, len(self.held), None)
        correct, total = next_action_accuracy(self.model, self.base.tokenize, held_traces)
        completed = 0
        for number, instance in enumerate(self.held, start=1):
            completed += walk(self.routes.graph, instance, self.policy, self.settings.max_steps)
            self.report("evaluating", number, len(self.held), None)
        self.model.train()
        self.progress.evaluations.append(Evaluation(epoch, round(100 * correct / total, 2),
                                                    round(100 * completed / len(self.held), 2), total,
                                                    len(self.held)))
        self.progress.seconds += time.perf_counter() - start
        if epoch > 0:
            self._save_adapter(self.out / "epochs" / f"epoch-{epoch}")

    def _save_adapter(self, folder: Path) -> None:
        from peft import get_peft_model_state_dict

        self.model.save_pretrained(str(folder))
        state = {k: v.detach().float().cpu().numpy() for k, v in get_peft_model_state_dict(self.model).items()}
        export_lora_gguf(state, self.settings.alpha, self.base.architecture, folder / "adapter.gguf",
                         name=f"situated VELMA-{self.settings.method.upper()} on {self.base.uri}")

    def selected(self) -> Evaluation:
        """The epoch whose adapter is kept: best TC on the held-out routes, then best accuracy, then earliest."""
        trained = [e for e in self.progress.evaluations if e.epoch > 0]
        return max(trained, key=lambda e: (e.tc, e.accuracy, -e.epoch))

    def _finish(self, resumed: bool) -> dict[str, Any]:
        best = self.selected()
        source = self.out / "epochs" / f"epoch-{best.epoch}"
        adapter = self.out / "adapter"
        shutil.rmtree(adapter, ignore_errors=True)
        shutil.copytree(source, adapter)
        (adapter / "adapter.gguf").unlink()
        shutil.copyfile(source / "adapter.gguf", self.out / "adapter.gguf")
        curves = self._draw()
        record = self._record(best, curves, resumed)
        files.write_text_atomic(self.out / "record.json", json.dumps(record, indent=2) + "\n")
        return record

    def _draw(self) -> str | None:
        from .curves import draw_curves

        return draw_curves([x["loss"] for x in self.progress.losses],
                           [(e.epoch, e.accuracy, e.tc) for e in self.progress.evaluations],
                           batch=self.settings.batch, method=self.settings.method, held=len(self.held),
                           out=self.out / "curves.png")

    def _record(self, best: Evaluation, curves: str | None, resumed: bool) -> dict[str, Any]:
        s, base = self.settings, self.base
        return {
            "format": RECORD_FORMAT,
            "method": {"ft": "VELMA-FT (teacher forcing)", "rbl": "VELMA-RBL (response-based learning)"}[s.method],
            "base": {"uri": base.uri, "sha256": base.sha256, "architecture": base.architecture,
                     "gguf": str(base.gguf) if base.gguf else None},
            "settings": asdict(s),
            "data": {
                "files": list(self.routes.sources),
                "training_area_only": True,
                "note": ("trained only on map2seq_seen routes that lie wholly in the training area (every panorama "
                         "in the seen partition); never on map2seq_unseen or touchdown_unseen data"),
                "routes_in_files_outside_training_area": self.routes.skipped,
                "trained_routes": len(self.train),
                "trained_ids_sha256": fingerprint([i.id for i in self.train]),
                "held_out_ids": [i.id for i in self.held],
            },
            "evaluations": [asdict(e) for e in self.progress.evaluations],
            "selected_epoch": best.epoch,
            "loss_by_epoch": {str(epoch): _mean([x["loss"] for x in self.progress.losses if x["epoch"] == epoch])
                              for epoch in range(1, s.epochs + 1)},
            "seconds": round(self.progress.seconds, 1),
            "resumed": resumed,
            "files": {"adapter": "adapter/", "gguf": "adapter.gguf", "curves": curves},
        }


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 5) if values else None
