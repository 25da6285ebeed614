"""`situated navigate train`: finetune a LoRA adapter for VELMA's agent on training-area routes (VELMA-FT or -RBL).

    situated navigate train --data ../shared/data/velma/map2seq_seen --split dev,test \\
        --base llamacpp:qwen2.5-coder-1.5b --out adapters/velma-ft [--method ft|rbl] [--epochs N] [--limit N]

writes OUT/adapter.gguf (for `navigate --lora`), OUT/adapter/ (PEFT, e.g. for vLLM --enable-lora), OUT/curves.png
and OUT/record.json; the same command again resumes an interrupted run. Needs the `train` extra.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..eval.report.terminal import training_table
from .navigate import navigate_app

OutOpt = Annotated[Path, typer.Option("--out", help="Folder for the adapter, its record, curves and checkpoint.")]
DataOpt = Annotated[Path | None, typer.Option(
    "--data", help="A map2seq_seen directory: only routes wholly in the training area are used.")]
SplitOpt = Annotated[str, typer.Option(
    "--split", help="Split files, comma-separated (map2seq_seen: dev,test = 1,172 routes).")]
BaseOpt = Annotated[str, typer.Option(
    "--base", help="llamacpp:NAME (embedded GGUF, dequantized), llamacpp:PATH.gguf or a Hugging Face model directory.")]
MethodOpt = Annotated[str, typer.Option(
    "--method", help="ft (teacher forcing, VELMA-FT) or rbl (response-based learning, VELMA-RBL).")]
EpochsOpt = Annotated[int, typer.Option("--epochs", help="Passes over the training routes.")]
LimitOpt = Annotated[int | None, typer.Option(
    "--limit", help="Train on N of the routes only (the first N in the --seed order).")]
LrOpt = Annotated[float, typer.Option("--lr", help="AdamW learning rate (VELMA: 3e-4).")]
BatchOpt = Annotated[int, typer.Option("--batch", help="Routes per optimizer step (VELMA: 16).")]
HeldOpt = Annotated[int, typer.Option(
    "--held", help="Training-area routes held out to select the epoch (accuracy, TC); never trained on.")]
MixOpt = Annotated[float, typer.Option("--mix", help="--method rbl: chance the model walks a route itself.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the route order, held-out draw and LoRA init.")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", help="torch threads (default: all cores).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="End with one JSON line of the record.")]


@navigate_app.command("train")
def train(
    out: OutOpt, data: DataOpt = None, split: SplitOpt = "dev,test", base: BaseOpt = "llamacpp:qwen2.5-coder-1.5b",
    method: MethodOpt = "ft", epochs: EpochsOpt = 1, limit: LimitOpt = None, lr: LrOpt = 3e-4, batch: BatchOpt = 16,
    held: HeldOpt = 4, mix: MixOpt = 0.5, seed: SeedOpt = 0, threads: ThreadsOpt = None, as_json: JsonOpt = False,
) -> None:
    """Train a LoRA adapter on navigation traces and export it for the embedded engine (`navigate --lora`)."""
    from ..train.loop import Settings
    from ..train.run import TrainRequest, train_adapter

    settings = Settings(method=method, epochs=epochs, lr=lr, batch=batch, held=held, limit=limit, seed=seed, mix=mix)
    request = TrainRequest(data, split, base, out, threads)
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[loss]}"),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True, disable=as_json) as bar:
        tasks: dict[str, int] = {}

        def report(phase: str, done: int, total: int, loss: float | None) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total, loss="")
            bar.update(tasks[phase], completed=done, total=total, loss=f"loss {loss:.3f}" if loss is not None else "")

        record = train_adapter(request, settings, report=report,
                               on_bytes=lambda done, total: report("assembling model weights", done, total, None))
    result = Console()
    result.print(training_table(record))
    result.print(f"adapter: {out / 'adapter.gguf'} (navigate --lora), {out / 'adapter'} (PEFT); "
                 f"record: {out / 'record.json'}")
    if as_json:
        print(json.dumps(record))
