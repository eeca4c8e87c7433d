"""The ``claim`` stage: train, decode, score and test every job of ``experiments.<exp>.claim`` (``lsnmt.claim``).

Writes ``{out}/summary.json`` (everything measured, the config and the CPU time), ``summary.md`` (the table,
:mod:`lsnmt.claim.table`) and ``figure.{png,pdf}`` (:mod:`lsnmt.claim.figure`), atomically; shards, checkpoints
and models go to ``work`` (undeclared), emptied first so that nothing of another configuration is resumed. An
experiment without a ``claim`` section gets ``summary.json`` and ``summary.md`` saying "not configured".
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any

import torch

from lsnmt import methods
from lsnmt.claim import figure, measure, setup, stats, table
from lsnmt.config import ClaimConfig, Experiment
from lsnmt.io import atomic_dir, atomic_write, write_json
from lsnmt.methods import NAIVE
from lsnmt.progress import progress
from lsnmt.train.corpus import Vocab
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
            f.write(table.markdown(summary, "figure.png" if measured else None))


def not_configured(exp: Experiment) -> dict[str, Any]:
    reason = f"experiments.{exp.name} has no claim section"
    log.warning("%s: nothing to measure", reason)
    return {"status": "not configured", "reason": reason, "experiment": exp.name}


def _system(exp: Experiment, cfg: ClaimConfig, job: setup.Job, system: methods.System) -> dict[str, Any]:
    """What a system is: its method, kind, route (FD and LMS+FD) and the method's settings as configured."""
    kind, mcfg = methods.resolve_system(exp, system)
    route = mcfg.route if routes(kind) else None
    settings = to_dict(cfg.methods[job.method]) if job.method != NAIVE else {}
    return {"method": job.method, "kind": kind, "route": route, "settings": settings}


def _first(systems: dict[str, Any], kind: str, route: str | None = None) -> str | None:
    return next((n for n, s in systems.items() if s["kind"] == kind and (route is None or s["route"] == route)),
                None)


def _orderings(systems: dict[str, Any], compare) -> tuple[list, list]:
    """The three orderings of the papers and the extra comparison they need (LMS against FD-Share)."""
    lms, lsl, fd = _first(systems, "lms"), _first(systems, "lsl"), _first(systems, "fd", "share")
    vs = {n: compare(n, NAIVE) for n in systems if n != NAIVE}
    extra = [compare(lms, fd)] if lms and fd else []
    out = [stats.ordering("LMS > naive", [vs.get(lms)], "no method of kind lms in claim.methods"),
           stats.ordering("LSL > naive", [vs.get(lsl)], "no method of kind lsl in claim.methods"),
           stats.ordering("naive < FD-Share < LMS", [vs.get(fd), extra[0] if extra else None],
                          "needs a method of kind fd and one of kind lms in claim.methods")]
    return [*vs.values(), *extra], out


def measure_claim(exp: Experiment, work: Path) -> dict[str, Any]:
    """Everything of ``summary.json`` for ``exp.claim`` (module docstring)."""
    cfg = exp.claim
    assert cfg is not None
    wall, cpu = time.perf_counter(), time.process_time()
    shutil.rmtree(work, ignore_errors=True)
    bin_dir = setup.write_data(cfg, work / "bin")
    vocab = Vocab.load(bin_dir)
    refs: dict[str, list[str]] | None = None
    systems: dict[str, dict[str, Any]] = {}
    runs: dict[str, dict[int, dict[str, list[str]]]] = {}
    timing: dict[str, float] = {}
    for job in progress(setup.jobs(cfg), "claim", unit="job"):
        start = time.perf_counter()
        jexp = setup.experiment(exp.name, cfg, job)
        log.info("claim: training %s (%d updates)", job.name, cfg.train.max_steps)
        model = measure.train_job(jexp, job.method, bin_dir, work / job.name)
        refs = refs or measure.references(jexp, bin_dir)
        counts = measure.param_counts(jexp, job.method, vocab)
        for name, hyps in measure.decode(jexp, job.method, model, bin_dir).items():
            system = next(s for s in methods.systems(jexp, job.method) if s.name == name)
            systems.setdefault(name, {**_system(jexp, cfg, job, system), "params": counts[name]})
            runs.setdefault(name, {})[job.seed] = hyps
        timing[job.name] = time.perf_counter() - start
    assert refs is not None
    b = {"samples": cfg.bootstrap_samples, "seed": cfg.bootstrap_seed}
    for name, s in systems.items():
        s.update(stats.system_summary(runs[name], refs, cfg.seeds, **b))

    def compare(a: str, base: str) -> dict[str, Any]:
        return stats.compare(runs[a], runs[base], refs, cfg.seeds, alpha=cfg.significance, names=(a, base), **b)

    comparisons, orderings = _orderings(systems, compare)
    for o in orderings:
        log.info("claim: %s: %s (%s)", o["claim"], o["status"], o["because"])
    return {"status": "measured", "experiment": exp.name, "baseline": NAIVE, "config": to_dict(cfg),
            "directions": list(refs),
            "items": len(cfg.seeds) * sum(len(r) for r in refs.values()), "order": list(systems), "systems": systems,
            "comparisons": comparisons, "orderings": orderings,
            "timing": {"wall_seconds": time.perf_counter() - wall, "cpu_seconds": time.process_time() - cpu,
                       "cpu_threads": cfg.cpu_threads, "jobs": timing}}


def run_claim(exp: Experiment, out: Path, work: Path) -> dict[str, Any]:
    """Measure ``exp.claim`` (or say it is not configured) and write ``out``."""
    if exp.claim is None:
        summary = not_configured(exp)
    else:
        threads = torch.get_num_threads()
        torch.set_num_threads(exp.claim.cpu_threads)
        try:
            summary = measure_claim(exp, work)
        finally:
            torch.set_num_threads(threads)
    write(out, summary)
    return summary
