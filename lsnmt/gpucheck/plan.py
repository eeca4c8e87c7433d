"""What the check runs and how long each step may take: on a GPU, ``default_gpu`` as it is within 8 minutes; on
a CPU (``--cpu``), the same steps at tiny size, so that a test runs every one of them.

The experiment, ``gpu_check``, is ``default_gpu`` (its languages, data, model and training settings) with four
methods (:data:`TRAINED`: naive, the LMS-FD family's LMS and LMS+FD, and one LSL layout), ``train.log_every``
finer (it fixes no weights), ``decode.max_sentences`` fewer and the data stages' threads the machine's; the CPU
plan also shrinks the data, vocabulary and width (:data:`TINY`). A step gets its cap in seconds, or less where what
is left of the check's time must go to the later steps (:class:`lsnmt.gpucheck.steps.Ledger`).
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsnmt.typed import load_yaml

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = "gpu_check"
SOURCE = "default_gpu"
TRAINED = ("naive", "lms", "lsl_src_tgt", "lms_fd")
"""The four trainings run together on the one GPU (naive first alone); issue 38's GPU run trained these four."""
TRANSLATED = ("naive", "lms", "lsl_src_tgt")
"""Those translated and scored: naive, LMS and one LSL method."""
TINY: Mapping[str, Any] = {
    "data": {"languages": ["en", "de", "fr"], "zero_shot": ["de-fr"]},
    "sources": {
        "tatoeba": {"max_pairs": 300, "heldout": 20},
        "flores200": {"max_pairs": 20},
        "ntrex128": {"max_pairs": 20},
    },
    "spm": {"vocab_size": 300, "sentences_per_language": 300},
    "model": {"embed_dim": 16, "ffn_dim": 32, "heads": 2},
    "train": {
        "max_tokens": 512,
        "warmup_steps": 4,
        "validate_every": 4,
        "save_every": 4,
        "valid_max_sentences": 10,
        "cpu_threads": 1,
    },
    "decode": {"beam": 2, "cpu_threads": 1},
}
"""The CPU plan's sizes: 3 languages, a few hundred pairs, 300 pieces, 16 dimensions (layers kept: LSL's layout
names layers 1 and 2), 512 tokens per update."""


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The sizes and time budgets of one way of running the check."""

    device: str
    total: float
    """Seconds for the steps together (the whole check, less a margin for what it does itself)."""
    caps: Mapping[str, float]
    """The most seconds a step may take (benchmarks, data stages, tests, ``finish``, ``translate``)."""
    alone_box: float
    """Seconds naive trains alone (from its process's start)."""
    together_min: float
    """The least time-box of the four trainings together (they get what is left before ``finish`` and
    ``translate``, at most :attr:`together_max`)."""
    together_max: float
    grace: float
    """Seconds after its box for a training to stop cleanly (its checkpoint saved) before it is killed."""
    min_lines: int
    """Log lines (one per ``log_every`` updates) each training of a group shows before the group is stopped."""
    log_every: int
    first_updates: int
    """The updates of naive's start that are timed (issue 38: the first 100 in <= 10 s)."""
    full_steps: int | None
    """``train.max_steps`` (None: ``default_gpu``'s 3,000)."""
    decode_sentences: int
    threads: int
    tiny: bool
    bench: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Each benchmark step's arguments (``--json`` and ``--deadline`` are added)."""
    startup: float = 15.0
    """Seconds a benchmark's process needs besides its timings (imports, the device's start, the matmul peak)."""


def gpu_plan(minutes: float = 8.0) -> Plan:
    """One H100 or H200: ``default_gpu`` as it is, all of it in ``minutes``."""
    caps = {
        "device tests": 90,
        "download": 30,
        "prepare": 45,
        "spm": 90,
        "sample": 45,
        "encode": 45,
        "host cost": 75,
        "throughput default_gpu": 50,
        "throughput opus100": 105,
        "finish": 30,
        "translate": 60,
    }
    bench = {
        # default_gpu eager and as params.yaml compiles it, in one run: the compiled step's gain as a ratio
        "host cost": tuple(
            "--device cuda --precision bf16 --models default_gpu --compile none as-set --updates 10 "
            "--repeats 2 --warmup-seconds 15".split()
        ),
        "throughput default_gpu": tuple(f"--device cuda --experiment {SOURCE} --max-tokens 8192".split()),
        "throughput opus100": tuple("--device cuda --experiment opus100 --marian --mfu-tokens 16384".split()),
    }
    return Plan(
        device="cuda",
        total=minutes * 60 - 15,
        caps=caps,
        alone_box=45,
        together_min=30,
        together_max=math.inf,
        grace=15,
        min_lines=1,
        log_every=50,
        first_updates=100,
        full_steps=None,
        decode_sentences=100,
        threads=max(1, min(16, (os.cpu_count() or 2) // 2)),
        tiny=False,
        bench=bench,
    )


def cpu_plan() -> Plan:
    """Every step at tiny size on a CPU (``--cpu``): budgets that a loaded 2-core machine meets, boxes of seconds
    (each training stops after :attr:`Plan.min_lines` log lines), 1,000 updates that no box reaches, so that the
    stop, resume and finish that a slow GPU needs are what runs."""
    caps = {
        "device tests": 120,
        "download": 60,
        "prepare": 60,
        "spm": 60,
        "sample": 60,
        "encode": 60,
        "host cost": 120,
        "throughput default_gpu": 120,
        "throughput opus100": 150,
        "finish": 120,
        "translate": 120,
    }
    tiny = "--device cpu --tiny --updates 1 --threads 1"
    bench = {
        "host cost": tuple(
            "--device cpu --tiny --max-tokens 512 --updates 2 --repeats 1 --warmup-seconds 1 --compile none".split()
        ),
        "throughput default_gpu": tuple(f"{tiny} --experiment {SOURCE} --methods naive lsl_src_tgt".split()),
        "throughput opus100": tuple(f"{tiny} --experiment opus100 --methods naive --marian --mfu-tokens 16384".split()),
    }
    return Plan(
        device="cpu",
        total=840,
        caps=caps,
        alone_box=3,
        together_min=3,
        together_max=3,
        grace=120,
        min_lines=3,
        log_every=2,
        first_updates=4,
        full_steps=1000,
        decode_sentences=5,
        threads=1,
        tiny=True,
        bench=bench,
        startup=30,
    )


def check_params(plan: Plan, compile: str = "as-set", source: Path = ROOT / "params.yaml") -> dict[str, Any]:
    """params.yaml for the check: experiment ``gpu_check`` (module docstring); ``compile`` (a ``train.compile``
    mode, or ``as-set``) sets ``train.compile`` of its trainings."""
    raw = load_yaml(source)
    exp = copy.deepcopy(raw["experiments"][SOURCE])
    for key in ("claim", "lm_data", "xelm", "search"):
        exp.pop(key, None)
    exp["tasks"], exp["task_cfg"], exp["task_method_cfg"] = [], {}, {}
    exp["method_cfg"] = {m: exp["method_cfg"][m] for m in TRAINED}
    exp["methods"] = list(TRAINED)
    exp["train"]["log_every"] = plan.log_every
    if plan.full_steps:
        exp["train"]["max_steps"] = plan.full_steps
    if compile != "as-set":
        exp["train"]["compile"] = compile
    exp["decode"]["max_sentences"] = plan.decode_sentences
    exp["spm"]["threads"] = exp["encode"]["workers"] = plan.threads
    if plan.tiny:
        _shrink(exp)
    return {
        "experiment": EXPERIMENT,
        "methods": list(TRAINED),
        "tasks": [],
        "task_methods": ["naive"],
        "xelm_experts": [],
        "xelm_targets": [],
        "experiments": {EXPERIMENT: exp},
    }


def _shrink(exp: dict[str, Any]) -> None:
    for section, values in TINY.items():
        if section == "sources":
            for src in exp["data"]["sources"]:
                src.update(values.get(src["name"], {}))
        else:
            exp.setdefault(section, {}).update(values)


def with_steps(params: Mapping[str, Any], steps: int) -> dict[str, Any]:
    """``params`` with the check's ``train.max_steps`` set to ``steps`` (a training stopped there is finished so: the
    trainer resumes across a change of ``max_steps``, ``lsnmt.train.trainer.NO_EFFECT``)."""
    out = copy.deepcopy(dict(params))
    out["experiments"][EXPERIMENT]["train"]["max_steps"] = steps
    return out
