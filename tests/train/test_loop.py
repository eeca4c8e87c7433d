"""The one loop with fake hooks: reports read only at checks, the NaN guard before any save, skipped updates,
validation and best saves, the stop signal on several ranks' agreement."""

from __future__ import annotations

import math
import os
import signal
from pathlib import Path

import pytest
import torch

from lsnmt.train.curve import Curve, Meters
from lsnmt.train.loop import Interrupted, Job, Update, Validation, check_finite, run_updates


class Hooks:
    """Updates with loss ``n`` on ``ntokens`` 10 (a tensor), ``nan`` from update ``bad`` on; saves are recorded."""

    def __init__(self, bad: int | None = None, skip: set[int] | None = None) -> None:
        self.bad, self.skip, self.calls = bad, skip or set(), 0
        self.saves: list[tuple[int, bool, bool]] = []

    def update(self, n: int) -> Update:
        self.calls += 1
        if self.calls in self.skip:
            return Update(loss=torch.tensor(1.0), nll=torch.tensor(1.0), ntokens=10, lr=0.1, skipped=True)
        x = math.nan if self.bad is not None and n + 1 >= self.bad else float(n + 1)
        return Update(loss=torch.tensor(x), nll=torch.tensor(x), ntokens=10, lr=0.1, grad_norm=torch.tensor(1.0))

    def save(self, step: int, *, periodic: bool, improved: bool) -> None:
        self.saves.append((step, periodic, improved))


def job(hooks: Hooks, **kw: object) -> Job:
    settings: dict = {
        "name": "t",
        "total": 6,
        "log_every": 2,
        "save_every": 3,
        "update": hooks.update,
        "save": hooks.save,
        **kw,
    }
    return Job(**settings)


def test_curve_rows_average_the_updates_since_the_last_row(tmp_path: Path) -> None:
    hooks, meters = Hooks(), Meters()
    curve = Curve(tmp_path / "curve.tsv", None)
    assert run_updates(job(hooks), 0, meters, curve) == 6
    rows = [r.split("\t") for r in (tmp_path / "curve.tsv").read_text().splitlines()[1:]]
    assert [r[0] for r in rows] == ["2", "4", "6"]
    assert float(rows[0][1]) == pytest.approx((1 + 2) / 20 / math.log(2), rel=1e-5)
    assert hooks.saves == [(3, True, False), (6, True, False)]


def test_nan_guard_names_the_first_bad_update_and_saves_nothing_after_it() -> None:
    hooks = Hooks(bad=4)  # updates 4, 5, … are not finite; log_every 5: the check after update 5 finds them
    with pytest.raises(FloatingPointError, match=r"^step 4: training loss is nan"):
        run_updates(job(hooks, total=9, log_every=5, save_every=3), 0, Meters())
    assert hooks.saves == [(3, True, False)] and hooks.calls == 5


def test_the_gradient_norm_is_guarded_too() -> None:
    values = check_finite(7, [Update(loss=1.0, nll=1.0, ntokens=1, lr=0.1, grad_norm=2.0)])
    assert values == [[1.0, 1.0, 2.0]]
    with pytest.raises(FloatingPointError, match=r"^step 7: gradient norm is inf"):
        check_finite(7, [Update(loss=1.0, nll=1.0, ntokens=1, lr=0.1, grad_norm=torch.tensor(math.inf))])


def test_skipped_updates_are_not_counted() -> None:
    hooks = Hooks(skip={2, 3})
    assert run_updates(job(hooks, total=3, save_every=10), 0, Meters()) == 3
    assert hooks.calls == 5 and hooks.saves == [(3, True, False)]


def test_validation_logs_a_row_and_saves_the_best(tmp_path: Path) -> None:
    hooks, losses, best = Hooks(), iter([3.0, 2.0, 2.5]), [math.inf]

    def validate(step: int) -> Validation:
        loss = next(losses)
        improved = loss < best[0]
        best[0] = min(best[0], loss)
        return Validation(loss, improved, line=f"valid {step}")

    curve = Curve(tmp_path / "curve.tsv", None)
    run_updates(job(hooks, validate=validate, validate_every=2, log_every=4, save_every=5), 0, Meters(), curve)
    rows = [r.split("\t") for r in (tmp_path / "curve.tsv").read_text().splitlines()[1:]]
    assert [(r[0], r[4]) for r in rows] == [("2", "3"), ("4", "2"), ("6", "2.5")]
    assert hooks.saves == [(2, False, True), (4, False, True), (5, True, False), (6, True, False)]


def test_a_stop_signal_saves_once_and_raises_on_every_rank() -> None:
    hooks = Hooks()

    def update(n: int) -> Update:
        if n == 3:
            os.kill(os.getpid(), signal.SIGUSR1)
        return hooks.update(n)

    with pytest.raises(Interrupted) as stop:
        run_updates(job(hooks, update=update, total=10), 0, Meters())
    assert (stop.value.signum, stop.value.step) == (signal.SIGUSR1, 4)
    assert hooks.saves == [(3, True, False), (4, False, False)]

    follower = Hooks()  # a rank that caught nothing stops where the ranks agreed; only the main rank saves
    with pytest.raises(Interrupted) as stop:
        run_updates(job(follower, total=10, is_main=False, agree=lambda caught: signal.SIGTERM), 0, Meters())
    assert (stop.value.signum, stop.value.step, follower.saves) == (signal.SIGTERM, 1, [])


def test_a_zero_interval_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="t: validate_every must be >= 1, got 0"):
        job(Hooks(), validate=lambda step: Validation(1.0, False))
