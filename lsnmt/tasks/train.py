"""The ``task_train`` stage: fine-tune XLM-R on every task, method and seed; predict the test sets.

One *unit* = (task, method, seed). A unit builds the encoder (``models.xlmr``; ``torch.manual_seed(seed)``
first), inserts the method's LMS maps, trains ``epochs`` epochs of homogeneous batches (all examples of
one language, Sec. 5: one language's LMS factors per batch; languages interleaved in a random order) with
AdamW and a linear warm-up / decay schedule (:func:`adam`, :func:`schedule`, assembled by
:func:`lsnmt.train.job.assemble`), keeps the last or the best-on-dev epoch (``select``), and
predicts every test language through every route the method has (naive: ``none``; LMS: ``ls``; LMS+FD: its
configured route first, then the other: Share and LS come from the same trained model, Sec. 5).

Resumable: a unit's state lives in ``work/{exp}/tasks/{task}/{method}/seed{n}`` (``last.pt`` after each
epoch, ``best.pt``, ``result.json`` when done; a changed config or changed data moves it aside to
``seed{n}.stale``, as the translation trainer does). The stage output
``results/{exp}/tasks/{task}/{method}/seed{n}/`` (``predictions.json``, ``curve.tsv``) is assembled from finished
units and swapped in atomically; fine-tuned weights stay in ``work/`` (1.1 GB each at paper scale). CPU runs are
deterministic. Each batch is one update of the project's one update step (:func:`lsnmt.train.update.update`:
clipping, AMP, the optimizer step), its loss left on the device; the updates run on
:func:`lsnmt.train.loop.run_updates` (the epoch's end is its validation hook, after the NaN guard has read the
epoch's losses; ``last.pt`` at each epoch's end): SIGTERM / SIGUSR1 saves ``last.pt`` after the batch in
progress, with the epoch's running loss, and raises :class:`~lsnmt.train.loop.Interrupted`; the rerun resumes
inside the epoch, bit for bit on CPU. One process only (no DDP): a unit's batch is one language's examples.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from lsnmt.io import atomic_dir, atomic_write, write_json
from lsnmt.runner.progress import progress
from lsnmt.tasks import loss as losses
from lsnmt.tasks.batches import Prepared, collate, epoch_batches
from lsnmt.tasks.config import TaskConfig
from lsnmt.tasks.data import NER_LABELS
from lsnmt.tasks.predict import dev_f1, predict
from lsnmt.train import checkpoint as ckpt
from lsnmt.train.dist import Dist, pick_device
from lsnmt.train.job import Parts, assemble, fingerprint, prepare_work_dir
from lsnmt.train.loop import Job, Update, Validation, run_updates
from lsnmt.train.optim import Adam, Schedule, bias_or_layer_norm
from lsnmt.train.update import Updater, update
from lsnmt.typed import to_dict
from models.config import kinds
from models.lang import LangContext
from models.param_count import deployed_params, train_params
from models.xlmr import TaskModel, build_task_model, load_encoder

log = logging.getLogger(__name__)


# -- model, optimiser, objective ------------------------------------------------------------------------------


def route_keys(kind: str | None, cfg: Any) -> list[str]:
    """The keys of a unit's predictions: its kind's routes, configured first (:func:`models.config.kinds.routes`,
    LMS+FD's two), else one key naming the one way through, ``none`` (naive) or ``ls`` (LMS)."""
    return list(kinds.routes(kind, cfg)) or ["none" if kind is None else "ls"]


def build_model(task: TaskConfig, prepared: Prepared, kind: str | None, cfg: Any, seed: int) -> TaskModel:
    torch.manual_seed(seed)
    outputs = len(NER_LABELS) if task.kind == "ner" else 2
    encoder = load_encoder(task.encoder, vocab_size=prepared.meta["vocab_size"], dropout=task.dropout,
                           max_positions=task.max_length)
    return build_task_model(encoder, task=task.kind, outputs=outputs, dropout=task.dropout,
                            num_languages=len(task.languages), method=kind, method_cfg=cfg)


def count_params(model: TaskModel, task: TaskConfig, kind: str | None, cfg: Any) -> dict[str, Any]:
    """Trained parameters and, per route, those deployed to serve every language (``models.param_count``),
    counted on a meta-device copy of the model (the other route of LMS+FD is a config change)."""
    from transformers import XLMRobertaModel

    out: dict[str, Any] = {"train": train_params(model), "inference": {}}
    for route in route_keys(kind, cfg):
        c = dataclasses.replace(cfg, route=route) if kinds.routes(kind, cfg) else cfg
        with torch.device("meta"):
            meta = build_task_model(XLMRobertaModel(model.encoder.config, add_pooling_layer=False), task=task.kind,
                                    outputs=model.head.out_features, dropout=0.0,
                                    num_languages=len(task.languages), method=kind, method_cfg=c)
        out["inference"][route] = deployed_params(meta, len(task.languages))
    return out


def adam(task: TaskConfig) -> Adam:
    """AdamW, no decay on biases and LayerNorms (the XTREME recipe; :class:`lsnmt.train.optim.Adam`)."""
    return Adam(eps=task.adam_eps, weight_decay=task.weight_decay, exempt=bias_or_layer_norm)


def schedule(task: TaskConfig, total: int) -> Schedule:
    """Linear warm-up over ``warmup_steps``, linear decay to 0 at update ``total``
    (:class:`lsnmt.train.optim.Schedule` ``linear_warmup``)."""
    return Schedule(kind="linear_warmup", lr=task.lr, warmup=task.warmup_steps, total=total)


def batch_loss(model: TaskModel, task: TaskConfig, kind: str | None, batch: dict[str, Tensor],
               langs: LangContext) -> Tensor:
    def forward(ctx: LangContext) -> Tensor:
        return model(batch["input_ids"], batch["attention_mask"], ctx)

    if task.kind == "ner":
        def terms(logits: Tensor):
            return losses.ner_terms(logits, batch["labels"])
        scale = 1.0
    else:
        def terms(logits: Tensor):
            return losses.qa_terms(logits, batch["attention_mask"], batch["start"], batch["end"])
        scale = 0.5
    if kinds.passes(kind) == 2:  # LMS+FD: both routes and their KL (LMS-FD Sec. 4, 5)
        return losses.fd_loss(forward, langs, terms, kl_scale=scale)
    return losses.single_loss(forward, langs, terms)


# -- one unit -------------------------------------------------------------------------------------------------


@dataclass
class Unit:
    task_name: str
    task: TaskConfig
    method: str
    kind: str | None
    cfg: Any
    seed: int
    work: Path

    def config(self, prepared: Prepared) -> dict[str, Any]:
        return {"task": self.task_name, "task_cfg": to_dict(self.task), "method": self.method, "kind": self.kind,
                "method_cfg": to_dict(self.cfg) if self.cfg is not None else None, "seed": self.seed,
                "data": prepared.fingerprint}


def _prepare_work(unit: Unit, config: dict[str, Any]) -> dict[str, Any]:
    """The trainers' policy (:func:`lsnmt.train.job.prepare_work_dir`): a work dir of another
    config or other data is moved aside to ``{work}.stale``, not deleted (a mistaken edit of params.yaml costs a
    rename, not the unit's training); returns ``config`` with its fingerprint."""
    recorded = unit.work / "config.json"
    stamped = {**config, "fingerprint": fingerprint(config)}
    if recorded.is_file() and json.loads(recorded.read_text(encoding="utf-8")) == config:
        write_json(recorded, stamped)  # the same unit, recorded before work dirs carried a fingerprint: kept
    prepare_work_dir(unit.work, stamped)
    return stamped


def run_unit(unit: Unit, prepared: Prepared, device: torch.device) -> dict[str, Any]:
    """Train (or resume) one unit and predict its test sets; returns (and stores) its ``result.json``."""
    done = unit.work / "result.json"
    _prepare_work(unit, unit.config(prepared))
    if done.is_file():
        log.info("%s %s seed %d: done earlier, reusing %s", unit.task_name, unit.method, unit.seed, done)
        return json.loads(done.read_text(encoding="utf-8"))
    task = unit.task
    model = build_model(task, prepared, unit.kind, unit.cfg, unit.seed).to(device)
    state = _fit(unit, prepared, model, device)
    if task.select == "best":
        model.load_state_dict(ckpt.load(unit.work / "best.pt", device, remedy=f"delete {unit.work} to train the unit "
                                        "afresh")["model"])
    result = {"task": unit.task_name, "method": unit.method, "kind": unit.kind, "seed": unit.seed,
              "selected_epoch": state["best_epoch"] if task.select == "best" else task.epochs,
              "curve": state["curve"], "params": count_params(model, task, unit.kind, unit.cfg),
              "routes": route_keys(unit.kind, unit.cfg),
              "predictions": {r: predict(model, task, prepared.splits["test"], r, prepared.gold, device)
                              for r in route_keys(unit.kind, unit.cfg)}}
    write_json(done, result)
    return result


def _fit(unit: Unit, prepared: Prepared, model: TaskModel, device: torch.device) -> dict[str, Any]:
    """Train ``unit``'s epochs on the project's one update (:func:`lsnmt.train.update.update`) and loop, from its
    ``last.pt`` if any; returns the unit's state (curve, best epoch)."""
    task, train_rows = unit.task, prepared.splits["train"]
    n_batches = len(epoch_batches(train_rows, list(task.languages), task.batch_size, np.random.default_rng(0)))
    total = task.epochs * n_batches
    parts = assemble(model, adam=adam(task), schedule=schedule(task, total), device=device)
    state: dict[str, Any] = {"epoch": 0, "best": None, "best_epoch": None, "curve": []}
    running: dict[str, Any] = {"loss": 0.0, "batches": 0}  # the epoch in progress: summed loss, batches done

    def restore(saved: dict[str, Any]) -> None:
        state.update(saved["state"])
        running.update(saved.get("running", running))

    found = parts.resume(unit.work, device, restore)
    step = 0 if found is None else found[1]
    if found is not None:
        log.info("%s %s seed %d: resuming after update %d (epoch %d)", unit.task_name, unit.method, unit.seed,
                 step, state["epoch"] + 1)
    t = parts.updater(Dist(0, 1, device, owns_group=False), precision="fp32", clip_norm=task.clip_norm)
    job = Job(name=f"{unit.task_name} {unit.method} s{unit.seed}", total=total, log_every=n_batches,
              save_every=n_batches, update=_steps(unit, prepared, model, t, parts, n_batches, running, device),
              save=lambda n, **_: parts.save_last(unit.work, n, {"state": state, "running": {
                  "loss": float(running["loss"]), "batches": running["batches"]}}),
              validate=_epoch_end(unit, prepared, model, n_batches, state, running, device),
              validate_every=n_batches, logger=log)
    run_updates(job, step, None, None)
    return state


def _steps(unit: Unit, prepared: Prepared, model: TaskModel, t: Updater, parts: Parts, n_batches: int,
           running: dict[str, Any], device: torch.device) -> Callable[[int], Update]:
    """The unit's update hook: update ``n + 1`` is batch ``n % n_batches`` of epoch ``n // n_batches`` (that
    epoch's own order), its loss added to the epoch's ``running`` sum."""
    task, train_rows = unit.task, prepared.splits["train"]
    epochs: dict[int, list[tuple[int, np.ndarray]]] = {}

    def step_fn(n: int) -> Update:
        epoch, b = divmod(n, n_batches)
        if epoch not in epochs:
            epochs.clear()
            epochs[epoch] = epoch_batches(train_rows, list(task.languages), task.batch_size,
                                          np.random.default_rng([unit.seed, epoch]))
        lid, idx = epochs[epoch][b]
        batch = collate([train_rows[task.languages[lid]][i] for i in idx], device)
        langs = LangContext.single(lid, lid, len(idx), device)

        def forward() -> tuple[Tensor, Tensor]:
            loss = batch_loss(model, task, unit.kind, batch, langs)
            return loss, loss.detach().reshape(1)

        lr = parts.lr(n)
        stepped = update(t, [forward], lr, n)
        loss = stepped.stats[0]  # stays on the device: the loop's check and the epoch's end read it
        running["loss"], running["batches"] = running["loss"] + loss, running["batches"] + 1
        return Update(loss=loss, nll=loss, ntokens=len(idx), lr=lr, grad_norm=stepped.grad_norm,
                      skipped=stepped.skipped)

    return step_fn


def _epoch_end(unit: Unit, prepared: Prepared, model: TaskModel, n_batches: int, state: dict[str, Any],
               running: dict[str, Any], device: torch.device) -> Callable[[int], Validation]:
    """The unit's validation hook, after the NaN guard's check of the epoch's updates: the curve row, dev F1 and
    ``best.pt``."""
    task, route0 = unit.task, route_keys(unit.kind, unit.cfg)[0]
    clock = [time.time()]

    def end_epoch(step: int) -> Validation:
        epoch = step // n_batches - 1
        row = {"epoch": epoch + 1, "step": step, "loss": float(running["loss"]) / max(running["batches"], 1),
               "dev_f1": None}
        if task.select == "best":
            row["dev_f1"] = dev_f1(predict(model, task, prepared.splits["valid"], route0, None, device),
                                   prepared.splits["valid"])
            if state["best"] is None or row["dev_f1"] > state["best"]:
                state["best"], state["best_epoch"] = row["dev_f1"], epoch + 1
                ckpt.save(unit.work / "best.pt", {"model": model.state_dict()})
        state["curve"].append(row)
        state["epoch"] = epoch + 1
        running.update(loss=0.0, batches=0)
        log.info("%s %s seed %d epoch %d: loss %.4f%s (%.1fs)", unit.task_name, unit.method, unit.seed, epoch + 1,
                 row["loss"], "" if row["dev_f1"] is None else f", dev F1 {row['dev_f1']:.2f}",
                 time.time() - clock[0])
        clock[0] = time.time()
        return Validation(row["loss"], improved=False)

    return end_epoch


def _write_unit(out: Path, result: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with atomic_write(out / "curve.tsv") as fh:
        fh.write("epoch\tstep\tloss\tdev_f1\n")
        for r in result["curve"]:
            fh.write(f"{r['epoch']}\t{r['step']}\t{r['loss']:.6f}\t{'' if r['dev_f1'] is None else r['dev_f1']}\n")
    write_json(out / "predictions.json", {k: v for k, v in result.items() if k != "curve"})


TaskMethod = tuple[str | None, Any]
"""A task method's kind and typed config (``(None, None)``: naive; :func:`lsnmt.methods.resolve_task`)."""


def units(task_cfg: Mapping[str, TaskConfig], tasks: tuple[str, ...], methods: Mapping[str, TaskMethod],
          work_root: Path) -> Iterator[Unit]:
    """Every (task, method, seed) of ``tasks`` x ``methods`` (in their order) x the task's seeds."""
    for name in tasks:
        task = task_cfg[name]
        for method, (kind, cfg) in methods.items():
            for seed in task.seeds:
                yield Unit(name, task, method, kind, cfg, seed, work_root / name / method / f"seed{seed}")


def train_tasks(task_cfg: Mapping[str, TaskConfig], tasks: tuple[str, ...], methods: Mapping[str, TaskMethod],
                data_root: Path, out_root: Path, work_root: Path) -> None:
    """Every unit of ``tasks`` (of ``task_cfg``) x ``methods`` (name -> kind and typed config) x seeds, then
    ``out_root`` assembled atomically."""
    threads = {task_cfg[name].cpu_threads for name in tasks} - {None}
    device = pick_device(0, min(threads) if threads else None)  # type: ignore[type-var]
    prepared = {name: Prepared.load(data_root / name) for name in tasks}
    todo = list(units(task_cfg, tasks, methods, work_root))
    results = []
    for unit in progress(todo, "task_train", unit="run"):
        results.append((unit, run_unit(unit, prepared[unit.task_name], device)))
    with atomic_dir(out_root) as tmp:
        for unit, result in results:
            _write_unit(tmp / unit.task_name / unit.method / f"seed{unit.seed}", result)
        write_json(tmp / "runs.json", {"tasks": list(tasks), "methods": list(methods), "device": str(device),
                                       "units": len(results)})
