"""run.sh's DVC console (lsnmt/graph/brief.py): DVC's per-stage lines held back, a stage's own output, DVC's errors
and its other lines kept, a closing count; a real ``dvc`` on a two-stage project."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from lsnmt.graph.brief import StageChatter

ROOT = Path(__file__).resolve().parent.parent
DVC_YAML = """\
stages:
  one:
    cmd:
    - "true"
    - 'echo one-ran > one.txt; echo "one: start" >&2'
    outs: [one.txt]
  two:
    cmd: 'cat one.txt > two.txt; echo "two: done"'
    deps: [one.txt]
    outs: [two.txt]
"""


def _brief(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "lsnmt.graph.brief", *argv],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )


def test_dvc_repro_prints_the_stages_lines_and_a_count(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "dvc.yaml").write_text(DVC_YAML, encoding="utf-8")

    first = _brief(tmp_path, "repro")
    assert first.returncode == 0, first.stdout
    lines = first.stdout.splitlines()
    assert "one: start" in lines and "two: done" in lines, lines
    assert not [x for x in lines if x.startswith(("Running stage", "> ", "Updating lock", "Generating lock"))]
    assert "" not in lines, lines
    assert lines[-1] == "dvc repro: 2 stage(s) run, 0 up to date", lines

    again = _brief(tmp_path, "repro")
    assert again.returncode == 0 and "didn't change" not in again.stdout, again.stdout
    assert again.stdout.splitlines()[-1] == "dvc repro: 0 stage(s) run, 2 up to date"

    (tmp_path / "dvc.yaml").write_text(DVC_YAML.replace("cat one.txt > two.txt", "exit 3"), encoding="utf-8")
    failed = _brief(tmp_path, "repro")
    assert failed.returncode != 0
    assert "ERROR: failed to reproduce 'two'" in failed.stdout, failed.stdout
    assert "stage(s) run" not in failed.stdout


def test_the_filter_keeps_warnings_and_unknown_info() -> None:
    f = StageChatter()

    def rec(level: int, msg: str, *args: object) -> logging.LogRecord:
        return logging.LogRecord("dvc.stage.run", level, __file__, 1, msg, args, None)

    assert not f.filter(rec(logging.INFO, "Running stage '%s':", "train@naive"))
    assert not f.filter(rec(logging.INFO, "%s %s", ">", "python -m stages.train"))
    assert f.filter(rec(logging.INFO, "%s %s", "$", "something else"))
    assert f.filter(rec(logging.WARNING, "'%s' is empty.", "results/x"))
    assert f.filter(rec(logging.INFO, "To track the changes with git, run:"))
    assert f.summary(["exp", "run", "-S", "x=1"]) == "dvc exp run: 1 stage(s) run, 0 up to date"
    assert StageChatter().summary(["repro"]) is None
