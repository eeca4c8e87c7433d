import pytest
import torch

from models.lang import LangContext, group_rows


def ctx(src: list[int], tgt: list[int]) -> LangContext:
    return LangContext(torch.tensor(src, dtype=torch.long), torch.tensor(tgt, dtype=torch.long))


def test_uniform_fast_path() -> None:
    assert ctx([2, 2, 2], [0, 0, 0]).uniform_src == 2
    assert ctx([2, 2, 2], [0, 0, 0]).uniform_tgt == 0
    mixed = ctx([2, 1, 2], [0, 0, 3])
    assert mixed.uniform_src is None and mixed.uniform_tgt is None
    assert ctx([], []).uniform_src is None


def test_single_prefills_uniform() -> None:
    c = LangContext.single(4, 1, 3)
    assert c.__dict__["uniform_src"] == 4 and c.uniform_tgt == 1
    assert c.src.tolist() == [4, 4, 4] and len(c) == 3


def test_index_select_and_repeat_interleave() -> None:
    c = ctx([0, 1, 2], [3, 4, 5])
    r = c.index_select(torch.tensor([2, 0]))
    assert r.src.tolist() == [2, 0] and r.tgt.tolist() == [5, 3]
    k = c.repeat_interleave(2)
    assert k.src.tolist() == [0, 0, 1, 1, 2, 2] and k.tgt.tolist() == [3, 3, 4, 4, 5, 5]
    assert LangContext.single(1, 2, 2).repeat_interleave(3).__dict__["uniform_tgt"] == 2


def test_sub_batches_keep_the_known_single_languages() -> None:
    """Rows of a one-direction batch (beams, kept sentences) know their languages without a device read."""
    beams = LangContext.single(1, 2, 3).repeat_interleave(4)
    kept = beams.index_select(torch.tensor([0, 5, 6]))
    sentences = beams.take_every(4)
    for c in (kept, sentences):
        assert c.__dict__["uniform_src"] == 1 and c.__dict__["uniform_tgt"] == 2
    assert sentences.src.tolist() == [1, 1, 1]
    mixed = ctx([0, 0, 1, 1], [2, 2, 0, 0])
    assert mixed.take_every(2).src.tolist() == [0, 1] and mixed.take_every(2).tgt.tolist() == [2, 0]
    assert "uniform_src" not in mixed.index_select(torch.tensor([0, 1])).__dict__  # unknown: found when asked
    assert mixed.index_select(torch.tensor([0, 1])).uniform_src == 0


def test_groups() -> None:
    groups = group_rows(torch.tensor([2, 0, 2, 1]))
    assert [(g, rows.tolist()) for g, rows in groups] == [(0, [1]), (1, [3]), (2, [0, 2])]
    assert [g for g, _ in ctx([1, 0], [0, 0]).src_groups()] == [0, 1]


def test_validation() -> None:
    with pytest.raises(TypeError):
        LangContext(torch.tensor([0.0]), torch.tensor([1.0]))
    with pytest.raises(ValueError):
        LangContext(torch.tensor([0, 1]), torch.tensor([1]))
