"""Method settings are typed once (issue 41 item 1): each ``method_cfg`` / ``task_method_cfg`` / ``claim.methods``
entry is built into its kind's config when ``params.yaml`` (or a stage's view) is loaded, and its users build
nothing again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from lsnmt import methods
from lsnmt.experiment.params import Params
from lsnmt.methods import schema
from lsnmt.methods.schema import Method
from lsnmt.train.config import TrainView
from lsnmt.typed import ConfigError, to_dict
from lsnmt.view import load_view
from models.config.kinds import KINDS
from models.ls.lms import LMSConfig, LMSFDConfig

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {k.config for k in KINDS.values()}


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The key paths at which a method entry is built into its kind's config (every call of ``schema.build`` with a
    kind's config class)."""
    seen: list[str] = []
    real = schema.build

    def counting(tp: Any, data: Any, path: str) -> Any:
        if tp in CONFIGS:
            seen.append(path)
        return real(tp, data, path)

    monkeypatch.setattr(schema, "build", counting)
    return seen


def test_params_load_holds_each_method_entry_typed() -> None:
    params = Params.load(ROOT / "params.yaml")
    lms = params.get("default").method_cfg["lms"]
    assert isinstance(lms, Method) and lms.kind == "lms" and isinstance(lms.cfg, LMSConfig)
    assert params.get("default").method_cfg["naive"] == Method(None, None, {"kind": "naive"})
    task = params.get("xlmr_tasks").task_method_cfg["lms_fd"]
    assert isinstance(task.cfg, LMSFDConfig) and task.cfg.route == "share"
    claim = params.get("default").claim
    assert claim is not None and all(isinstance(m.cfg, KINDS[str(m.kind)].config) for m in claim.methods.values())


def test_loading_and_using_the_methods_builds_each_entry_once(builds: list[str]) -> None:
    params = Params.load(ROOT / "params.yaml")
    entries = [
        f"experiments.{n}.{section}.{m}"
        for n, exp in params.experiments.items()
        for section, table in (
            ("method_cfg", exp.method_cfg),
            ("task_method_cfg", exp.task_method_cfg),
            ("claim.methods", exp.claim.methods if exp.claim else {}),
        )
        for m, entry in table.items()
        if entry.kind is not None
    ]
    assert sorted(builds) == sorted(entries) and len(entries) > 50
    for exp in params.experiments.values():  # what the stages, the report and the claim call
        for name in exp.method_cfg:
            kind, cfg = methods.resolve(exp.method_cfg, name)
            for system in methods.systems(exp.method_cfg, name):
                methods.resolve_system(exp.method_cfg, system)
        for name in exp.task_method_cfg:
            methods.resolve_task(exp.task_method_cfg, name, "task_method_cfg")
    assert len(builds) == len(entries)


def test_a_stages_view_builds_its_entry_once_at_load(builds: list[str]) -> None:
    _, view = load_view(ROOT / "params.yaml", "default", TrainView, {"method": "lms_fd"})
    assert builds == ["experiments.default.method_cfg.lms_fd"]
    assert view.method_cfg["lms_fd"] == Method("lms_fd", LMSFDConfig(rank=8, route="share"), {})
    for system in methods.systems(view.method_cfg, "lms_fd"):  # the train and translate stages' use
        methods.resolve_system(view.method_cfg, system)
    assert len(builds) == 1


def test_a_views_bad_entry_names_the_file_and_key_path(tmp_path: Path) -> None:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["experiments"]["default"]["method_cfg"]["lms"]["rnk"] = 2
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_view(path, "default", TrainView, {"method": "lms"})
    assert str(err.value).startswith(f"{path}: experiments.default.method_cfg.lms.rnk: unknown key (known keys: ")


def test_a_method_dumps_as_written() -> None:
    """``lsnmt config show``, PROTOCOL.md and the claim's cache keys read the entry as params.yaml writes it."""
    exp = Params.load(ROOT / "params.yaml").get("default")
    assert to_dict(exp.method_cfg["lms"]) == {"kind": "lms", "rank": 8, "synthesis": "pair"}
    assert to_dict(exp.method_cfg)["naive"] == {"kind": "naive"}
