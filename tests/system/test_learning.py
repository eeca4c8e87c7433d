"""Every translation method learns (Sockeye's system tests: tiny models, synthetic data, a quality floor).

The task (:mod:`lsnmt.data.synthetic`): English, German, French and Russian as four lexicons of 12 concepts,
English-centric training, de-fr held out as a zero-shot direction (German's reversed word order, the task's
other language-specific trait, is left to the small-scale claim: it costs every method ~2x the updates). Each method of
:data:`METHODS` trains :data:`STEPS` updates of a 2+2-layer, 64-dimensional pre-norm model on CPU, then translates
the 50 held-out test sentences of every direction with ``translate``'s loader and beam search. Asserted:

* corpus BLEU >= :data:`FLOOR` averaged over the six supervised directions (naive reaches ~99; exact match is
  printed beside it: a sentence-level 90 % floor sits inside the run-to-run spread of the slower methods);
* every parameter tensor of the trained model differs from its initialisation, so no module is detached or
  never routed to (``UNTRAINED`` lists the tensors that cannot train on English-centric data, with the reason);
* FD and LMS+FD: the one trained model reaches the floor through both routes, Share and LS (LMS-FD Sec. 3-5).

The zero-shot direction is decoded and printed, not asserted: English-centric models translate it off-target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsnmt.data.synthetic import Task
from lsnmt.train.corpus import Vocab
from tests.system.harness import LANGS, changed_tensors, score, task_experiment, train_method, write_bin

FLOOR = 90.0
STEPS = 400
MODEL = {"embed_dim": 64, "ffn_dim": 128, "heads": 4, "encoder_layers": 2, "decoder_layers": 2, "dropout": 0.0,
         "normalize_before": True}
TRAIN = {"max_tokens": 1000, "max_steps": STEPS, "lr": 5e-3, "warmup_steps": 100, "batching": "mixed",
         "label_smoothing": 0.1, "log_every": 100, "validate_every": STEPS, "save_every": STEPS, "keep_last": 1,
         "seed": 1}
SEARCH = {"lsl_search": {"seeds": [1], "max_steps": 150}}

METHODS: dict[str, dict[str, Any]] = {
    "naive": {},
    "lms": {"kind": "lms", "rank": 4, "synthesis": "pair"},  # LMS-FD Sec. 2
    "lms_langwise": {"kind": "lms", "rank": 4, "synthesis": "language"},
    "fd": {"kind": "fd", "route": "share"},  # Sec. 3 (decoded through both routes)
    "lms_fd": {"kind": "lms_fd", "rank": 4, "route": "share"},  # Sec. 4 (both routes)
    "switch": {"kind": "switch", "experts": 4, "every": 2, "capacity_factor": 1.0, "balance_weight": 0.01},
    "clsr": {"kind": "clsr", "budget": 0.3, "share": True},
    "clsr_star": {"kind": "clsr", "budget": 0.3, "share": False},
    "sclm": {"kind": "clm", "features": 8},  # CLM Sec. 3.3
    "mclm": {"kind": "clm", "features": 8, "encoder": "mclm", "decoder": "mclm"},
    "sclm_e": {"kind": "clm", "features": 8, "decoder": "none"},  # Table 3 placements
    "sclm_d": {"kind": "clm", "features": 8, "encoder": "none"},
    "clm_dedicated": {"kind": "clm", "features": 8, "encoder": "sclm", "decoder": "mclm"},
    "sclm_top": {"kind": "clm", "features": 8, "sublayers": ["ffn"]},  # Table 9
    "clm_ls": {"kind": "clm", "features": 8, "encoder": "ls", "decoder": "ls"},
    "adapter_pair": {"kind": "adapter", "bottleneck": 16, "encoder": "pair", "decoder": "pair"},
    "adapter_lang": {"kind": "adapter", "bottleneck": 16, "encoder": "src", "decoder": "tgt"},
    "deep": {"kind": "deep", "encoder_layers": 4, "decoder_layers": 4},  # CLM Sec. 4.2
    "lsl": {"kind": "lsl", "src": [1], "tgt": [2]},  # LSL Sec. 3.1
    "lsl_ffn": {"kind": "lsl", "src": [1], "tgt": [2], "components": "ffn"},  # Table 4
    "lsl_dense": {"kind": "lsl", "src": [1], "tgt": [2], "dense_steps": 100},  # Sec. 3.3
    "lsl_nas": {"kind": "lsl", "architecture": "lsl_search"},  # Sec. 3.2: the search, then its layout
}
TWO_ROUTES = {"fd", "lms_fd"}
FLOORS: dict[str, float] = {"clsr": 85.0, "clsr_star": 85.0}
"""Lower floors, with the reason: CLSR trains through soft gates with noise ramped up over the run and translates
through hard gates (Zhang et al. 2021), and at this size the mismatch costs it: BLEU 87.6 / 89.2 (CLSR / CLSR*) at
400 updates, 88.7 for CLSR at 700 (its xx-en directions lag). CPU training is bitwise reproducible, so these are
the values the suite sees."""
UNTRAINED: dict[str, set[str]] = {}
"""Parameter tensors that English-centric training cannot reach, per method (none so far)."""


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    task = Task(languages=LANGS, concepts=12, min_len=2, max_len=5)
    return write_bin(task, tmp_path_factory.mktemp("task"), {"train": 600, "valid": 20, "test": 50})


def experiment_for(name: str) -> Any:
    cfg = {} if name == "naive" else {name: METHODS[name]}
    return task_experiment(cfg, MODEL, TRAIN, search=SEARCH if name == "lsl_nas" else None)


@pytest.mark.parametrize("name", list(METHODS))
def test_method_learns(name: str, bin_dir: Path, tmp_path: Path) -> None:
    exp = experiment_for(name)
    model = train_method(exp, name, bin_dir, tmp_path)
    routes = ["share", "ls"] if name in TWO_ROUTES else [None]
    for route in routes:
        scores = score(exp, name, model, bin_dir, **({"route": route} if route else {}))
        exact, bleu = scores.mean(scores.exact), scores.mean(scores.bleu)
        print(f"{name} route={route}: exact {exact:.1f} %, BLEU {scores.mean(scores.bleu):.1f}, "
              f"zero-shot exact {scores.mean(scores.exact, zero_shot=True):.1f} %, per direction {scores.exact}")
        floor = FLOORS.get(name, FLOOR)
        assert bleu >= floor, f"{name} (route {route}) reaches BLEU {bleu:.1f} < {floor}: {scores.bleu}"
    changed, same = changed_tensors(model, exp, name, Vocab.load(bin_dir))
    untrained = set(same) - UNTRAINED.get(name, set())
    assert changed and not untrained, f"{name}: parameters never updated by training: {sorted(untrained)}"
