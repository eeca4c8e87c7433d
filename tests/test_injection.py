"""No params.yaml value or requested path reaches a shell unchecked: dvc.yaml runs the name guard
(lsnmt/graph/guard.py) before every command it writes values into, and the Snakefile's wildcards are names."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from lsnmt.graph import guard
from lsnmt.graph.snakemake import NAME_WILDCARD
from lsnmt.graph.stages import STAGES
from lsnmt.typed import load_yaml

from .conftest import ROOT, copy_repo, use_params, venv_env

BAD = "x;touch PWNED;"


def _commands(stage: dict[str, Any]) -> str | list[str]:
    return (stage.get("do") or stage)["cmd"]


def test_every_command_dvc_fills_in_runs_the_guard_first() -> None:
    """dvc.yaml as committed (tests/test_graph.py checks that it is what the generator writes)."""
    stages = load_yaml(ROOT / "dvc.yaml")["stages"]
    filled = {name: _commands(s) for name, s in stages.items() if "${" in str(_commands(s))}
    assert {"download", "train", "translate", "lm_expert", "lm_hmr", "report"} <= set(filled)
    for name, cmd in filled.items():
        assert isinstance(cmd, list) and len(cmd) == 2, (name, cmd)  # a list: DVC never splits its items
        assert cmd[0] == guard.COMMAND and "${" not in cmd[0], (name, cmd)


@pytest.fixture(scope="module")
def tiny() -> dict[str, Any]:
    return load_yaml(ROOT / "tests/fixtures/params.tiny.yaml")


def test_the_guard_passes_the_projects_params() -> None:
    assert guard.unsafe(load_yaml(ROOT / "params.yaml")) is None


@pytest.mark.parametrize(("change", "expected"), [
    ({"methods": ["naive", BAD]}, "methods[1]: 'x;touch PWNED;' is not a valid name"),
    ({"experiment": "$(id)"}, "experiment: '$(id)' is not a valid name"),
    ({"xelm_experts": ["dense-k1-e0", "a\ntouch PWNED"]}, "xelm_experts[1]: 'a\\ntouch PWNED' is not a valid name"),
    ({"xelm_targets": ["sw", "../../work"]}, "xelm_targets[1]: '../../work' is not a valid name"),
    ({"methods": [{"x": "; touch PWNED"}]}, "methods[0]: expected a name, got {'x': '; touch PWNED'}"),
    ({"methods": "naive;id"}, "methods: expected a list of names, got str 'naive;id'"),
], ids=["semicolon", "substitution", "newline", "traversal", "mapping", "string"])
def test_guard_names_the_first_value_that_is_not_a_name(tiny: dict[str, Any], change: dict[str, Any],
                                                        expected: str) -> None:
    assert guard.unsafe(tiny) is None
    assert (guard.unsafe({**tiny, **change}) or "").startswith(expected)


def test_every_snakemake_wildcard_is_constrained_to_a_name() -> None:
    """Every wildcard of the rules' paths (the stage table's, which the Snakefile declares) is a name."""
    import re

    text = (ROOT / "Snakefile").read_text(encoding="utf-8")
    block = text.split("wildcard_constraints:\n", 1)[1].split("\n\n", 1)[0]
    constrained = dict(re.findall(r"^\s+(\w+)=(\w+),$", block, re.M))
    used = {w for st in STAGES for path in (st.log, *(o.path for o in st.outs)) for w in re.findall(r"\{(\w+)\}", path)}
    assert used == {"exp", "method", "expert", "target"} and constrained == dict.fromkeys(used, "NAME_WILDCARD")
    for good in ("naive", "lms_fd", "dense-k1-e0", "wmt14.enxx"):
        assert re.fullmatch(NAME_WILDCARD, good), good
    for bad in ("x$(touch PWNED)", "x;id", "a/b", "..", "a..b", ".hidden", "a b", "a\nb"):
        assert not re.fullmatch(NAME_WILDCARD, bad), bad


def _probe_repo(tmp_path: Path) -> Path:
    """A copy of the repository on the tiny params with the inputs of ``train`` in place (empty stand-ins)."""
    repo = copy_repo(tmp_path)
    use_params(repo, ROOT / "tests/fixtures/params.tiny.yaml")
    for d in ("data/tiny/bin", "results/tiny/search"):
        (repo / d).mkdir(parents=True)
        (repo / d / "x").write_text("", encoding="utf-8")
    return repo


@pytest.mark.slow  # a copy of the repository and a DVC run: the guard's place in every command is checked above
def test_dvc_runs_nothing_of_a_method_name_that_is_a_command(tmp_path: Path) -> None:
    """The issue's probe: with ``methods: [naive, "x;touch PWNED;"]`` (and its method_cfg entry) ``dvc repro`` of
    that job ran ``touch PWNED`` (DVC fills the name into the command before the stage can check it)."""
    repo = _probe_repo(tmp_path)
    raw = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    raw["methods"] = ["naive", BAD]
    raw["experiments"]["tiny"]["method_cfg"][BAD] = {"kind": "naive"}
    (repo / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    out = subprocess.run(["dvc", "repro", "--single-item", f"train@{BAD}"], cwd=repo, env=venv_env(),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and not (repo / "PWNED").exists(), out.stdout + out.stderr
    assert f"params.yaml: methods[1]: {BAD!r} is not a valid name" in out.stderr, out.stderr


@pytest.mark.slow  # a copy of the repository and a Snakemake run: NAME_WILDCARD is checked above
def test_snakemake_runs_nothing_of_a_wildcard_that_is_a_command(tmp_path: Path) -> None:
    """A requested path fixes the wildcards, which Snakemake writes into the rule's command as they are."""
    repo = _probe_repo(tmp_path)
    target = "results/tiny/train/x$(touch PWNED)/model.pt"
    out = subprocess.run(["snakemake", "--cores", "1", "--allowed-rules", "train", "--", target], cwd=repo,
                         env=venv_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and not (repo / "PWNED").exists(), out.stdout + out.stderr
    assert f"No rule to produce {target}" in out.stdout + out.stderr
