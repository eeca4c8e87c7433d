"""Paired bootstrap: identical systems, a clearly better system, and parity with sacreBLEU's own test."""

from __future__ import annotations

import pytest
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

from lsnmt.eval.significance import count_outcomes, no_verdict, paired_bootstrap
from tests.eval.helpers import corrupt, flores

REFS = flores("fr", 120)
WORSE = [corrupt(x) for x in REFS]
SLIGHTLY = [x if i % 7 else corrupt(x) for i, x in enumerate(REFS)]


@pytest.mark.parametrize("metric", [BLEU(), CHRF()], ids=["bleu", "chrf"])
def test_identical_systems_are_not_significant(metric: object) -> None:
    r = paired_bootstrap(metric, WORSE, WORSE, REFS, samples=300, seed=1)
    assert r["delta"] == 0.0 and not r["significant"] and r["p"] > 0.5


@pytest.mark.parametrize("metric", [BLEU(), CHRF()], ids=["bleu", "chrf"])
def test_clearly_better_system_is_significant(metric: object) -> None:
    r = paired_bootstrap(metric, SLIGHTLY, WORSE, REFS, samples=300, seed=1)
    assert r["delta"] > 0 and r["significant"] and r["p"] < 0.01
    untested = no_verdict(0.09, 0.0, "both below 1.0 BLEU")
    assert untested["significant"] is None and untested["p"] is None
    assert count_outcomes({"x": r, "y": {**r, "delta": -1.0}, "z": {**r, "significant": False}, "w": untested}) == \
        {"better": 1, "worse": 1, "not_significant": 1, "degenerate": 1}


@pytest.mark.parametrize("make", [BLEU, CHRF], ids=["bleu", "chrf"])
def test_p_value_matches_sacrebleu(make: type, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same draws, same statistic: sacreBLEU's PairedTest (``--paired-bs``) gives the same p-value."""
    monkeypatch.setenv("SACREBLEU_SEED", "12345")
    close = [x if i % 3 else corrupt(x) for i, x in enumerate(REFS)]
    other = [x if i % 4 else corrupt(x) for i, x in enumerate(REFS)]
    _, results = PairedTest([("base", other), ("sys", close)], {"m": make()}, [REFS], test_type="bs",
                            n_samples=1000)()
    (key,) = (k for k in results if k != "System")
    want = results[key][1]
    got = paired_bootstrap(make(), close, other, REFS, samples=1000, seed=12345)
    assert got["p"] == pytest.approx(want.p_value, abs=1e-12)
    assert got["score"] == pytest.approx(want.score, abs=1e-9)
