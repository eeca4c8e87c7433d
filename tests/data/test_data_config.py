"""The data stages' views of params.yaml (lsnmt.data.config, lsnmt.view): the same typed sections as
``Params.load``'s, the others neither read nor checked, and the same one-line errors naming the file and the key."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from lsnmt.data.config import DEFAULT_METRICS, DownloadView, EncodeView, PrepareView, SampleView, SpmView
from lsnmt.experiment.params import Params
from lsnmt.graph.dvc import defined_experiments, missing_keys
from lsnmt.typed import ConfigError
from lsnmt.view import keys, load_view
from lsnmt.xelm.data_config import LMDataView

from ..conftest import ROOT

TINY = ROOT / "tests" / "fixtures" / "params.tiny.yaml"


def _write(tmp_path: Path, change: Any) -> Path:
    raw = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    change(raw["experiments"]["tiny"])
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


VIEWS = (DownloadView, PrepareView, SpmView, SampleView, EncodeView, LMDataView)


@pytest.mark.parametrize("cls", VIEWS)
def test_the_data_view_is_the_whole_loads(cls: type) -> None:
    """Each section a data view reads is the one ``Params.load`` builds; the experiment's name comes with it."""
    whole = Params.load(TINY).get("tiny")
    name, part = load_view(TINY, None, cls)
    assert name == "tiny"
    got = {k: getattr(part, k.split(".")[-1]) for k in keys(cls)}

    def section(key: str) -> Any:
        a, _, b = key.partition(".")
        return getattr(getattr(whole, a), b) if b else getattr(whole, a)

    assert got == {k: section(k) for k in keys(cls)}
    assert "xelm" not in keys(cls) and not any(
        k.startswith(("train", "model", "method_cfg", "task")) for k in keys(cls)
    )


def test_a_section_the_data_stages_do_not_read_is_not_checked(tmp_path: Path) -> None:
    """A bad training key stops ``Params.load`` (every later stage), naming it, and not the data stages."""
    path = _write(tmp_path, lambda exp: exp["train"].update(lr=-1.0))
    with pytest.raises(ConfigError, match=r"experiments\.tiny\.train\.lr: must be > 0"):
        Params.load(path)
    assert load_view(path, "tiny", PrepareView)[1].data == Params.load(TINY).get("tiny").data


@pytest.mark.parametrize(
    ("change", "view", "expected"),
    [
        (lambda exp: exp["spm"].update(vocab_size=5), SpmView, r"experiments\.tiny\.spm\.vocab_size: 5 cannot hold"),
        (lambda exp: exp["prepare"].update(nope=1), PrepareView, r"experiments\.tiny\.prepare\.nope: unknown key"),
        (
            lambda exp: exp["sample"].update(per_source={"downsample": ["nope"]}),
            SampleView,
            r"experiments\.tiny\.sample\.per_source\.downsample\[0\]: 'nope' is not a source",
        ),
        (
            lambda exp: exp["evaluate"].update(metrics=["nope"]),
            DownloadView,
            r"experiments\.tiny\.evaluate\.metrics\[0\]: 'nope' is not one of",
        ),
        (
            lambda exp: exp["lm_data"].update(targets=["en"]),
            LMDataView,
            r"experiments\.tiny\.lm_data\.targets: an HMR target must not be",
        ),
    ],
    ids=["cross-section", "unknown-key", "downsample", "dotted-key", "lm-data"],
)
def test_a_bad_data_key_names_the_file_and_the_key(tmp_path: Path, change: Any, view: type, expected: str) -> None:
    path = _write(tmp_path, change)
    for load in (lambda: load_view(path, None, view), lambda: Params.load(path)):
        with pytest.raises(ConfigError, match=f"^{path}: {expected}"):
            load()


