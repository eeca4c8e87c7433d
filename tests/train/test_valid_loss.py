"""The validation loss that picks the best checkpoint: fairseq's, token-weighted over every direction."""

from __future__ import annotations

import math

import pytest

from lsnmt.train.step import mean_loss


def test_a_direction_counts_by_its_target_tokens() -> None:
    """fairseq validates the concatenation of every direction's valid set (translation_multi_simple_epoch's
    ``ConcatDataset``) and reports ``sum(loss) / sum(tokens)``: a direction with 3x the target tokens weighs 3x
    (the unweighted mean of 1.0 and 3.0 would be 2.0)."""
    valid = {"en-de": {"loss": 1.0, "nll": 0.9, "tokens": 100}, "en-fr": {"loss": 3.0, "nll": 2.9, "tokens": 300}}
    assert mean_loss(valid) == pytest.approx((1.0 * 100 + 3.0 * 300) / 400)


def test_the_weighted_loss_can_pick_another_checkpoint() -> None:
    """Two checkpoints: the first is better on the small direction, the second on the large one. fairseq keeps
    the second; an unweighted mean would keep the first."""
    first = {"a": {"loss": 1.0, "tokens": 10}, "b": {"loss": 3.0, "tokens": 1000}}
    second = {"a": {"loss": 2.0, "tokens": 10}, "b": {"loss": 2.5, "tokens": 1000}}
    assert mean_loss(second) < mean_loss(first)


def test_no_tokens_is_nan() -> None:
    assert math.isnan(mean_loss({}))
    assert math.isnan(mean_loss({"a": {"loss": 1.0, "tokens": 0}}))
