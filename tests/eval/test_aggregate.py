"""Averages, win ratio and groups on hand-made scores; the papers' groupings as data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsnmt.eval import aggregate, groups

PAIRS = [("en", "de"), ("en", "fr"), ("en", "sw"), ("de", "en"), ("fr", "en"), ("sw", "en"), ("de", "fr")]
TRAIN = PAIRS[:6]
BASE = {p: 10.0 for p in PAIRS}


def test_direction_sets() -> None:
    sets = aggregate.direction_sets(PAIRS, TRAIN, "en")
    assert sets["en-xx"] == PAIRS[:3] and sets["xx-en"] == PAIRS[3:6]
    assert sets["zero-shot"] == sets["xx-yy"] == [("de", "fr")] and len(sets["all"]) == 7
    assert "zero-shot" not in aggregate.direction_sets(PAIRS[:6], TRAIN, "en")


def test_averages_and_both_directions() -> None:
    scores = {**BASE, ("en", "de"): 20.0, ("de", "en"): 30.0}
    sets = aggregate.direction_sets(PAIRS, TRAIN, "en")
    avg = aggregate.averages(scores, sets)
    assert avg["en-xx"] == pytest.approx(40 / 3) and avg["xx-en"] == pytest.approx(50 / 3)
    assert avg["all"] == pytest.approx(100 / 7)
    assert aggregate.both_directions(scores, "en") == {"de": 25.0, "fr": 10.0, "sw": 10.0}


def test_win_ratio_ties_do_not_win() -> None:
    method = {**BASE, ("en", "de"): 10.5, ("en", "fr"): 9.0}  # one win, one loss, one tie in en-xx
    sets = aggregate.direction_sets(PAIRS, TRAIN, "en")
    wr = aggregate.win_ratios(method, BASE, sets)
    assert wr["en-xx"] == pytest.approx(100 / 3) and wr["xx-en"] == 0.0
    assert aggregate.win_ratio(BASE, BASE, PAIRS) == 0.0
    assert aggregate.win_ratio(BASE, BASE, []) is None


def test_group_averages() -> None:
    scores = {**BASE, ("en", "sw"): 4.0, ("sw", "en"): 6.0, ("en", "de"): 30.0}
    sets = aggregate.direction_sets(PAIRS, TRAIN, "en")
    g = aggregate.group_averages(scores, sets, {"de": "high", "fr": "high", "sw": "low"}, "en")
    assert g["en-xx"] == {"high": 20.0, "low": 4.0} and g["xx-en"] == {"high": 10.0, "low": 6.0}
    cells = aggregate.group_pair_averages(scores, groups.LSL_FAMILIES)
    assert cells["EUR->SW"] == 4.0 and cells["SW->EUR"] == 6.0
    assert cells["EUR->EUR"] == pytest.approx((30 + 10 + 10 + 10 + 10) / 5)


def test_opus100_thresholds() -> None:
    assert [groups.size_group(n) for n in (1_000_000, 900_001, 900_000, 100_000, 99_999)] == \
        ["high", "high", "medium", "medium", "low"]


def test_groups_from_report(tmp_path: Path) -> None:
    report = {"train": {"en-de": {"a": {"input": 600_000}, "b": {"input": 400_000}}, "de-en": {"a": {"input": 1}},
                        "en-sw": {"a": {"input": 5_000}}}}
    (tmp_path / "report.json").write_text(json.dumps(report))
    got, source = groups.language_groups({}, tmp_path / "report.json", "en")
    assert got == {"de": "high", "sw": "low"} and "0.9M" not in source and "900000" in source
    assert groups.language_groups({"de": "x"}, tmp_path / "missing", "en") == ({"de": "x"},
                                                                              "evaluate.resource_groups")


def test_paper_groupings() -> None:
    counts = {g: sum(v == g for v in groups.CLM_FLORES_GROUPS.values()) for g in groups.GROUP_ORDER}
    assert counts == {"low": 14, "medium": 19, "high": 41}  # CLM Table 8: 74 languages
    assert sorted(groups.LSL_FAMILIES) == sorted("de en es fr it pt zh ja ko sw".split())


def test_group_thresholds_are_a_parameter(tmp_path: Path) -> None:
    """``evaluate.group_thresholds`` cuts the training sizes (OPUS-100's 0.1M / 0.9M by default); the source says
    which were used, and the WMT experiments state theirs (CLM prints none for WMT-14)."""
    from lsnmt.experiment.params import Params

    report = {"train": {"en-de": {"a": {"input": 600_000}}, "en-sw": {"a": {"input": 5_000}},
                        "en-fr": {"a": {"input": 2_000_000}}}}
    (tmp_path / "report.json").write_text(json.dumps(report))
    got, source = groups.language_groups({}, tmp_path / "report.json", "en", (10_000, 1_000_000))
    assert got == {"de": "medium", "fr": "high", "sw": "low"} and "evaluate.group_thresholds" in source
    assert groups.language_groups({}, tmp_path / "report.json", "en")[0]["de"] == "medium"
    params = Params.load(Path(__file__).resolve().parents[2] / "params.yaml")
    assert params.get("wmt14_enxx").evaluate.group_thresholds == (100_000, 900_000)
    with pytest.raises(Exception, match=r"group_thresholds: \[5, 1\]"):
        from lsnmt.eval.config import EvaluateConfig

        EvaluateConfig(group_thresholds=(5, 1))
