"""params.yaml loads into typed config; every mistake names its key path."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lsnmt.experiment.params import Params
from lsnmt.typed import ConfigError

ROOT = Path(__file__).resolve().parent.parent
PARAM_FILES = sorted(p for p in ROOT.rglob("params*.yaml") if ".venv" not in p.parts and "data" not in p.parts)
PAPER_EXPERIMENTS = {"default", "iwslt14", "opus100", "opus15", "iwslt17_zeroshot", "wmt14_enxx", "wmt14_xxen",
                     "opus100_clm_enxx", "opus100_clm_xxen", "flores10_lsl",
                     "mc4_xelm"}


@pytest.mark.parametrize("path", PARAM_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_params_file_loads(path: Path) -> None:
    params = Params.load(path)
    for name, exp in params.experiments.items():
        assert exp.name == name


def test_experiments_defined() -> None:
    params = Params.load(ROOT / "params.yaml")
    assert PAPER_EXPERIMENTS <= set(params.experiments)
    assert params.experiment == "default"
    for name in PAPER_EXPERIMENTS - {"default"}:
        assert params.get(name).data.citation, f"{name} must cite the paper section its data comes from"


def test_direction_counts() -> None:
    params = Params.load(ROOT / "params.yaml")
    assert len(params.get("default").data.train_pairs) == 16
    assert len(params.get("iwslt14").data.train_pairs) == 16
    assert len(params.get("opus100").data.eval_pairs) == 2 * 94
    assert len(params.get("flores10_lsl").data.train_pairs) == 90
    assert len(params.get("iwslt17_zeroshot").data.eval_pairs) == 12


def _write(tmp_path: Path, mutate) -> Path:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    mutate(raw)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _error(tmp_path: Path, mutate) -> str:
    with pytest.raises(ConfigError) as info:
        Params.load(_write(tmp_path, mutate))
    return str(info.value)


def test_unknown_language_names_the_key(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["data"]["languages"].__setitem__(3, "xx"))
    assert "experiments.default.data.languages[3]: 'xx' is not a known language code" in msg
    assert str(tmp_path / "params.yaml") in msg


def test_unknown_key(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["sample"].__setitem__("temprature", 2))
    assert "experiments.default.sample.temprature: unknown key" in msg


def test_wrong_type(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["spm"].__setitem__("vocab_size", "big"))
    assert "experiments.default.spm.vocab_size: expected int, got str 'big'" in msg


def test_bad_literal(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["data"].__setitem__("tags", "prefix"))
    assert "experiments.default.data.tags: 'prefix' is not one of" in msg


def test_missing_file(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["data"]["sources"][0].__setitem__("path", "nope"))
    assert "experiments.default.data.sources[0].path: 'nope' does not exist" in msg


def test_missing_required_key(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["data"].pop("languages"))
    assert "experiments.default.data.languages: required key is missing" in msg


def test_unknown_experiment(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r.__setitem__("experiment", "nope"))
    assert "experiment: 'nope' is not defined under experiments" in msg
    with pytest.raises(ConfigError, match="experiment 'x' is not defined"):
        Params.load(ROOT / "params.yaml").get("x")


def test_missing_params_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="params file not found"):
        Params.load(tmp_path / "nope.yaml")


def test_config_is_frozen() -> None:
    exp = Params.load(ROOT / "params.yaml").get()
    with pytest.raises(AttributeError):
        exp.sample.temperature = 3.0  # type: ignore[misc]


def test_every_source_kind_exists() -> None:
    from lsnmt.data.sources import SOURCES

    for path in PARAM_FILES:
        for name, exp in Params.load(path).experiments.items():
            for src in exp.data.sources:
                assert src.kind in SOURCES, f"{path.name}: experiments.{name}: unknown source kind {src.kind!r}"
                assert set(src.splits) <= SOURCES[src.kind].splits, f"{name}.{src.name}: {src.splits}"
