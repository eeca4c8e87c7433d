"""The claim's task, data and per-job experiment (``lsnmt.claim``).

The task is :class:`lsnmt.data.synthetic.Task` over ``claim.languages`` (pivot first), trained and tested
pivot-centric. Every job ``(system, seed)`` is a :class:`JobSpec`: the sections of an experiment it trains and
decodes by, the claim's model (a dense baseline's: with its overrides) and training (``train.seed`` = the job's
seed) and at most one ``method_cfg`` entry, so that the trainer (a :class:`lsnmt.train.trainer.Training`),
``lsnmt.methods`` and ``translate``'s loader run unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsnmt.claim.config import ClaimConfig
from lsnmt.data.config import DataConfig, SourceConfig
from lsnmt.data.synthetic import Task, pivot_centric, write_shards
from lsnmt.decode.config import DecodeConfig
from lsnmt.methods import NAIVE
from lsnmt.methods.schema import Method
from lsnmt.train.config import TrainConfig
from lsnmt.typed import to_dict
from models.config.model import ModelConfig

MAX_LEN_A, MAX_LEN_B = 1.0, 4
"""Hypotheses stop at ``|x| + 4`` tokens: a target has as many words as its source (``|x|`` counts the tag)."""


@dataclass(frozen=True)
class Job:
    """One training: ``system`` (``naive``, a key of ``claim.dense`` or of ``claim.methods``) with ``seed``;
    ``method`` is what trains it (``naive`` for a dense model)."""

    system: str
    method: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.system}-s{self.seed}"


@dataclass(frozen=True, kw_only=True)
class JobSpec:
    """What one job trains and decodes by: an experiment's ``data``, ``model``, ``train``, ``decode`` and
    ``method_cfg`` sections (:class:`lsnmt.train.trainer.Training` and what ``translate`` reads), named ``name``."""

    name: str
    data: DataConfig
    model: ModelConfig
    train: TrainConfig
    decode: DecodeConfig
    method_cfg: Mapping[str, Method]
    """The job's method entry, typed (``claim.methods``); none for naive."""

    @property
    def decode_positions(self) -> int:
        """:attr:`lsnmt.decode.config.TranslateView.decode_positions`."""
        return min(self.model.max_positions, self.train.max_target_positions)


def task(cfg: ClaimConfig) -> Task:
    return Task(languages=cfg.languages, concepts=cfg.concepts, reverse=cfg.reverse, scramble=cfg.scramble,
                min_len=cfg.min_len, max_len=cfg.max_len, seed=cfg.task_seed)


def task_key(cfg: ClaimConfig) -> dict[str, Any]:
    """Everything that fixes the task's shards (a work dir of another task is not resumed)."""
    keys = ("languages", "concepts", "reverse", "scramble", "min_len", "max_len", "task_seed", "sentences")
    return {k: to_dict(getattr(cfg, k)) for k in keys}


def directions(cfg: ClaimConfig) -> list[tuple[str, str]]:
    """The supervised directions, trained and tested: ``(pivot, x)`` and ``(x, pivot)``."""
    return pivot_centric(cfg.languages)


def write_data(cfg: ClaimConfig, bin_dir: Path) -> Path:
    """Shards and ``meta.json`` of the task in ``bin_dir`` (as the encode stage writes them)."""
    return write_shards(task(cfg), bin_dir, dict(cfg.sentences), seed=cfg.task_seed)


def jobs(cfg: ClaimConfig) -> list[Job]:
    """Naive, every dense model and every method, for every seed."""
    return [Job(n, m, s) for s in cfg.seeds
            for n, m in ((NAIVE, NAIVE), *((d, NAIVE) for d in cfg.dense), *((m, m) for m in cfg.methods))]


def model(cfg: ClaimConfig, job: Job) -> ModelConfig:
    """The base model, or a dense baseline's shape."""
    return dataclasses.replace(cfg.model, **cfg.dense[job.system]) if job.system in cfg.dense else cfg.model


def spec(name: str, cfg: ClaimConfig, job: Job) -> JobSpec:
    """What job ``job`` of experiment ``name``'s claim trains and decodes."""
    data = DataConfig(languages=cfg.languages, pivot=cfg.languages[0], train_directions="en-centric",
                      eval_directions="en-centric", tags="target-prefix",
                      sources=(SourceConfig(name="synthetic", kind="embedded", splits=("train", "valid", "test")),),
                      citation="synthetic task (lsnmt.data.synthetic)")
    method_cfg = {} if job.method == NAIVE else {job.method: cfg.methods[job.method]}
    return JobSpec(name=name, data=data, model=model(cfg, job), train=dataclasses.replace(cfg.train, seed=job.seed),
                   decode=DecodeConfig(beam=cfg.beam, max_len_a=MAX_LEN_A, max_len_b=MAX_LEN_B), method_cfg=method_cfg)
