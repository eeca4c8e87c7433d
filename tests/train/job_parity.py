"""Three tiny trainings, one of each trainer (translation, an x-elm LM, a task unit), and what they produce: the
curve (losses, rates), the work dir's fingerprint and a digest of the final weights.

Run as a script (``python -m tests.train.job_parity``) it prints them as JSON: the golden values of
``tests/train/test_job_parity.py`` were printed so, on the code before the trainers shared their job assembly
(``lsnmt/train/job.py``, issue 41), and are pinned there.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import torch

from lsnmt.train import checkpoint as ckpt
from lsnmt.train.digest import state_digest

WEIGHT_DECAY = 0.01  # nonzero, so that a drift in which parameters decay shows


def _curve(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines[1:]]


def _fingerprint(work: Path) -> str:
    return json.loads((work / "config.json").read_text(encoding="utf-8"))["fingerprint"]


def translation(root: Path) -> dict[str, Any]:
    """``lsnmt.train.trainer.train`` on the tiny en/de/fr corpus, LMS+FD (two passes, its own criterion)."""
    from lsnmt import methods
    from lsnmt.train.trainer import train
    from models.build import build_transformer
    from models.config.lms import LMSFDConfig
    from models.ls import criterion
    from tests.train.helpers import make_bin, tiny_experiment

    bin_dir = make_bin(root / "bin")
    exp = tiny_experiment(weight_decay=WEIGHT_DECAY)
    cfg = LMSFDConfig(rank=2)

    def factory(model_cfg: Any, **kw: Any) -> torch.nn.Module:
        return build_transformer(model_cfg, method="lms_fd", method_cfg=cfg, **kw)

    train(
        exp,
        bin_dir,
        root / "out",
        root / "work",
        model_factory=factory,
        criterion=criterion("lms_fd"),
        method=methods.record("m", "lms_fd", cfg),
    )
    return {
        "curve": _curve(root / "work" / "curve.tsv"),
        "fingerprint": _fingerprint(root / "work"),
        "weights": state_digest(ckpt.load(root / "out" / "model.pt")["model"]),
    }


def xelm(root: Path) -> dict[str, Any]:
    """``lsnmt.xelm.trainer.train_lm``: the seed LM of the tiny x-elm experiment (linear decay, warm-up)."""
    from lsnmt.xelm import jobs
    from lsnmt.xelm.lmdata import load_meta
    from lsnmt.xelm.trainer import train_lm
    from tests.xelm.helpers import experiment, make_lm_dir

    exp = experiment()
    lm = make_lm_dir(root / "data")
    train_lm(jobs.seed_job(exp.xelm, lm), exp.xelm.lm, lm, load_meta(lm), root / "work", root / "out")
    return {
        "curve": _curve(root / "work" / "curve.tsv"),
        "fingerprint": _fingerprint(root / "work"),
        "weights": state_digest(ckpt.load(root / "out" / "model.pt")["model"]),
    }


def task(root: Path) -> dict[str, Any]:
    """``lsnmt.tasks.train.run_unit``: one LMS+FD NER unit on the embedded WikiANN fixture (warm-up, decay)."""
    from lsnmt.tasks.config import EncoderConfig, TaskConfig, TaskSource
    from lsnmt.tasks.prep import prep_task
    from lsnmt.tasks.train import Prepared, Unit, run_unit
    from models.config.lms import LMSFDConfig

    fixtures = Path(__file__).resolve().parents[2] / "embedded" / "tasks" / "wikiann"
    enc = EncoderConfig(init="random", hidden_size=32, layers=2, heads=2, ffn_dim=64, vocab_size=300)
    cfg = TaskConfig(
        kind="ner",
        languages=("en", "fr"),
        source=TaskSource(kind="wikiann"),
        encoder=enc,
        epochs=2,
        batch_size=8,
        lr=2e-3,
        max_length=32,
        seeds=(1,),
        select="best",
        warmup_steps=3,
        weight_decay=WEIGHT_DECAY,
    )
    prep_task("wikiann", cfg, fixtures, root / "prep")
    unit = Unit("wikiann", cfg, "lms_fd", "lms_fd", LMSFDConfig(rank=2, synthesis="language"), 1, root / "work")
    result = run_unit(unit, Prepared.load(root / "prep"), torch.device("cpu"))
    return {
        "curve": [[str(r[k]) for k in ("epoch", "step", "loss", "dev_f1")] for r in result["curve"]],
        "fingerprint": _fingerprint(root / "work"),
        "routes": result["routes"],
        "weights": state_digest(ckpt.load(root / "work" / "last.pt")["model"]),
    }


def measure(root: Path) -> dict[str, dict[str, Any]]:
    """The three trainings' curves, fingerprints and weight digests, run under ``root``."""
    torch.set_num_threads(1)
    return {"translation": translation(root / "translation"), "xelm": xelm(root / "xelm"), "task": task(root / "task")}


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        json.dump(measure(Path(tmp)), sys.stdout, indent=1)
