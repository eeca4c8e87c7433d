"""``train.tracker`` (lsnmt/train/tracker.py): each curve row reaches DVCLive or TensorBoard as it is written, so a
run in progress shows in ``dvc exp show`` / TensorBoard; a tracker that is not installed stops with one line naming
the setting and the package. The two live tests need the optional packages (``pip install -e .[tracking]``) and
say so when they are absent."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lsnmt.train import tracker
from lsnmt.train.config import TrainConfig
from lsnmt.train.curve import Curve
from lsnmt.train.trainer import NO_EFFECT

ROOT = Path(__file__).resolve().parents[2]
HAS_DVCLIVE = importlib.util.find_spec("dvclive") is not None
HAS_TENSORBOARD = importlib.util.find_spec("tensorboard") is not None


def test_none_is_the_default_and_changes_no_weights() -> None:
    assert TrainConfig().tracker == "none" and tracker.start("none", Path("unused"), False) is None
    assert "tracker" in NO_EFFECT  # switching it on resumes a run instead of restarting it


def test_where_each_tracker_writes(tmp_path: Path) -> None:
    assert tracker.folder("dvclive", Path("work/default/ckpt/lms")) == Path("dvclive/default/ckpt/lms")
    assert tracker.folder("tensorboard", Path("work/default/ckpt/lms")) == Path("work/default/ckpt/lms/tensorboard")
    assert tracker.folder("dvclive", tmp_path) == tmp_path / "dvclive"


@pytest.mark.parametrize(("kind", "module"), [("dvclive", "dvclive"), ("tensorboard", "torch.utils.tensorboard")])
def test_a_missing_tracker_names_the_setting_and_the_package(
    kind: str, module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails as when the package is not installed
    with pytest.raises(tracker.TrackerMissing) as err:
        tracker.start(kind, tmp_path, False)
    assert f"train.tracker: {kind} needs the package {kind}" in str(err.value)
    assert f"pip install {kind}" in str(err.value) and not (tmp_path / kind).exists()


def _dvc(repo: Path, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _workspace_metrics(repo: Path) -> dict:
    """``dvc exp show --json``'s metrics of the workspace row (what a user sees while the run goes on)."""
    rows = json.loads(_dvc(repo, "exp", "show", "--json", "--no-fetch"))
    workspace = next(r for r in rows if r["rev"] == "workspace")
    return workspace["data"]["metrics"]


@pytest.mark.skipif(not HAS_DVCLIVE, reason="dvclive is not installed (pip install -e .[tracking]): NOT checked")
def test_dvclive_shows_a_run_in_progress_in_dvc_exp_show(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a repository that ignores ``work/`` as this one does (DVC reads no ``dvc.yaml`` in an ignored folder),
    a training whose resumable folder is ``work/tiny/ckpt/naive`` shows its latest row in ``dvc exp show``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".gitignore").write_text((ROOT / ".gitignore").read_text(encoding="utf-8"), encoding="utf-8")
    _dvc(repo, "init", "-q")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=repo, check=True)
    monkeypatch.chdir(repo)
    work = Path("work/tiny/ckpt/naive")  # relative, as the stages hand it (lsnmt.paths)
    work.mkdir(parents=True)
    curve = Curve(work / "curve.tsv", None, tracker.start("dvclive", work, False))
    curve.append(10, 5.0, 4.9, 1e-3, None)  # the run is still going: no end, no close
    key = "dvclive/tiny/ckpt/naive/metrics.json"
    metrics = _workspace_metrics(repo)
    assert list(metrics) == [key], metrics
    assert metrics[key]["data"] == {"step": 10, "train": {"loss": 5.0, "nll": 4.9, "lr": 0.001}}
    curve.append(20, 4.0, 3.9, 2e-3, 4.5)
    assert _workspace_metrics(repo)[key]["data"]["train"] == {"loss": 4.0, "nll": 3.9, "lr": 0.002, "valid_loss": 4.5}
    ignored = subprocess.run(["git", "check-ignore", "-q", key], cwd=repo)
    assert ignored.returncode == 1  # not ignored: dvc exp run commits it with the experiment


@pytest.mark.skipif(
    not HAS_TENSORBOARD, reason="tensorboard is not installed (pip install -e .[tracking]): NOT checked"
)
def test_tensorboard_sees_every_row_as_it_is_written(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    curve = Curve(tmp_path / "curve.tsv", None, tracker.start("tensorboard", tmp_path, False))
    curve.append(10, 5.0, 4.9, 1e-3, None)
    curve.append(20, 4.0, 3.9, 2e-3, 4.5)
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("train/loss")] == [(10, 5.0), (20, 4.0)]
    assert [(e.step, e.value) for e in events.Scalars("train/valid_loss")] == [(20, 4.5)]
    assert (tmp_path / "curve.tsv").read_text().splitlines()[1].startswith("10\t5")  # the TSV is unchanged
