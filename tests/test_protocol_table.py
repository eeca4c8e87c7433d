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


def test_the_directions_row_follows_the_data_section() -> None:
    """Which directions each experiment trains (all, English-centric, en-xx / xx-en, with groups) and which
    evaluated ones are zero-shot, counted from ``data`` (issue 18 item 2)."""
    got = {(name, setting): value for _, name, setting, value, _ in rows(PARAMS)}
    assert got["opus100_clm_enxx", "directions"].startswith("trained: en-xx only (one-to-many), 94 directions;")
    assert got["opus100_clm_xxen", "directions"].startswith("trained: xx-en only (many-to-one), 94 directions;")
    assert got["iwslt17_zeroshot", "directions"] == (
        "trained: English-centric (en-xx and xx-en), 6 directions; evaluated: all ordered pairs, 12 directions; "
        "zero-shot: 6 (it-nl it-ro nl-it nl-ro ro-it ro-nl)")
    assert got["flores10_lsl", "directions"].endswith("90 directions; zero-shot: none")
    lsl_zs = got["flores10_lsl_zeroshot", "directions"]
    assert "44 directions (groups EUR: de en es fr it pt; CJK: ja ko zh; SW: sw)" in lsl_zs and \
        lsl_zs.endswith("zero-shot: 46")
    exp = PARAMS.get("opus15")
    changed = dataclasses.replace(exp, data=dataclasses.replace(exp.data, train_directions="all"))
    params = dataclasses.replace(PARAMS, experiments={**PARAMS.experiments, "opus15": changed})
    assert "trained: all ordered pairs, 240 directions" in render(params) and render(params) != render(PARAMS)
