"""Bad values stop at load: one row per rule, one line naming the key path (load-level only, no training).

Each row mutates the tiny fixture (tests/fixtures/params.tiny.yaml) and expects ``Params.load`` to raise a
:class:`ConfigError` whose message contains the key path and the reason; a few rows also run the cheapest
stage on the file and expect exit code 2, one error line and no file written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from lsnmt.experiment.params import Params
from lsnmt.typed import ConfigError, load_yaml

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests/fixtures/params.tiny.yaml"
TASKS = ROOT / "tests/fixtures/params.tasks.yaml"
Mutate = Callable[[dict[str, Any]], None]


def _exp(raw: dict[str, Any]) -> dict[str, Any]:
    return raw["experiments"]["tiny"]


def _set(section: str, **values: Any) -> Mutate:
    return lambda raw: _exp(raw)[section].update(values)


def _rename_experiment(new: str) -> Mutate:
    def mutate(raw: dict[str, Any]) -> None:
        raw["experiments"][new] = raw["experiments"].pop("tiny")
        raw["experiment"] = new
    return mutate


def _add_method(name: str, entry: dict[str, Any] | None = None, *, listed: bool = True) -> Mutate:
    def mutate(raw: dict[str, Any]) -> None:
        _exp(raw)["method_cfg"][name] = entry or {"kind": "lms", "rank": 2}
        if listed:
            raw["methods"] = [*raw["methods"], name]
    return mutate


def _source(i: int, **values: Any) -> Mutate:
    return lambda raw: _exp(raw)["data"]["sources"][i].update(values)


def _preset_heads(raw: dict[str, Any]) -> None:
    model = _exp(raw)["model"]
    del model["embed_dim"]  # transformer_small: 512 wide
    model["heads"] = 3


ROWS: list[tuple[str, Mutate, str]] = [
    ("max_steps", _set("train", max_steps=0), "experiments.tiny.train.max_steps: must be >= 1, got 0"),
    ("validate_every", _set("train", validate_every=0), "experiments.tiny.train.validate_every: must be >= 1"),
    ("save_every", _set("train", save_every=-3), "experiments.tiny.train.save_every: must be >= 1, got -3"),
    ("update_freq", _set("train", update_freq=0), "experiments.tiny.train.update_freq: must be >= 1"),
    ("warmup_steps", _set("train", warmup_steps=0), "experiments.tiny.train.warmup_steps: must be >= 1"),
    ("lr_negative", _set("train", lr=-0.001), "experiments.tiny.train.lr: must be > 0, got -0.001"),
    ("lr_nan", _set("train", lr=float("nan")), "experiments.tiny.train.lr: must be a finite number, got nan"),
    ("lr_inf", _set("train", lr=float("inf")), "experiments.tiny.train.lr: must be a finite number, got inf"),
    ("warmup_init_lr", _set("train", warmup_init_lr=0.1), "experiments.tiny.train.warmup_init_lr: 0.1 is above lr"),
    ("adam_beta", _set("train", adam_betas=[0.9, 1.0]), "experiments.tiny.train.adam_betas[1]: must be >= 0 and < 1"),
    ("label_smoothing", _set("train", label_smoothing=1.0), "experiments.tiny.train.label_smoothing: must be"),
    ("average", _set("train", final_checkpoint="average", keep_last=2, average_last=5),
     "experiments.tiny.train.average_last: averages 5 step checkpoints, but keep_last 2 keeps fewer"),
    ("dropout", _set("model", dropout=1.5), "experiments.tiny.model.dropout: must be >= 0 and < 1, got 1.5"),
    ("heads", _set("model", heads=3), "experiments.tiny.model.heads: embed_dim 16 is not a multiple of heads 3"),
    ("preset_heads", _preset_heads, "experiments.tiny.model.heads: embed_dim 512 is not a multiple of heads 3"),
    ("layers", _set("model", encoder_layers=0), "experiments.tiny.model.encoder_layers: must be >= 1"),
    ("method_width", _add_method("wide", {"kind": "lsl", "embed_dim": 15}),
     "experiments.tiny.method_cfg.wide: embed_dim 15 is not a multiple of heads 2"),
    ("beam", _set("decode", beam=0), "experiments.tiny.decode.beam: must be >= 1, got 0"),
    ("max_len", _set("decode", max_len_a=0.0, max_len_b=0), "experiments.tiny.decode.max_len_b: with max_len_a 0"),
    ("vocab_zero", _set("spm", vocab_size=0), "experiments.tiny.spm.vocab_size: must be >= 1 and <= 1048576"),
    ("vocab_huge", _set("spm", vocab_size=10**12), "experiments.tiny.spm.vocab_size: must be >= 1 and <= 1048576"),
    ("vocab_symbols", _set("spm", vocab_size=10), "experiments.tiny.spm.vocab_size: 10 cannot hold the 4 special"),
    ("coverage", _set("spm", character_coverage=0.0), "experiments.tiny.spm.character_coverage: must be > 0"),
    ("temperature", _set("sample", temperature=0.0), "experiments.tiny.sample.temperature: must be > 0, got 0.0"),
    ("sample_seed", _set("sample", seed=-1), "experiments.tiny.sample.seed: must be >= 0 and <= 4294967295, got -1"),
    ("sample_size_huge", _set("sample", size=10**15), "experiments.tiny.sample.size: must be >= 1 and <= 1000000000"),
    ("train_seed_huge", _set("train", seed=2**70), "experiments.tiny.train.seed: 1180591620717411303424 does not fit"),
    ("train_seed_33bit", _set("train", seed=2**32), "experiments.tiny.train.seed: must be >= 0 and <= 4294967295"),
    ("steps_huge", _set("train", max_steps=-(2**63)), "experiments.tiny.train.max_steps: -9223372036854775808 does"),
    ("xelm_seed", lambda raw: _exp(raw)["xelm"]["seed"].update(seed=-1), "experiments.tiny.xelm.seed.seed: must be"),
    ("downsample", lambda raw: _exp(raw)["sample"].update(per_source={"downsample": ["nope"]}),
     "experiments.tiny.sample.per_source.downsample[0]: 'nope' is not a source of data.sources"),
    ("max_chars", _set("prepare", max_chars=0), "experiments.tiny.prepare.max_chars: must be >= 1, got 0"),
    ("ratio", _set("sample", max_piece_ratio=0.5), "experiments.tiny.sample.max_piece_ratio: must be >= 1"),
    ("workers", _set("encode", workers=0), "experiments.tiny.encode.workers: must be >= 1, got 0"),
    ("retries", _set("download", retries=0), "experiments.tiny.download.retries: must be >= 1, got 0"),
    ("significance", _set("evaluate", significance=1.5), "experiments.tiny.evaluate.significance: must be > 0"),
    ("similarity_set", _set("evaluate", similarity_sets=["tatoeba"]),
     "experiments.tiny.evaluate.similarity_sets[0]: 'tatoeba' is not a source of data.sources with a multiway split"),
    ("sha256", _source(0, sha256="abc"), "experiments.tiny.data.sources[0].sha256: 'abc' is not a sha256 (64 hex"),
    ("tag", _source(0, tag="<H Q>"), "experiments.tiny.data.sources[0].tag: '<H Q>' is not one token without spaces"),
    ("max_pairs", _source(0, max_pairs=-5), "experiments.tiny.data.sources[0].max_pairs: must be >= 1, got -5"),
    ("experiment_traversal", _rename_experiment("../../x"), "experiment: '../../x' is not a valid name"),
    ("experiment_key", lambda raw: raw["experiments"].__setitem__("a/b", {}), "experiments.a/b: 'a/b' is not a valid"),
    ("method_semicolon", _add_method("m;touch pwned"), "methods[2]: 'm;touch pwned' is not a valid name"),
    ("method_key", _add_method("m;x", listed=False), "experiments.tiny.method_cfg.m;x: 'm;x' is not a valid name"),
    ("method_traversal", _add_method("../m", listed=False), "experiments.tiny.method_cfg.../m: '../m' is not a valid"),
    ("method_list", lambda raw: raw.__setitem__("methods", ["naive", "$(id)"]), "methods[1]: '$(id)' is not a valid"),
    ("source_name", _source(0, name="../corpus"), "experiments.tiny.data.sources[0].name: '../corpus' is not a valid"),
    ("source_dots", _source(0, name=".."), "experiments.tiny.data.sources[0].name: '..' is not a valid name"),
    ("source_kind", _source(0, kind="../x"), "experiments.tiny.data.sources[0].kind: unknown kind '../x' (known: "),
    ("source_split", _source(1, kind="flores200", splits=["valid", "train"]),
     "experiments.tiny.data.sources[1].splits[1]: kind 'flores200' has no train split"),
    ("search_name", lambda raw: _exp(raw)["search"].__setitem__("a b", {}), "experiments.tiny.search.a b: 'a b' is"),
    ("task_name", lambda raw: _exp(raw)["task_cfg"].__setitem__("t/x", {}), "experiments.tiny.task_cfg.t/x: 't/x' is"),
    ("group_name", lambda raw: _exp(raw)["data"].__setitem__("groups", {"a/b": ["de"]}),
     "experiments.tiny.data.groups.a/b: 'a/b' is not a valid name"),
]


def _write(tmp_path: Path, mutate: Mutate, base: Path = TINY) -> Path:
    raw = yaml.safe_load(base.read_text(encoding="utf-8"))
    mutate(raw)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def test_fixture_loads() -> None:
    Params.load(TINY)


@pytest.mark.parametrize(("mutate", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_value_names_its_key(tmp_path: Path, mutate: Mutate, expected: str) -> None:
    path = _write(tmp_path, mutate)
    with pytest.raises(ConfigError) as info:
        Params.load(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: "), msg
    assert expected in msg, msg
    assert "\n" not in msg


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("lr", -1.0, "experiments.tinytasks.task_cfg.wikiann.lr: must be > 0"),
    ("dropout", 1.0, "experiments.tinytasks.task_cfg.wikiann.dropout: must be >= 0 and < 1"),
    ("seeds", [1, -2], "experiments.tinytasks.task_cfg.wikiann.seeds[1]: must be >= 0"),
])
def test_bad_task_value(tmp_path: Path, key: str, value: Any, expected: str) -> None:
    path = _write(tmp_path, lambda raw: raw["experiments"]["tinytasks"]["task_cfg"]["wikiann"].update({key: value}),
                  base=TASKS)
    with pytest.raises(ConfigError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        Params.load(path)


def test_duplicate_key_names_file_and_line(tmp_path: Path) -> None:
    twice = "    prepare: {}\n    prepare: {dedup: false}\n"
    text = TINY.read_text(encoding="utf-8").replace("    prepare: {}\n", twice)
    path = tmp_path / "params.yaml"
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("    prepare: {dedup: false}") + 1
    with pytest.raises(ConfigError) as info:
        Params.load(path)
    assert str(info.value) == f"{path}:{line}: duplicate key 'prepare' (first given on line {line - 1})"


def test_merge_keys_may_be_overridden(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("a: &a {x: 1, y: 2}\nb:\n  <<: *a\n  x: 3\n", encoding="utf-8")
    assert load_yaml(path) == {"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 2}}


@pytest.mark.parametrize(("stage", "mutate", "expected"), [
    ("download", _rename_experiment("../../x"), "experiment: '../../x' is not a valid name"),
    ("search", _set("train", lr=-0.001), "experiments.tiny.train.lr: must be > 0, got -0.001"),
    ("translate", _set("decode", beam=0), "experiments.tiny.decode.beam: must be >= 1, got 0"),
    ("prepare", _set("prepare", max_words=0), "experiments.tiny.prepare.max_words: must be >= 1, got 0"),
    ("download", _set("evaluate", metrics=["bleu", "spbleu"]), "experiments.tiny.evaluate.metrics[1]: 'spbleu' is not"),
], ids=["traversal-name", "negative-lr", "zero-beam", "data-stage-own-section", "download-metrics"])
def test_stage_stops_at_load(tmp_path: Path, stage: str, mutate: Mutate, expected: str) -> None:
    """The stage exits 2 with one error line, before writing anything (run in an empty directory)."""
    work = tmp_path / "work" / "a" / "b"
    work.mkdir(parents=True)
    params = _write(tmp_path, mutate)
    extra = ["--method", "naive"] if stage == "translate" else []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's code, whatever the venv's editable install is
    proc = subprocess.run([sys.executable, "-m", f"stages.{stage}", "--params", str(params), *extra], cwd=work,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "ERROR" in lines[0] and expected in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "params.yaml", "work", "work/a", "work/a/b"]
