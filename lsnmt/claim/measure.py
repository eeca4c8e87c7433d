"""Train one claim job with the real trainer, decode its systems, count its parameters (``lsnmt.claim``).

Training is ``stages/train.py``'s: :func:`lsnmt.train.method.train_method` (the kind's batches, its factory and
criterion, dense pre-training where the kind has it). Decoding is ``translate``'s loader (through each route of FD and
LMS+FD: ``lsnmt.methods.systems``) and batched beam search on the test split; hypotheses and references are
token ids written as words (``"17 23 9"``), the strings BLEU and exact match compare.

:func:`run_job` keeps a finished job's result in ``work/<job>/result.json`` under a key of everything that fixes
it (the task and the job's experiment): an interrupted stage resumes at the job it was training (whose
checkpoints the trainer resumes), a changed setting retrains only the jobs it changes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

import torch

from lsnmt import methods
from lsnmt.claim import task
from lsnmt.claim.config import ClaimConfig
from lsnmt.data.corpus import Vocab, load_split
from lsnmt.decode.translate import load_model, translate_direction
from lsnmt.io import write_json
from lsnmt.train.method import train_method
from lsnmt.typed import to_dict
from models.build import build_transformer
from models.param_count import inference_params, shared_params, train_params

log = logging.getLogger(__name__)

Hyps = dict[str, list[str]]
"""Direction ``src-tgt`` -> one line per test sentence."""


def words(ids: list[int]) -> str:
    return " ".join(map(str, ids))


def train_job(spec: task.JobSpec, method: str, bin_dir: Path, work: Path) -> Path:
    """Train ``method`` of ``spec`` into ``work`` (checkpoints in ``work/ckpt``) as the train stage does; return its
    ``model.pt``."""
    train_method(spec, spec.name, method, bin_dir, work / "model", work / "ckpt")
    return work / "model" / "model.pt"


def references(spec: task.JobSpec, bin_dir: Path) -> Hyps:
    vocab = Vocab.load(bin_dir)
    return {d.name: [words(d.tgt[i].tolist()) for i in range(len(d))]
            for d in load_split(bin_dir, "test", spec.data.train_pairs, vocab)}


def decode(spec: task.JobSpec, method: str, model_path: Path, bin_dir: Path) -> dict[str, Hyps]:
    """Hypotheses of every system of ``method`` (``lsnmt.methods.systems``) on every tested direction."""
    vocab = Vocab.load(bin_dir)
    tests = load_split(bin_dir, "test", spec.data.train_pairs, vocab)
    out = {}
    for system in methods.systems(spec.method_cfg, method):
        model = load_model(method, model_path, vocab, exp=spec.name, model=spec.model, positions=spec.decode_positions,
                           method_cfg=spec.method_cfg, route=system.route, top_w=system.top_w)
        with torch.inference_mode():
            out[system.name] = {d.name: [words(h) for h in translate_direction(
                model, d, spec.decode, vocab, torch.device("cpu"), spec.train.max_steps)] for d in tests}
    return out


def param_counts(spec: task.JobSpec, method: str, vocab: Vocab) -> dict[str, dict[str, int]]:
    """``{system: {"total", "shared", "inference"}}``: all trained parameters, those every tested direction uses
    through the system's route (``models.param_count.shared_params``), and those one direction uses at test time,
    for the costliest direction (``models.param_count.inference_params``: LSL's |θeff|)."""
    kind = methods.resolve(spec.method_cfg, method)[0]
    pairs = [(vocab.lang_id(s), vocab.lang_id(t)) for s, t in spec.data.train_pairs]
    out = {}
    for system in methods.systems(spec.method_cfg, method):
        model = build_transformer(spec.model, vocab_size=vocab.size, num_languages=len(vocab.languages),
                                  padding_idx=vocab.pad, method=kind,
                                  method_cfg=methods.resolve_system(spec.method_cfg, system)[1])
        out[system.name] = {"total": train_params(model), "shared": shared_params(model, pairs),
                            "inference": max(inference_params(model, s, t) for s, t in pairs)}
    return out


def job_key(cfg: ClaimConfig, spec: task.JobSpec) -> str:
    """SHA-256 of the task and of the job's spec: what fixes a job's result."""
    blob = {"task": task.task_key(cfg), "spec": to_dict(spec)}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


def curve(path: Path) -> list[dict[str, float]]:
    """``[{step, valid_loss}]`` of a training's ``curve.tsv`` (bits per token), its validations only."""
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    head = rows[0]
    step, valid = head.index("step"), head.index("valid_loss")
    return [{"step": int(r[step]), "valid_loss": float(r[valid])} for r in rows[1:] if r[valid]]


def run_job(cfg: ClaimConfig, spec: task.JobSpec, job: task.Job, bin_dir: Path, work: Path) -> dict[str, Any]:
    """``{"systems": {name: {"hyps", "params"}}, "curve", "seconds"}`` of ``job`` (``spec``: what it trains by),
    from ``work/result.json`` when that holds this job's key, else trained, decoded and counted, then kept."""
    key, path = job_key(cfg, spec), work / "result.json"
    if path.is_file():
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("key") == key:
            log.info("claim: %s already measured (%s)", job.name, path)
            return kept
    start = time.perf_counter()
    log.info("claim: training %s (%d updates)", job.name, spec.train.max_steps)
    model = train_job(spec, job.method, bin_dir, work)
    counts = param_counts(spec, job.method, Vocab.load(bin_dir))
    # a dense baseline trains as naive: its one system carries the job's name
    systems = {(job.system if job.method != job.system else name): {"hyps": hyps, "params": counts[name]}
               for name, hyps in decode(spec, job.method, model, bin_dir).items()}
    result = {"key": key, "systems": systems, "curve": curve(work / "model" / "curve.tsv"),
              "seconds": time.perf_counter() - start}
    write_json(path, result)
    return result
