"""PROTOCOL.md is params.yaml's protocol table: regenerated here, it must equal the committed file, and every row
names its source (a paper section, the authors' scripts, or "our choice" with the reason)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lsnmt.config import Params
from lsnmt.protocol import PAPER_MT, SETTINGS, render, rows

ROOT = Path(__file__).resolve().parent.parent
PARAMS = Params.load(ROOT / "params.yaml")


def test_protocol_md_is_generated_from_params_yaml() -> None:
    committed = (ROOT / "PROTOCOL.md").read_text(encoding="utf-8")
    assert committed == render(PARAMS), "params.yaml and PROTOCOL.md differ: python -m lsnmt.protocol > PROTOCOL.md"


def test_every_setting_of_every_paper_experiment_has_a_source() -> None:
    table = rows(PARAMS)
    assert len(table) == sum(len(v) for v in PAPER_MT.values()) * len(SETTINGS)
    assert {name for names in PAPER_MT.values() for name in names} <= set(PARAMS.experiments)
    missing = [(paper, name, setting) for paper, name, setting, _, source in table if not source.strip()]
    assert not missing, missing


def test_a_changed_setting_changes_the_table() -> None:
    """What the first test catches: one setting changed in params.yaml alone leaves PROTOCOL.md stale."""
    exp = PARAMS.get("opus100")
    changed = dataclasses.replace(exp, train=dataclasses.replace(exp.train, adam_eps=1e-8))
    params = dataclasses.replace(PARAMS, experiments={**PARAMS.experiments, "opus100": changed})
    assert render(params) != render(PARAMS)
