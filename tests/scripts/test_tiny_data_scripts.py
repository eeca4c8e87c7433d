"""``scripts/learning_curve.py`` and ``benchmarks/decode_cost.py`` on the tiny experiment's real data (the data
stages run on 200 pairs a direction): the curve trains two budgets and scores every side of the test set, and
decode_cost times the curve's model at batch size 1. Both read the encode stage's folders (``lsnmt.paths``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lsnmt.train import checkpoint as ckpt
from tests.conftest import ROOT, venv_env
from tests.scripts.helpers import run_script

DATA_STAGES = ("download", "prepare", "spm", "sample", "encode")


@pytest.fixture(scope="module")
def tiny_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the tiny experiment's params.yaml (200 training pairs and 20 test sentences a direction) where
    the data stages have run."""
    root = tmp_path_factory.mktemp("tiny")
    (root / "embedded").symlink_to(ROOT / "embedded")  # the embedded sources' path
    params = yaml.safe_load((ROOT / "tests/fixtures/params.tiny.yaml").read_text(encoding="utf-8"))
    for source in params["experiments"]["tiny"]["data"]["sources"]:
        source["max_pairs"] = 200 if source["splits"] == ["train"] else 20
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    for stage in DATA_STAGES:
        run = [sys.executable, "-m", f"stages.{stage}"]
        subprocess.run(run, cwd=root, env=venv_env(), check=True, capture_output=True, timeout=120)
    return root


def test_learning_curve_scores_each_budget_and_decode_cost_times_its_model(
    tiny_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tiny_repo)
    printed = run_script("scripts/learning_curve.py", "--experiment tiny --steps 2 3 --sentences 2 --out curve.tsv")
    rows = [r.split("\t") for r in Path("curve.tsv").read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["steps", "cpu_seconds", "test_set", "side", "bleu", "chrf"]
    sides = ("en-xx", "xx-en", "xx-yy")  # en-de en-sw / de-en sw-en / de-sw (zero-shot)
    assert [(r[0], r[2], r[3]) for r in rows[1:]] == [(s, "test", side) for s in ("2", "3") for side in sides]
    assert all(0 <= float(r[4]) <= 100 and 0 <= float(r[5]) <= 100 for r in rows[1:])
    assert float(rows[4][1]) >= float(rows[1][1])  # CPU seconds add up over the budgets
    assert printed.splitlines() == ["\t".join(r) for r in rows[1:]]
    assert ckpt.load(Path("work/curve/ckpt/last.pt"))["step"] == 3  # the second budget resumed the first

    args = "--experiment tiny --method naive --model work/curve/out/model.pt --sentences 2 --runs 2"
    printed = run_script("benchmarks/decode_cost.py", args)
    report, _, line = printed.rstrip("\n").rpartition("\n")
    got = json.loads(report)
    assert (got["experiment"], got["method"], got["pair"]) == ("tiny", "naive", "de-en")
    assert (got["sentences"], got["runs"], got["batch_size"], got["beam"], got["threads"]) == (2, 2, 1, 2, 1)
    assert got["tokens_per_second"] > 0 and got["tokens_per_run"] >= 2
    assert got["train_params"] >= got["inference_params_max"] >= got["inference_params_min"] > 0
    assert line.startswith("naive de-en: ") and line.endswith("(batch 1, beam 2, 1 thread(s), 2 runs of 2 sentences)")