def test_an_experiment_name_is_a_name(tmp_path: Path) -> None:
    """It becomes a path (``data/{exp}/raw``): ``..`` stops at load, as an unknown one does."""
    with pytest.raises(ConfigError, match=r"--experiment: '\.\./x' is not a valid name"):
        load_view(TINY, "../x", PrepareView)
    with pytest.raises(ConfigError, match=r"experiment 'nope' is not defined \(known: tiny\)"):
        load_view(TINY, "nope", PrepareView)


def test_metrics_default_as_the_evaluate_section_does(tmp_path: Path) -> None:
    path = _write(tmp_path, lambda exp: exp.pop("evaluate"))
    metrics = load_view(path, None, DownloadView)[1].metrics
    assert metrics == DEFAULT_METRICS == Params.load(TINY).get("tiny").evaluate.__class__().metrics


SHAPES = {  # a params file that is not a mapping where one is read, and the one line that names it
    "list": ("- a\n- b\n", "<top>: expected a mapping, got list ['a', 'b']"),
    "scalar": ("42\n", "<top>: expected a mapping, got int 42"),
    "empty": ("", "<top>: expected a mapping, got an empty file"),
    "experiments-list": (
        "experiment: tiny\nexperiments: [a, b]\n",
        "experiments: expected a mapping, got list ['a', 'b']",
    ),
}
PARTIAL_LOADERS: dict[str, Any] = {  # every reader of params.yaml that does not build the whole file
    "data": lambda path: load_view(path, "tiny", PrepareView),
    "lm_data": lambda path: load_view(path, "tiny", LMDataView),
    "metrics": lambda path: load_view(path, "tiny", DownloadView),
    "dvc-experiments": lambda path: defined_experiments(path),
    "dvc-missing-keys": lambda path: missing_keys(path),
}
SECTIONS = {  # the tiny experiment, or one section of it a partial loader reads, as a list: the loaders that read it
    "experiment": ("experiments.tiny", ("data", "lm_data", "metrics")),
    "data": ("experiments.tiny.data", ("data", "lm_data")),
    "lm_data": ("experiments.tiny.lm_data", ("lm_data",)),
    "evaluate": ("experiments.tiny.evaluate", ("metrics",)),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("loader", PARTIAL_LOADERS)
def test_a_file_that_is_not_a_mapping_is_one_line_naming_it(tmp_path: Path, loader: str, shape: str) -> None:
    """A list-shaped params.yaml stopped ``download`` with ``AttributeError: 'list' object has no attribute 'get'``:
    each partial loader checks the file's shape first, as ``Params.load``'s ``build`` does, in its words (an empty
    file, which ``build`` reads as ``{}``, is named as one)."""
    text, expected = SHAPES[shape]
    path = tmp_path / "params.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        PARTIAL_LOADERS[loader](path)
    assert str(info.value) == f"{path}: {expected}"
    if shape != "empty":
        with pytest.raises(ConfigError, match="^" + re.escape(str(info.value)) + "$"):
            Params.load(path)


@pytest.mark.parametrize(
    ("section", "loader"), [(section, loader) for section, (_, readers) in SECTIONS.items() for loader in readers]
)
def test_a_section_that_is_a_list_is_one_line_naming_it(tmp_path: Path, section: str, loader: str) -> None:
    """In an otherwise valid file (``tests/fixtures/params.tiny.yaml``)."""
    key, _ = SECTIONS[section]
    raw = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    parent = raw["experiments"] if section == "experiment" else raw["experiments"]["tiny"]
    parent["tiny" if section == "experiment" else section] = ["a"]
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        PARTIAL_LOADERS[loader](path)
    assert str(info.value) == f"{path}: {key}: expected a mapping, got list ['a']"
    with pytest.raises(ConfigError, match="^" + re.escape(str(info.value)) + "$"):  # the whole file's words
        Params.load(path)


def test_download_on_a_list_shaped_file_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(SHAPES["list"][0], encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's code, whatever the venv's editable install is
    proc = subprocess.run(
        [sys.executable, "-m", "stages.download", "--params", str(path), "--experiment", "tiny"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.endswith(f"ERROR stages.download: {path}: {SHAPES['list'][1]}") and proc.stdout == ""
