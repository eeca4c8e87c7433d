"""Per-language copies grouped into one module (``models/ls/grouped.py``) on rows tiled by language
(``models/tiles.py``): the same outputs and gradients as the per-language calls of the copies themselves."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import models.ls.fd as fd
import models.ls.grouped as grouped
import models.ls.lsl as lsl
import models.tiles
from models.attention import MultiheadAttention
from models.lang import LangContext
from models.layers import DecoderLayer, EncoderLayer, FeedForward
from models.ls.grouped import GroupedStack, fuse, grouped_call, route
from models.tiles import Tiles
from tests.models.helpers import method_model

D, F, L = 8, 16, 4
SRC = [0, 2, 1, 2, 2, 0, 1, 0, 2]  # language 3 absent: its weights get a zero gradient
TGT = [1, 0, 3, 3, 0, 1, 0, 3, 1]


def _copies(kind: str, normalize_before: bool = True) -> list[nn.Module]:
    torch.manual_seed(0)

    def one() -> nn.Module:
        if kind == "ffn":
            return FeedForward(D, F)
        if kind == "attention":
            return MultiheadAttention(D, 2)
        args = dict(embed_dim=D, dropout=0.0, normalize_before=normalize_before)
        if kind == "encoder":
            return EncoderLayer(MultiheadAttention(D, 2), FeedForward(D, F), **args)  # type: ignore[arg-type]
        return DecoderLayer(MultiheadAttention(D, 2), MultiheadAttention(D, 2), FeedForward(D, F), **args)  # type: ignore[arg-type]

    copies = [one() for _ in range(L)]
    with torch.no_grad():  # every language's own LayerNorm affine
        for c in copies:
            for m in c.modules():
                if isinstance(m, nn.LayerNorm):
                    m.weight.add_(0.3 * torch.randn_like(m.weight))
                    m.bias.add_(0.3 * torch.randn_like(m.bias))
    return copies


def _inputs(kind: str) -> tuple[torch.Tensor, LangContext, tuple, dict]:
    g = torch.Generator().manual_seed(1)
    b, t = len(SRC), 5
    x = torch.randn(b, t, D, generator=g, requires_grad=True)
    pad = torch.zeros(b, t, dtype=torch.bool)
    pad[1, 3:], pad[4, 2:] = True, True
    langs = LangContext.from_ids(SRC, TGT)
    if kind == "encoder":
        return x, langs, (pad,), {}
    if kind == "attention":
        return x, langs, (), {"key_padding_mask": pad}
    if kind == "decoder":
        memory = torch.randn(b, 6, D, generator=g)
        return x, langs, (memory, torch.zeros(b, 6, dtype=torch.bool)), {"self_padding_mask": pad}
    return x, langs, (), {}


@pytest.fixture(params=["segments", "tiles"])
def layout(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both layouts on the CPU: its own (segments) and a GPU's (tiles)."""
    monkeypatch.setattr(models.tiles, "CPU_LAYOUT", request.param)
    return str(request.param)


@pytest.mark.parametrize("side", ["src", "tgt"])
@pytest.mark.parametrize("kind", ["ffn", "attention", "encoder", "encoder-post", "decoder"])
def test_grouped_module_equals_the_copies_called_language_by_language(kind: str, side: str, layout: str) -> None:
    copies = _copies(kind.removesuffix("-post"), normalize_before=not kind.endswith("-post"))
    module = fuse(copy.deepcopy(copies))
    assert module is not None
    x, langs, args, kwargs = _inputs(kind.removesuffix("-post"))
    up = torch.randn(*x.shape, generator=torch.Generator().manual_seed(2))

    old = route(copies, side, x, langs, *args, **kwargs)
    old_grads = torch.autograd.grad(old, [x, *(p for c in copies for p in c.parameters())], up, allow_unused=True)
    for c in copies:
        c.zero_grad(set_to_none=True)
    new = grouped_call(module, L, side, x, langs, *args, **kwargs)
    torch.testing.assert_close(new, old)

    new.backward(up)  # the stacked weights' gradients, language by language: each copy's
    names = [n for n, _ in copies[0].named_parameters()]
    stacked = dict(module.named_parameters())
    assert list(stacked) == names  # the copies' names and order
    per_lang = [stacked[n].grad[lang] for lang in range(L) for n in names]  # type: ignore[index]
    expected = [torch.zeros_like(p) if g is None else g
                for g, p in zip(old_grads[1:], (p for c in copies for p in c.parameters()), strict=True)]
    for got, want in zip(per_lang, expected, strict=True):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(x.grad, old_grads[0])


def test_a_batch_of_one_language_runs_that_languages_weights() -> None:  # (no layout: one language in place)
    copies = _copies("encoder")
    module = fuse(copy.deepcopy(copies))
    assert module is not None
    x, _, (pad,), _ = _inputs("encoder")
    langs = LangContext.single(2, 0, x.size(0))
    torch.testing.assert_close(grouped_call(module, L, "src", x, langs, pad), copies[2](x, langs, pad))


def test_modules_that_cannot_be_grouped_have_no_group() -> None:
    class Scale(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.s = nn.Parameter(torch.ones(1))

    assert fuse([Scale(), Scale()]) is None
    assert fuse([nn.Sequential(nn.Linear(2, 2)), nn.Sequential(nn.Linear(2, 2))]) is None


@pytest.mark.parametrize("languages", [1, 3, 9])
@pytest.mark.parametrize("rows", [1, 7, 64, 680])
def test_tiles_hold_each_row_once_in_a_tile_of_its_language(rows: int, languages: int) -> None:
    for seed in range(3):
        g = torch.Generator().manual_seed(seed)
        skew = torch.rand(languages, generator=g) ** 4  # very unequal groups, some empty
        ids = torch.multinomial(skew / skew.sum(), rows, replacement=True, generator=g)
        tiles = Tiles.of(ids, languages)
        assert tiles.fill is not None and tiles.slot is not None and tiles.group is not None
        assert tiles.fill.numel() == tiles.count * tiles.rows  # a size that depends on rows and languages only
        assert torch.equal(tiles.fill.index_select(0, tiles.slot), torch.arange(rows))
        assert torch.equal(tiles.group.index_select(0, tiles.slot // tiles.rows), ids)
        for lang in range(languages):  # a language's rows keep their batch order
            own = tiles.slot[ids == lang]
            assert bool((own[1:] > own[:-1]).all())


@pytest.mark.parametrize("kind", ["lsl", "fd", "switch", "clsr"])
def test_mixed_batches_take_the_grouped_path(kind: str, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = {"route": "ls"} if kind == "fd" else {}
    decoder = "per-target" if kind == "lsl" else "shared"  # per-target stacks of other LS modules: stack by stack
    model = method_model(kind, decoder, **cfg)

    def no_route(*args: object, **kwargs: object) -> None:
        raise AssertionError("a per-language call on a mixed batch")

    for module in (grouped, lsl, fd):
        monkeypatch.setattr(module, "route", no_route)
    assert decoder == "shared" or isinstance(model.decoder.stacks, GroupedStack)  # per-target stacks: all at once
    langs = LangContext.from_ids([0, 1, 2, 0], [1, 2, 0, 2])
    src = torch.randint(4, 13, (4, 5))
    model(src, src, langs).sum().backward()
