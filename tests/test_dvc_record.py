"""Recording a run as the README says, then ``dvc metrics diff`` after a change: the DVC workflow of "After a run".

A real ``dvc repro`` of the tiny experiment's x-elm branch (``lm_eval`` and the stages before it; translation on
the tiny model is degenerate, every BLEU 0.0, so no MT number would move), ``git add dvc.lock`` and a commit, a
change of one params.yaml value that ``lm_eval`` reads (the ensemble's temperature: x-elm Sec. 5.2's
``alpha ∝ exp(-d^2 / T)`` weights), a rerun, and ``dvc metrics diff`` against the commit.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, copy_repo, use_params, venv_env

GIT = ["git", "-c", "user.name=ci", "-c", "user.email=ci@localhost"]


def _run(cmd: list[str], cwd: Path, stdout_only: bool = False) -> str:
    out = subprocess.run(cmd, cwd=cwd, env=venv_env(), capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(cmd)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout if stdout_only else out.stdout + out.stderr


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the x-elm branch twice: about 4 + 4 minutes on a busy 2-core machine
def test_dvc_metrics_diff_after_a_recorded_run_and_a_params_change(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    record = re.search(r"^git add dvc\.lock && git commit", readme, re.M)
    assert record, "README.md no longer says to commit dvc.lock after a run"
    repo = copy_repo(tmp_path / "repo")
    use_params(repo, ROOT / "tests" / "fixtures" / "params.tiny.yaml")
    _run([*GIT, "add", "-A"], repo)
    _run([*GIT, "commit", "-qm", "code"], repo)
    _run(["dvc", "repro", "lm_eval"], repo)

    _run([*GIT, "add", "dvc.lock"], repo)  # the README's record step: dvc.lock is not ignored
    _run([*GIT, "commit", "-qm", "tiny run"], repo)
    assert _run(["git", "ls-files", "dvc.lock"], repo).strip() == "dvc.lock"
    target = "results/tiny/metrics/lm_eval/tfidf_ens.json"  # one file per model (lsnmt/eval/metrics.py)
    before = json.loads((repo / target).read_text())

    params = repo / "params.yaml"
    text = params.read_text(encoding="utf-8")
    old = "ensemble: {temperature: 0.1, top_m: [1]}"
    assert old in text, "tests/fixtures/params.tiny.yaml changed its x-elm ensemble line"
    params.write_text(text.replace(old, "ensemble: {temperature: 1.0, top_m: [1]}"), encoding="utf-8")
    _run(["dvc", "repro", "lm_eval"], repo)

    # the other stages' metrics files were never written (only the x-elm branch ran): DVC says so on stderr
    diff = json.loads(_run(["dvc", "metrics", "diff", "--json", "--targets", "results/tiny/metrics/lm_eval"], repo,
                           stdout_only=True))
    assert set(diff) == {target}, diff  # only the ensemble's perplexity depends on T
    changed = diff[target]
    assert set(changed) == {"ppl"}, changed
    assert changed["ppl"]["old"] == before["ppl"]
    assert changed["ppl"]["new"] != changed["ppl"]["old"]
    table = _run(["dvc", "metrics", "diff"], repo)
    assert re.search(r"results/tiny/metrics/lm_eval/tfidf_ens\.json\s+ppl\s+\S+\s+\S+", table), table
