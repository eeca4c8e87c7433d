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

Two tiers. The default tier trains one representative of every method kind (:data:`KINDS`) on a smaller task
(:data:`QUICK`: 8 concepts, 300 training pairs per direction, 300 updates of 500 tokens, ~4x cheaper) against the
floors of :data:`QUICK_FLOORS`, measured on that setting; ``--slow`` trains all of :data:`METHODS` as above.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from lsnmt.data.corpus import Vocab
from lsnmt.data.synthetic import Task
from models.config import kinds
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
FLOORS: dict[str, float] = {"clsr": 85.0, "clsr_star": 85.0}
"""Lower floors, with the reason: CLSR trains through soft gates with noise ramped up over the run and translates
through hard gates (Zhang et al. 2021), and at this size the mismatch costs it: BLEU 87.6 / 89.2 (CLSR / CLSR*) at
400 updates, 88.7 for CLSR at 700 (its xx-en directions lag). CPU training is bitwise reproducible, so these are
the values the suite sees."""
UNTRAINED: dict[str, set[str]] = {}
"""Parameter tensors that English-centric training cannot reach, per method (none so far)."""


PREFERRED = {"clm": "sclm", "adapter": "adapter_lang"}
"""The method of :data:`METHODS` that stands for a kind in the default tier where it is not the kind's first."""


def representatives() -> dict[str, str]:
    """Method kind (``naive`` and every entry of the kind table) -> the method that stands for it in the default
    tier: :data:`PREFERRED`, else the first of :data:`METHODS` of that kind, else the kind itself with its default
    settings (a kind added to the table is covered without touching this file)."""
    out = {"naive": "naive"}
    for kind in kinds.KINDS:
        of_kind = [n for n, e in METHODS.items() if e.get("kind") == kind]
        out[kind] = PREFERRED.get(kind) or (of_kind[0] if of_kind else kind)
    return out


def method_entry(name: str) -> dict[str, Any]:
    """The ``method_cfg`` entry of ``name``: :data:`METHODS`' or, for a kind without one, the kind's defaults."""
    return METHODS.get(name, {"kind": name})


KINDS = representatives()
"""Method kind -> the method of :data:`METHODS` that stands for it in the default tier."""
QUICK = {"concepts": 8, "train": 300, "max_steps": 300, "max_tokens": 500, "warmup_steps": 100}
"""The default tier's cheaper setting (lr, model and everything else as :data:`TRAIN` and :data:`MODEL`)."""
QUICK_FLOOR = 80.0
"""The default tier's BLEU floor, every kind alike. Measured on :data:`QUICK` with one thread (CPU training is
bitwise reproducible; torch 2.13): naive 100.0, LMS 96.6, FD 84.4 (Share) / 88.3 (LS), LMS+FD 99.7 / 99.7,
Switch 86.6, CLSR 93.2, sCLM 84.4, language adapters 99.3, deep 96.3, LSL 95.7; 100 CPU seconds for the ten.
FD's Share route and sCLM are the closest (4.4 above): at 300 updates they are still climbing (at 250: 82.8, and
sCLM reached 54.5 at 200 on a 200-update schedule), so a kind that stops learning falls far below it."""
QUICK_FLOORS: dict[str, float] = {"switch": 75.0}
"""Per-representative exceptions to :data:`QUICK_FLOOR`. Switch: after the fused attention projections and the
one-operation dropout (issue 38: other random draws, the same maths) its seed-1 run reaches 77.0; seeds 1-4 give
77.0, 92.8, 97.4, 92.8 (before: 80.5, 90.3, 99.7, 91.1; one thread, 2026-11-28), so seed 1
sits at the low end of its spread, not below a kind that learns (one that stops falls far below: sCLM at 200
updates, 54.5)."""


@pytest.fixture
def one_thread() -> Iterator[None]:
    """One intra-op thread for the default tier: its floors were measured so (CPU results depend on the thread
    count), and on a shared machine several threads spin-wait for each other."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def quick_bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    task = Task(languages=LANGS, concepts=QUICK["concepts"], min_len=2, max_len=5)
    return write_bin(task, tmp_path_factory.mktemp("quick"), {"train": QUICK["train"], "valid": 20, "test": 50})


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_learns(kind: str, quick_bin_dir: Path, tmp_path: Path, one_thread: None) -> None:
    name = KINDS[kind]
    train = {**TRAIN, **{k: QUICK[k] for k in ("max_steps", "max_tokens", "warmup_steps")},
             "validate_every": QUICK["max_steps"], "save_every": QUICK["max_steps"]}
    _learns(name, experiment_for(name, train), quick_bin_dir, tmp_path, QUICK_FLOORS.get(name, QUICK_FLOOR))


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    task = Task(languages=LANGS, concepts=12, min_len=2, max_len=5)
    return write_bin(task, tmp_path_factory.mktemp("task"), {"train": 600, "valid": 20, "test": 50})


def experiment_for(name: str, train: dict[str, Any] = TRAIN) -> Any:
    cfg = {} if name == "naive" else {name: method_entry(name)}
    return task_experiment(cfg, MODEL, train, search=SEARCH if name == "lsl_nas" else None)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(METHODS))
def test_method_learns(name: str, bin_dir: Path, tmp_path: Path) -> None:
    _learns(name, experiment_for(name), bin_dir, tmp_path, FLOORS.get(name, FLOOR))


def _learns(name: str, exp: Any, bin_dir: Path, tmp_path: Path, floor: float) -> None:
    model = train_method(exp, name, bin_dir, tmp_path)
    kind = method_entry(name).get("kind") if name != "naive" else None
    routes = list(kinds.KINDS[kind].routes if kind else ()) or [None]
    for route in routes:
        scores = score(exp, name, model, bin_dir, **({"route": route} if route else {}))
        exact, bleu = scores.mean(scores.exact), scores.mean(scores.bleu)
        print(f"{name} route={route}: exact {exact:.1f} %, BLEU {scores.mean(scores.bleu):.1f}, "
              f"zero-shot exact {scores.mean(scores.exact, zero_shot=True):.1f} %, per direction {scores.exact}")
        assert bleu >= floor, f"{name} (route {route}) reaches BLEU {bleu:.1f} < {floor}: {scores.bleu}"
    changed, same = changed_tensors(model, exp, name, Vocab.load(bin_dir))
    untrained = set(same) - UNTRAINED.get(name, set())
    assert changed and not untrained, f"{name}: parameters never updated by training: {sorted(untrained)}"


def test_a_kind_added_in_one_place_learns_and_reaches_the_protocol(
        quick_bin_dir: Path, tmp_path: Path, one_thread: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """One entry in the kind table (tests/system/toy_kind.py) is all a plain method needs: it is a default-tier
    representative, it trains, translates and reaches the floor, and the protocol's method table cites it."""
    from lsnmt.protocol.methods import rows
    from tests.system import toy_kind

    monkeypatch.setitem(kinds.KINDS, "toy", toy_kind.KIND)
    assert representatives()["toy"] == "toy"
    train = {**TRAIN, **{k: QUICK[k] for k in ("max_steps", "max_tokens", "warmup_steps")},
             "validate_every": QUICK["max_steps"], "save_every": QUICK["max_steps"]}
    exp = experiment_for("toy", train)
    _learns("toy", exp, quick_bin_dir, tmp_path, QUICK_FLOOR)
    assert ("toy", "toy", "–", toy_kind.KIND.source) in rows(exp, "lsl")
