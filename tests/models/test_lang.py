import numpy as np
import pytest
import torch

from models.lang import LangContext, group_rows, host_copy
from models.syncs import count_syncs


def ctx(src: list[int], tgt: list[int]) -> LangContext:
    return LangContext(torch.tensor(src, dtype=torch.long), torch.tensor(tgt, dtype=torch.long))


def known(c: LangContext) -> bool:
    """``c`` answers what it is asked of its languages without reading its device tensors."""
    with count_syncs() as syncs:
        c.uniform_src, c.uniform_tgt, c.groups("src"), c.groups("tgt")
    return syncs.count == 0


def test_uniform_fast_path() -> None:
    assert ctx([2, 2, 2], [0, 0, 0]).uniform_src == 2
    assert ctx([2, 2, 2], [0, 0, 0]).uniform_tgt == 0
    mixed = ctx([2, 1, 2], [0, 0, 3])
    assert mixed.uniform_src is None and mixed.uniform_tgt is None
    assert ctx([], []).uniform_src is None


def test_single_and_collated_batches_know_their_languages_on_the_host() -> None:
    c = LangContext.single(4, 1, 3)
    assert known(c) and c.uniform_src == 4 and c.uniform_tgt == 1
    assert c.src.tolist() == [4, 4, 4] and len(c) == 3
    mixed = LangContext.from_ids([2, 1, 2], [0, 0, 3])
    assert known(mixed) and mixed.uniform_src is None and mixed.src.tolist() == [2, 1, 2]
    assert not known(ctx([2, 1, 2], [0, 0, 3]))  # device tensors alone: read once, when first asked


def test_index_select_and_repeat_interleave() -> None:
    c = ctx([0, 1, 2], [3, 4, 5])
    r = c.index_select(torch.tensor([2, 0]))
    assert r.src.tolist() == [2, 0] and r.tgt.tolist() == [5, 3]
    k = c.repeat_interleave(2)
    assert k.src.tolist() == [0, 0, 1, 1, 2, 2] and k.tgt.tolist() == [3, 3, 4, 4, 5, 5]
    beams = LangContext.from_ids([0, 1], [2, 0]).repeat_interleave(3)
    assert known(beams) and beams.ids.tgt.tolist() == [2, 2, 2, 0, 0, 0] == beams.tgt.tolist()


def test_derived_contexts_keep_what_is_known_of_their_rows() -> None:
    """Rows of a batch (beams, kept sentences, each language's rows) know their languages without a device read."""
    beams = LangContext.single(1, 2, 3).repeat_interleave(4)
    kept = beams.index_select(torch.tensor([0, 5, 6]), np.array([0, 5, 6]))
    sentences = beams.take_every(4)
    for c in (beams, kept, sentences, beams.with_(route="ls", progress=0.5)):
        assert known(c) and c.uniform_src == 1 and c.uniform_tgt == 2
    assert sentences.src.tolist() == [1, 1, 1]
    mixed = LangContext.from_ids([0, 0, 1, 1], [2, 2, 0, 0])
    assert mixed.take_every(2).src.tolist() == [0, 1] and mixed.take_every(2).tgt.tolist() == [2, 0]
    assert known(mixed.take_every(2)) and known(mixed.index_select(torch.tensor([0, 1]), np.array([0, 1])))
    unknown = mixed.index_select(torch.tensor([0, 1]))  # no host indices: read when first asked
    assert not known(unknown) and unknown.uniform_src == 0
    moved = mixed.to("cpu")
    assert moved.host is mixed.host and known(moved)
    built = ctx([0, 1], [1, 0])
    assert not known(built.index_select(torch.tensor([0, 1]))) and known(built.to("cpu"))  # CPU ids: the host's


def test_groups_from_the_host() -> None:
    langs = LangContext.from_ids([2, 0, 2, 1], [0, 0, 0, 0])
    with count_syncs() as syncs:
        g = langs.groups("src")
        rows = g.rows()
        parts = langs.split("src")
    assert syncs.count == 0, syncs.report()
    rows = [r.tolist() for r in rows]
    assert g.ids == (0, 1, 2) and g.counts == (1, 1, 2) and rows == [[1], [3], [0, 2]]
    assert [p.src.tolist() for p in parts] == [[0], [1], [2, 2]] and all(known(p) for p in parts)
    assert [p.uniform_src for p in parts] == [0, 1, 2]
    x = torch.arange(4.0).unsqueeze(1)
    torch.testing.assert_close(g.merge(g.split(x)), x)
    assert [(i, r.tolist()) for i, r in group_rows(torch.tensor([2, 0, 2, 1]))] == [(0, [1]), (1, [3]), (2, [0, 2])]
    assert [i for i, _ in ctx([1, 0], [0, 0]).src_groups()] == [0, 1]


def test_map_calls_each_language_on_its_rows_in_batch_order() -> None:
    langs = LangContext.from_ids([2, 0, 2, 1], [1, 1, 0, 0])
    pad = torch.tensor([[False, True], [False, False], [True, True], [False, False]])
    langs = langs.with_(padding=pad)
    x = torch.arange(8.0).view(4, 2)
    calls = []

    def fn(lang: int, sub: LangContext, xs: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor:
        calls.append((lang, sub.src.tolist(), xs[:, 0].tolist()))
        assert torch.equal(sub.padding, mask)  # the sub-batch's own rows of the padding mask
        return xs * scale + lang

    out = langs.map("src", fn, x, pad, 10.0)
    torch.testing.assert_close(out, x * 10.0 + torch.tensor([[2.0], [0.0], [2.0], [1.0]]))
    assert calls == [(0, [0], [2.0]), (1, [1], [6.0]), (2, [2, 2], [0.0, 4.0])]
    one = LangContext.single(1, 0, 2)
    assert torch.equal(one.map("src", lambda lang, sub, xs: xs + lang, torch.zeros(2)), torch.ones(2))
    assert torch.equal(LangContext.single(0, 0, 0).map("src", None, torch.ones(0, 3)), torch.zeros(0, 3))


def test_validation() -> None:
    with pytest.raises(TypeError):
        LangContext(torch.tensor([0.0]), torch.tensor([1.0]))
    with pytest.raises(ValueError):
        LangContext(torch.tensor([0, 1]), torch.tensor([1]))
    with pytest.raises(ValueError, match="host ids"):
        LangContext.from_ids([0, 1], [1, 0]).with_(src=torch.tensor([0]), tgt=torch.tensor([1]))


def test_host_copy_keeps_what_is_already_there() -> None:
    t = torch.arange(3)
    assert host_copy(t, torch.device("cpu")) is t  # no copy, no pinning on a CPU run
    meta = host_copy(t, torch.device("meta"))  # another device: an ordinary non-blocking copy, no pinning
    assert meta.device.type == "meta" and meta.shape == t.shape and host_copy(meta, torch.device("meta")) is meta
