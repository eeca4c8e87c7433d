"""``scripts/claim_probe.py`` at tiny size: the claim's task with 60 training sentences, FD (two systems: Share and
LS) after 2 and then 3 updates, resumed in between."""

from __future__ import annotations

import json
from pathlib import Path

from lsnmt.train import checkpoint as ckpt
from tests.conftest import ROOT
from tests.scripts.helpers import run_script


def test_probe_prints_every_system_after_each_budget(tmp_path: Path) -> None:
    task = '"sentences={train: 60, valid: 4, test: 8}"'
    args = f"--params {ROOT / 'params.yaml'} --system fd --steps 2 3 --task {task} --work {tmp_path}"
    rows = [json.loads(line) for line in run_script("scripts/claim_probe.py", args).splitlines()]
    assert [(r["system"], r["steps"], r["seed"]) for r in rows] == [
        ("fd", 2, 1),
        ("fd_ls", 2, 1),
        ("fd", 3, 1),
        ("fd_ls", 3, 1),
    ]
    assert all(0 <= r["bleu"] <= 100 and 0 <= r["exact"] <= 100 and r["cpu_seconds"] >= 0 for r in rows)
    assert (tmp_path / "bin" / "meta.json").is_file()  # the task's data, written once
    assert ckpt.load(tmp_path / "job" / "ckpt" / "last.pt")["step"] == 3  # the second budget resumed the first
