"""``scripts/make_task_fixtures.py`` rewrites the committed NER / QA fixtures of ``embedded/tasks`` byte for byte
(its docstring's promise: deterministic, so the committed files are its output)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT
from tests.scripts.helpers import run_script

COMMITTED = ROOT / "embedded" / "tasks"


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_rerun_reproduces_the_committed_fixtures(tmp_path: Path) -> None:
    assert run_script("scripts/make_task_fixtures.py", f"--out {tmp_path}") == ""
    written, committed = files(tmp_path), files(COMMITTED)
    assert len(written) == 17  # WikiANN: 5 languages x 3 splits; TyDiQA: train and dev
    assert written == {k: v for k, v in committed.items() if k != "PROVENANCE.md"}
