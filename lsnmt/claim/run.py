"""The ``claim`` stage: train, decode, score and test every job of ``experiments.<exp>.claim`` (``lsnmt.claim``).

Writes ``{out}/summary.json`` (everything measured, the config and the CPU time), ``summary.md`` (the table,
:mod:`lsnmt.claim.markdown`) and ``figure.{png,pdf}`` (:mod:`lsnmt.claim.figure`), atomically; shards, checkpoints
and models go to ``work`` (undeclared). The stage resumes: ``work`` is kept while it holds the same task
(``work/task.json``, else emptied), each finished job's result is kept under the key of its settings
(:func:`lsnmt.claim.measure.run_job`) and an unfinished job's training resumes from its checkpoint, bit for bit
on CPU. An experiment without a ``claim`` section gets ``summary.json`` and ``summary.md`` saying "not
configured".
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any

import torch

from lsnmt import methods
from lsnmt.claim import claims, figure, markdown, measure, stats, task
from lsnmt.claim.config import ClaimConfig
from lsnmt.io import atomic_dir, atomic_write, write_json
from lsnmt.methods import NAIVE
from lsnmt.runner.progress import progress
from lsnmt.typed import to_dict
from models.config.kinds import routes

log = logging.getLogger(__name__)


def write(out: Path, summary: dict[str, Any]) -> None:
    """``summary.json``, ``summary.md`` and (when measured) ``figure.{png,pdf}`` into ``out``, atomically."""
    with atomic_dir(out) as tmp:
        write_json(tmp / "summary.json", summary)
        measured = summary.get("status") == "measured"
        if measured:
            figure.draw(summary, tmp, "figure")
        with atomic_write(tmp / "summary.md") as f:
            f.write(markdown.markdown(summary, "figure.png" if measured else None))


def not_configured(name: str) -> dict[str, Any]:
    reason = f"experiments.{name} has no claim section"
    log.warning("%s: nothing to measure", reason)
    return {"status": "not configured", "reason": reason, "experiment": name}


def system_record(cfg: ClaimConfig, spec: task.JobSpec, job: task.Job, system: methods.System) -> dict[str, Any]:
    """What a system is: its method, kind, route (FD and LMS+FD), settings as configured, whether it is a dense
    baseline (``claim.dense``: naive with its shape overrides as settings)."""
    if job.system in cfg.dense:
        return {"method": NAIVE, "kind": None, "route": None, "settings": dict(cfg.dense[job.system]), "dense": True}
    kind, mcfg = methods.resolve_system(spec.method_cfg, system)
    route = next(iter(routes(kind, mcfg)), None)  # the configured route first
    settings = to_dict(cfg.methods[job.method].entry) if job.method != NAIVE else {}
    return {"method": job.method, "kind": kind, "route": route, "settings": settings, "dense": False}


def prepare_work(cfg: ClaimConfig, work: Path) -> Path:
    """``work/bin``, the task's shards: kept when ``work/task.json`` names this task, else ``work`` is emptied
    (no checkpoint or result of another task is resumed) and the shards written; returns the shards' folder."""
    marker, key = work / "task.json", json.loads(json.dumps(task.task_key(cfg)))
    if marker.is_file() and json.loads(marker.read_text(encoding="utf-8")) == key:
        return work / "bin"
    shutil.rmtree(work, ignore_errors=True)
    task.write_data(cfg, work / "bin")
    write_json(marker, key)  # after the shards: an interrupted write is redone
    return work / "bin"


def measure_claim(cfg: ClaimConfig, name: str, work: Path) -> dict[str, Any]:
    """Everything of ``summary.json`` for the ``claim`` section ``cfg`` of experiment ``name`` (module docstring)."""
    wall, cpu = time.perf_counter(), time.process_time()
    bin_dir = prepare_work(cfg, work)
    refs: dict[str, list[str]] | None = None
    systems: dict[str, dict[str, Any]] = {}
    runs: dict[str, dict[int, dict[str, list[str]]]] = {}
    curves, timing = {}, {}
    for job in progress(task.jobs(cfg), "claim", unit="job"):
        spec = task.spec(name, cfg, job)
        result = measure.run_job(cfg, spec, job, bin_dir, work / job.name)
        refs = refs or measure.references(spec, bin_dir)
        for system in methods.systems(spec.method_cfg, job.method):
            sname = job.system if job.system in cfg.dense else system.name
            record = {**system_record(cfg, spec, job, system), "params": result["systems"][sname]["params"]}
            systems.setdefault(sname, record)
            runs.setdefault(sname, {})[job.seed] = result["systems"][sname]["hyps"]
        curves[job.name], timing[job.name] = result["curve"], result["seconds"]
    assert refs is not None
    b = {"samples": cfg.bootstrap_samples, "seed": cfg.bootstrap_seed}
    for sname, s in systems.items():
        s.update(stats.system_summary(runs[sname], refs, cfg.seeds, **b))
    done: dict[tuple[str, str], dict[str, Any]] = {}

    def compare(a: str, base: str) -> dict[str, Any]:
        if (a, base) not in done:
            done[a, base] = stats.compare(runs[a], runs[base], refs, cfg.seeds, alpha=cfg.significance,
                                          names=(a, base), **b)
        return done[a, base]

    for sname in systems:
        if sname != NAIVE:
            compare(sname, NAIVE)
    verdicts = [claims.verdict(c, systems, compare, cfg.dense_tolerance) for c in claims.CLAIMS]
    for v in verdicts:
        log.info("claim: %s: %s (%s)", v["claim"], v["status"], v["because"])
    return {"status": "measured", "experiment": name, "baseline": NAIVE, "config": to_dict(cfg),
            "directions": list(refs), "items": len(cfg.seeds) * sum(len(r) for r in refs.values()),
            "order": list(systems), "systems": systems, "comparisons": list(done.values()), "claims": verdicts,
            "curves": curves,
            "timing": {"wall_seconds": time.perf_counter() - wall, "cpu_seconds": time.process_time() - cpu,
                       "cpu_threads": cfg.cpu_threads, "jobs": timing, "train_seconds": sum(timing.values())}}


def run_claim(cfg: ClaimConfig | None, name: str, out: Path, work: Path) -> dict[str, Any]:
    """Measure the ``claim`` section ``cfg`` of experiment ``name`` (``None``: say it is not configured) and write
    ``out``."""
    if cfg is None:
        summary = not_configured(name)
    else:
        threads = torch.get_num_threads()
        torch.set_num_threads(cfg.cpu_threads)
        try:
            summary = measure_claim(cfg, name, work)
        finally:
            torch.set_num_threads(threads)
    write(out, summary)
    return summary
