"""After a Snakemake run (as on a cluster), DVC takes the outputs as its own and sweeps on them: `dvc commit`
leaves nothing to reproduce, a changed decoding setting replans only translation, and `dvc exp run -S`
reruns that and records the experiment (tiny experiment; --slow)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, copy_repo, use_params
from .wiring import commit_outputs_and_plan_a_sweep, run


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_dvc_commit_then_exp_run_after_snakemake(tmp_path: Path) -> None:
    repo = copy_repo(tmp_path / "repo")
    use_params(repo, ROOT / "tests/fixtures/params.tiny.yaml")
    run(repo, "snakemake", "--cores", "2")
    commit_outputs_and_plan_a_sweep(repo, "tiny", yaml.safe_load((repo / "params.yaml").read_text())["methods"])

    run(repo, "dvc", "exp", "run", "-n", "beam1", "-S", "experiments.tiny.decode.beam=1")
    assert "beam1" in run(repo, "dvc", "exp", "list")
    assert yaml.safe_load((repo / "params.yaml").read_text())["experiments"]["tiny"]["decode"]["beam"] == 1
    assert "up to date" in run(repo, "dvc", "status").lower()
