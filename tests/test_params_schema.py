"""params.schema.json (lsnmt/experiment/json_schema.py): current with the typed config, named by params.yaml's first
line for editors, valid JSON Schema that every params file of the repository passes, and that marks what loading
refuses (an unknown key, a wrong type, a value out of range, an unsafe name, an unknown method kind)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lsnmt.experiment.json_schema import FILE, MODELINE, render
from lsnmt.typed import load_yaml

from .conftest import ROOT

PARAMS_FILES = [ROOT / "params.yaml", *sorted((ROOT / "tests/fixtures").glob("params.*.yaml"))]


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / FILE).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_schema_is_current() -> None:
    assert (ROOT / FILE).is_file(), f"{FILE} is missing: run `python -m lsnmt.experiment.json_schema`"
    assert (ROOT / FILE).read_text(encoding="utf-8") == render(), (
        f"{FILE} is stale: run `python -m lsnmt.experiment.json_schema`"
    )


def test_params_yaml_names_the_schema_for_editors() -> None:
    first = (ROOT / "params.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == MODELINE


@pytest.mark.parametrize("path", PARAMS_FILES, ids=lambda p: p.name)
def test_every_params_file_passes(validator: jsonschema.Draft202012Validator, path: Path) -> None:
    errors = [f"{e.json_path}: {e.message[:200]}" for e in validator.iter_errors(load_yaml(path))]
    assert not errors, errors[:5]


def _with(data: dict[str, Any], keys: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    *path, last = keys.split(".")
    node = out
    for k in path:
        node = node[k]
    node[last] = value
    return out


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("experiments.tiny.train.max_stepz", 10),  # unknown key
        ("experiments.tiny.train.max_steps", "many"),  # wrong type
        ("experiments.tiny.train.max_steps", 0),  # out of range (>= 1)
        ("experiments.tiny.train.label_smoothing", 1.0),  # out of range (< 1)
        ("experiments.tiny.train.precision", "fp8"),  # not one of the literals
        ("experiments.tiny.method_cfg.lms", {"kind": "lmz"}),  # unknown kind
        ("experiments.tiny.method_cfg.lms", {"kind": "lms", "rnk": 2}),  # a key the kind does not have
        ("experiments.tiny.task_method_cfg.x", {"kind": "fd"}),  # a kind the tasks do not take
        ("experiment", "../etc"),  # not a safe name
    ],
)
def test_what_loading_refuses_the_schema_marks(
    validator: jsonschema.Draft202012Validator, key: str, value: Any
) -> None:
    data = load_yaml(ROOT / "tests/fixtures/params.tiny.yaml")  # passes: test_every_params_file_passes
    assert not validator.is_valid(_with(data, key, value)), (key, value)
