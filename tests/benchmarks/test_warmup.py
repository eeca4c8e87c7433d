"""benchmarks/warmup.py: the warm-up rule (two successive updates within 10%, at least 5) and the shared deadline."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from warmup import Deadline, fitting, warm_up


def timings(*seconds: float) -> Callable[[], float]:
    """A fake update: each call returns the next of ``seconds``."""
    it = iter(seconds)
    return lambda: next(it)


def test_warm_up_runs_until_two_successive_updates_agree_within_10_percent() -> None:
    got = warm_up(timings(0.81, 0.30, 0.12, 0.075, 0.0746, 0.2, 0.07, 0.0745), seconds=60)
    assert (got.updates, got.settled, got.last) == (5, True, 0.0746)  # 0.075 and 0.0746 agree, and 5 ran
    later = warm_up(timings(0.81, 0.30, 0.12, 0.08, 0.1, 0.05, 0.0745, 0.0746), seconds=60)
    assert (later.updates, later.settled) == (8, True)


def test_agreement_before_the_fifth_update_does_not_end_the_warm_up() -> None:
    got = warm_up(timings(0.8, 0.1, 0.1, 0.1, 0.1, 0.1), seconds=60)
    assert (got.updates, got.settled) == (5, True)


def test_out_of_time_it_stops_after_five_and_says_it_did_not_settle() -> None:
    got = warm_up(timings(0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.1), seconds=0)
    assert (got.updates, got.settled) == (5, False)


def test_the_deadline_is_shared_equally_among_what_is_left() -> None:
    d = Deadline(90, 3)
    assert d.share() == pytest.approx(30, abs=0.5)
    d.end -= 60  # 60 s spent on the first
    assert d.share() == pytest.approx(15, abs=0.5)  # 30 s left for two
    d.end -= 40
    assert d.share() <= 0  # passed: the last is not run


def test_timed_updates_are_sized_to_what_fits() -> None:
    assert fitting(10, 0.1, 5.0) == 10
    assert fitting(10, 1.0, 3.5) == 3
    assert fitting(10, 1.0, 0.0) == 1
