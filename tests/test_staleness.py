"""No stale results (issue 17): editing a method's settings reruns exactly that method's training and what
follows it; editing a decoding key reruns translation and what follows, in both front ends.

Both front ends first run the whole default graph with a fake ``python`` (tests/fake_stage.py writes each stage's
outputs), Snakemake for real and DVC recording it (``dvc commit``), so their rerun decisions are the real ones.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, copy_repo, venv_env

pytestmark = pytest.mark.slow  # two minutes: a fake run of both front ends (test_graph.py checks the keys fast)


def _run(repo: Path, env: dict[str, str], *cmd: str) -> str:
    out = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(cmd)}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout + out.stderr


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A copy of the repository in which the whole default graph ran (fake stages) and DVC recorded it."""
    repo = copy_repo(tmp_path_factory.mktemp("stale"))
    fake = tmp_path_factory.mktemp("bin")
    (fake / "python").write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'tests' / 'fake_stage.py'} \"$@\"\n")
    (fake / "python").chmod(0o755)
    env = venv_env()
    env["PATH"] = f"{fake}{os.pathsep}{env['PATH']}"
    _run(repo, env, "snakemake", "--cores", "1", "--quiet")
    _run(repo, env, "dvc", "commit", "--force", "--quiet")
    assert "up to date" in _run(repo, env, "dvc", "status").lower()
    return repo, env


def _edit(repo: Path, change, exp: str) -> str:
    """Apply ``change`` to params.yaml's ``experiments.<exp>``; return the original text (to restore)."""
    text = (repo / "params.yaml").read_text()
    params = yaml.safe_load(text)
    change(params["experiments"][exp])
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return text


def _snakemake_jobs(repo: Path, env: dict[str, str]) -> set[str]:
    """Jobs ``snakemake -n`` would run, as ``rule`` or ``rule@wildcard`` (DVC's names)."""
    out = _run(repo, env, "snakemake", "-n", "--cores", "1")
    jobs = set()
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", out):
        head = re.match(r"(?:local)?rule (\w+):", block)
        if not head or head.group(1) == "all":
            continue
        wild = re.search(r"^\s+wildcards: (.*)$", block, re.M)
        values = dict(kv.split("=", 1) for kv in wild.group(1).split(", ")) if wild else {}
        item = next((values[k] for k in ("method", "expert", "target") if k in values), None)
        jobs.add(f"{head.group(1)}@{item}" if item else head.group(1))
    return jobs


def _dvc_stages(repo: Path, env: dict[str, str]) -> set[str]:
    out = _run(repo, env, "dvc", "repro", "--dry")
    return {line.split("'")[1] for line in out.splitlines() if line.startswith("Running stage")}


def _after(change, repo: Path, env: dict[str, str], exp: str = "default") -> tuple[set[str], set[str]]:
    text = _edit(repo, change, exp)
    try:
        return _snakemake_jobs(repo, env), _dvc_stages(repo, env)
    finally:
        (repo / "params.yaml").write_text(text)


def test_a_method_setting_reruns_that_training_and_what_follows(ran) -> None:
    repo, env = ran
    smk, dvc = _after(lambda exp: exp["method_cfg"]["lms"].update(rank=16), repo, env)
    follows = {"translate@lms", "evaluate", "report"}
    assert smk == {"train@lms"} | follows
    assert "train@lms" in dvc and dvc <= {"train@lms"} | follows, dvc


def test_a_decoding_key_reruns_translation_and_what_follows(ran) -> None:
    repo, env = ran
    methods = yaml.safe_load((repo / "params.yaml").read_text())["methods"]
    smk, dvc = _after(lambda exp: exp["decode"].update(beam=1), repo, env)
    translate = {f"translate@{m}" for m in methods}
    assert smk == translate | {"evaluate", "report"}
    assert translate <= dvc <= translate | {"evaluate", "report"}, dvc


def test_a_counted_paper_configuration_reruns_the_params_table_only(ran) -> None:
    """reports/params.csv counts the paper experiments counts.yaml links: editing one's method entry reruns the
    ``params`` stage and the report that prints it, and no stage of the default run; its decoding keys rerun none."""
    repo, env = ran
    smk, dvc = _after(lambda exp: exp["method_cfg"]["lms"].update(rank=48), repo, env, "iwslt14")
    assert smk == {"params", "report"}
    assert "params" in dvc and dvc <= {"params", "report"}, dvc
    assert _after(lambda exp: exp["decode"].update(beam=1), repo, env, "iwslt14") == (set(), set())
