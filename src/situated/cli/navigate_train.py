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
from rich.table import Table

from ..errors import SituatedError
from .models import _weights_bar
from .navigate import navigate_app
from .render import check_counts


def _splits(text: str) -> list[str]:
    splits = [s.strip() for s in text.split(",") if s.strip()]
    if not splits or any(s not in ("dev", "test", "train") for s in splits):
        raise SituatedError(f"--split must list dev, test or train (comma-separated), not {text!r}")
    return list(dict.fromkeys(splits))


@navigate_app.command("train")
def train(
    out: Annotated[Path, typer.Option("--out", help="Folder for the adapter, its record, curves and checkpoint.")],
    data: Annotated[Path | None, typer.Option(
        "--data", help="A map2seq_seen directory: only routes wholly in the training area are used.")] = None,
    split: Annotated[str, typer.Option(
        "--split", help="Split files, comma-separated (map2seq_seen: dev,test = 1,172 routes).")] = "dev,test",
    base: Annotated[str, typer.Option(
        "--base", help="llamacpp:NAME (embedded GGUF, dequantized), llamacpp:PATH.gguf or a Hugging Face model "
                       "directory.")] = "llamacpp:qwen2.5-coder-1.5b",
    method: Annotated[str, typer.Option(
        "--method", help="ft (teacher forcing, VELMA-FT) or rbl (response-based learning, VELMA-RBL).")] = "ft",
    epochs: Annotated[int, typer.Option("--epochs", help="Passes over the training routes.")] = 1,
    limit: Annotated[int | None, typer.Option(
        "--limit", help="Train on N of the routes only (the first N in the --seed order).")] = None,
    lr: Annotated[float, typer.Option("--lr", help="AdamW learning rate (VELMA: 3e-4).")] = 3e-4,
    batch: Annotated[int, typer.Option("--batch", help="Routes per optimizer step (VELMA: 16).")] = 16,
    held: Annotated[int, typer.Option(
        "--held", help="Training-area routes held out to select the epoch (accuracy, TC); never trained on.")] = 4,
    mix: Annotated[float, typer.Option("--mix", help="--method rbl: chance the model walks a route itself.")] = 0.5,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the route order, held-out draw and LoRA init.")] = 0,
    threads: Annotated[int | None, typer.Option("--threads", help="torch threads (default: all cores).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line of the record.")] = False,
) -> None:
    """Train a LoRA adapter on navigation traces and export it for the embedded engine (`navigate --lora`)."""
    from ..train.base import load_base, require_train_extra
    from ..train.loop import Settings, Trainer, split_routes
    from ..train.traces import training_routes

    if data is None:
        raise SituatedError("--data DIR is required (the map2seq_seen directory)")
    check_counts(("--threads", threads, 1))
    settings = Settings(method=method, epochs=epochs, lr=lr, batch=batch, held=held, limit=limit, seed=seed, mix=mix)
    routes = training_routes(data, _splits(split))
    split_routes(routes, settings)  # too few routes to hold some out: said before a model is loaded
    require_train_extra()
    console = Console(stderr=True)
    with _weights_bar(console) as on_bytes, console.status(f"loading {base} for training"):
        model = load_base(base, threads=threads, progress=on_bytes)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[loss]}"),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True, disable=as_json) as bar:
        tasks: dict[str, int] = {}

        def report(phase: str, done: int, total: int, loss: float | None) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total, loss="")
            bar.update(tasks[phase], completed=done, total=total,
                       loss=f"loss {loss:.3f}" if loss is not None else "")

        record = Trainer(model, routes, settings, out, report).run()
    table = Table(title=f"{record['method']} on {record['data']['trained_routes']} training-area routes, "
                        f"{len(record['data']['held_out_ids'])} held out")
    for column in ("epoch", "next-action accuracy %", "TC %"):
        table.add_column(column, justify="right")
    for evaluation in record["evaluations"]:
        mark = " (selected)" if evaluation["epoch"] == record["selected_epoch"] else ""
        table.add_row(f"{evaluation['epoch']}{mark}", f"{evaluation['accuracy']:.1f}", f"{evaluation['tc']:.1f}")
    result = Console()
    result.print(table)
    result.print(f"adapter: {out / 'adapter.gguf'} (navigate --lora), {out / 'adapter'} (PEFT); "
                 f"record: {out / 'record.json'}")
    if as_json:
        print(json.dumps(record))
