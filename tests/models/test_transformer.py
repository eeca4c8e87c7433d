import math

import pytest
import torch
from torch import nn

from models import ls
from models.attention import MultiheadAttention
from models.build import build_transformer
from models.factories import Factories
from models.lang import LangContext
from models.layers import EncoderLayer, FeedForward
from models.transformer import Transformer
from tests.models.helpers import TOY_LS, random_batch, tiny, tiny_config

VOCAB = 13


def mixed_langs() -> LangContext:
    return LangContext(torch.tensor([0, 1, 2, 0, 1]), torch.tensor([1, 0, 0, 2, 0]))


def test_shapes() -> None:
    model = tiny(vocab=VOCAB)
    src, prev = random_batch(5, 7, 6, VOCAB)
    langs = mixed_langs()
    enc = model.encode(src, langs)
    assert enc.out.shape == (5, 7, 16) and enc.padding_mask.shape == (5, 7)
    assert model(src, prev, langs).shape == (5, 6, VOCAB)


@pytest.mark.parametrize("normalize_before", [False, True])
def test_norm_placement(normalize_before: bool) -> None:
    model = tiny(vocab=VOCAB, normalize_before=normalize_before)
    final_norms = [model.encoder.final_norm, *(s.final_norm for s in model.decoder.stacks)]
    assert all((n is not None) == normalize_before for n in final_norms)
    layer = model.encoder.layers[0]
    assert isinstance(layer, EncoderLayer)
    x = torch.randn(2, 5, 16)
    langs = LangContext.single(0, 1, 2)
    attn = lambda h: layer.self_attn(h, langs, key_padding_mask=None)  # noqa: E731
    ffn = lambda h: layer.ffn(h, langs)  # noqa: E731
    ln1, ln2 = layer.self_attn_block.norm, layer.ffn_block.norm
    if normalize_before:  # x + f(LN(x))
        h = x + attn(ln1(x))
        expected = h + ffn(ln2(h))
    else:  # LN(x + f(x))
        h = ln1(x + attn(x))
        expected = ln2(h + ffn(h))
    torch.testing.assert_close(layer(x, langs, None), expected)


def test_fairseq_initialisation() -> None:
    torch.manual_seed(0)
    d, vocab = 64, 2000
    model = build_transformer(tiny_config(embed_dim=d, ffn_dim=128, heads=4), vocab_size=vocab)
    emb = model.encoder.embed.tokens.weight
    assert emb[1].abs().max() == 0  # padding row
    assert abs(emb[2:].std().item() - d**-0.5) < 0.05 * d**-0.5
    attn = model.encoder.layers[0].self_attn
    assert isinstance(attn, MultiheadAttention)
    qkv_bound = math.sqrt(6 / (2 * d)) / math.sqrt(2)
    cross = model.decoder.stacks[0].layers[0].cross_attn
    blocks = [*attn.qkv_proj.weight.view(3, d, d), cross.q_proj.weight, *cross.kv_proj.weight.view(2, d, d)]
    for w in blocks:  # each (D, D) block of the fused matrices initialised as its own matrix, as fairseq's
        assert 0.95 * qkv_bound < w.abs().max() <= qkv_bound
    assert attn.out_proj.bias.abs().max() == 0
    ffn = model.encoder.layers[0].ffn
    assert isinstance(ffn, FeedForward)
    assert ffn.fc1.weight.abs().max() <= math.sqrt(6 / (d + 128)) and ffn.fc1.bias.abs().max() == 0
    # biases everywhere, as fairseq's MultiheadAttention
    assert all(m.bias is not None for m in (attn.qkv_proj, attn.out_proj, cross.q_proj, cross.kv_proj))


def test_fused_projections_load_a_state_dict_with_separate_ones() -> None:
    """A state dict written before the fusion (or with fairseq's separate q/k/v) loads into the fused form and gives
    the same outputs as an unfused attention holding those weights."""
    torch.manual_seed(0)
    plain = MultiheadAttention(16, 2)
    langs = LangContext.single(0, 1, 3)
    x, mem = torch.randn(3, 4, 16), torch.randn(3, 5, 16)
    for fuse, memory in (("qkv", None), ("kv", mem)):
        fused = MultiheadAttention(16, 2, fuse=fuse)  # type: ignore[arg-type]
        fused.load_state_dict(plain.state_dict())
        torch.testing.assert_close(fused(x, langs, memory), plain(x, langs, memory))
        assert not any(k.startswith(("k_proj", "v_proj")) for k in fused.state_dict())


def test_embedding_sharing() -> None:
    shared = tiny(vocab=VOCAB)
    assert shared.encoder.embed.tokens is shared.decoder.embed.tokens
    assert shared.decoder.output_projection.weight is shared.decoder.embed.tokens.weight
    separate = build_transformer(tiny_config(share_all_embeddings=False), vocab_size=VOCAB, tgt_vocab_size=11)
    assert separate.encoder.embed.tokens is not separate.decoder.embed.tokens
    assert separate.decoder.output_projection.weight is separate.decoder.embed.tokens.weight
    assert separate.decoder.output_projection.weight.shape == (11, 16)
    with pytest.raises(ValueError):
        build_transformer(tiny_config(), vocab_size=VOCAB, tgt_vocab_size=11)


def test_embeddings_scaled_by_sqrt_d() -> None:
    model = tiny(vocab=VOCAB)
    tokens = torch.tensor([[5, 6]])
    x = model.encoder.embed(tokens)
    expected = 4.0 * model.encoder.embed.tokens(tokens) + model.encoder.embed.positions(tokens)
    torch.testing.assert_close(x, expected)


def incremental_logits(model: Transformer, src: torch.Tensor, prev: torch.Tensor, langs: LangContext) -> torch.Tensor:
    enc = model.encode(src, langs)
    cache = model.init_cache(langs)
    steps = [model.decode(prev[:, t : t + 1], enc, langs, cache) for t in range(prev.size(1))]
    return torch.cat(steps, dim=1)


@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("decoder", ["shared", "per-target"])
def test_incremental_equals_full(normalize_before: bool, decoder: str) -> None:
    model = tiny(vocab=VOCAB, normalize_before=normalize_before, decoder=decoder, factories=TOY_LS)
    src, prev = random_batch(5, 7, 6, VOCAB)
    langs = mixed_langs()
    with torch.no_grad():
        full = model(src, prev, langs)
        inc = incremental_logits(model, src, prev, langs)
        one_dir = LangContext.single(1, 2, 5)
        full_one, inc_one = model(src, prev, one_dir), incremental_logits(model, src, prev, one_dir)
    assert (full - inc).abs().max() < 1e-5
    assert (full_one - inc_one).abs().max() < 1e-5


def test_cache_select_matches_selected_batch() -> None:
    model = tiny(vocab=VOCAB, decoder="per-target", factories=TOY_LS)
    src, prev = random_batch(5, 7, 4, VOCAB)
    langs = mixed_langs()
    order = torch.tensor([3, 3, 0, 4, 1])  # duplicates and drops rows (sentences, one decoder row each)
    with torch.no_grad():
        enc = model.encode(src, langs)
        cache = model.init_cache(langs)
        model.decode(prev[:, :2], enc, langs, cache)
        cache.select_(order, order)
        step = model.decode(prev[order, 2:3], enc.index_select(order), langs.index_select(order), cache)
        full = model(src[order], torch.cat([prev[order, :2], prev[order, 2:3]], 1), langs.index_select(order))
    assert (step[:, 0] - full[:, 2]).abs().max() < 1e-5


@pytest.mark.parametrize("decoder", ["shared", "per-target"])
def test_beams_share_their_sentence_memory(decoder: str) -> None:
    """``k`` decoder rows per encoded sentence (beam search) give what the encoder output repeated per row gives,
    through the cache, its beam reordering (self-attention only) and the removal of a sentence."""
    model = tiny(vocab=VOCAB, decoder=decoder, factories=TOY_LS)
    src, prev = random_batch(5, 7, 4, VOCAB)
    langs, k = mixed_langs(), 3
    rows_langs, rows_prev = langs.repeat_interleave(k), prev.repeat_interleave(k, 0)
    rows_prev[1::k, 1:] = (rows_prev[1::k, 1:] - 3) % (VOCAB - 4) + 4  # beams of a sentence differ
    beams = torch.tensor([[2, 0, 0], [1, 1, 2], [0, 2, 1], [0, 0, 0], [2, 1, 0]])  # (B, k): within each sentence
    order = (torch.arange(5).unsqueeze(1) * k + beams).view(-1)
    keep = torch.tensor([0, 2, 3, 4])  # sentence 1 finished
    keep_rows = (keep.unsqueeze(1) * k + torch.arange(k)).view(-1)
    with torch.no_grad():
        enc = model.encode(src, langs)
        cache = model.init_cache(rows_langs, beam=k)
        model.decode(rows_prev[:, :2], enc, rows_langs, cache)
        cache.reorder_(order)
        cache.select_(keep_rows, keep)
        step = model.decode(
            rows_prev[order][keep_rows, 2:3], enc.index_select(keep), rows_langs.index_select(keep_rows), cache
        )
        expect = order[keep_rows]
        full = model(src.repeat_interleave(k, 0)[expect], rows_prev[expect, :3], rows_langs.index_select(expect))
    assert (step[:, 0] - full[:, 2]).abs().max() < 1e-5


@pytest.mark.parametrize("decoder", ["shared", "per-target"])
def test_mixed_batch_equals_each_direction(decoder: str) -> None:
    model = tiny(vocab=VOCAB, decoder=decoder, factories=TOY_LS)
    src, prev = random_batch(5, 7, 6, VOCAB)
    langs = mixed_langs()
    with torch.no_grad():
        mixed = model(src, prev, langs)
        pairs = {(int(s), int(t)) for s, t in zip(langs.src, langs.tgt, strict=True)}
        for s, t in pairs:
            rows = ((langs.src == s) & (langs.tgt == t)).nonzero().squeeze(1)
            alone = model(src[rows], prev[rows], LangContext.single(s, t, len(rows)))
            assert (mixed[rows] - alone).abs().max() < 1e-5


def test_reordering_batch_reorders_outputs() -> None:
    model = tiny(vocab=VOCAB, decoder="per-target", factories=TOY_LS)
    src, prev = random_batch(5, 7, 6, VOCAB)
    langs = mixed_langs()
    perm = torch.tensor([4, 2, 0, 3, 1])
    with torch.no_grad():
        out = model(src, prev, langs)
        out_perm = model(src[perm], prev[perm], langs.index_select(perm))
    assert (out[perm] - out_perm).abs().max() < 1e-5


def test_per_target_decoders_route_by_target() -> None:
    model = tiny(vocab=VOCAB, decoder="per-target").train()
    assert model.decoder.languages == 3  # one stack per target, grouped: each weight stacked over the targets
    src, prev = random_batch(2, 5, 4, VOCAB)
    langs = LangContext(torch.tensor([1, 2]), torch.tensor([0, 2]))  # sentence 0 -> decoder 0, 1 -> decoder 2
    model(src, prev, langs)[0].sum().backward()  # loss of the target-0 sentence only
    grads = {i: [p.grad[i] for p in model.decoder.stacks.parameters()] for i in range(3)}
    assert any(g is not None and g.abs().sum() > 0 for g in grads[0])
    for other in (1, 2):
        assert all(g is None or g.abs().max() == 0 for g in grads[other])


def test_ls_module_seam_and_aux_loss() -> None:
    model = tiny(vocab=VOCAB, factories=TOY_LS)
    plain = tiny(vocab=VOCAB)
    assert plain.aux_loss() is None
    src, prev = random_batch(3, 5, 4, VOCAB)
    a = model(src, prev, LangContext.single(0, 1, 3))
    b = model(src, prev, LangContext.single(0, 2, 3))
    assert (a - b).abs().max() > 1e-3  # the target language reaches the FFNs
    loss = model.aux_loss()
    assert loss is not None and loss.ndim == 0


TOY_SEEN: dict[str, object] = {}


def toy_builder(cfg: object, defaults: Factories) -> Factories:
    """The builder of the ``toy`` kind of :func:`test_a_kind_is_one_table_entry`."""
    TOY_SEEN["cfg"] = cfg
    return Factories(attn=defaults.attn, ffn=TOY_LS.ffn)


def test_a_kind_is_one_table_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind added to ``models.config.kinds.KINDS`` alone is built (its builder imported by reference)."""
    from models.config import kinds

    with pytest.raises(KeyError, match="unknown language-specific method 'nope'"):
        build_transformer(tiny_config(), vocab_size=VOCAB, method="nope")
    monkeypatch.setitem(kinds.KINDS, "toy", kinds.Kind(config=dict, build=f"{__name__}:toy_builder"))
    model = build_transformer(tiny_config(), vocab_size=VOCAB, num_languages=3, method="toy", method_cfg={"r": 1})
    assert TOY_SEEN["cfg"] == {"r": 1}
    assert sum(type(m).__name__ == "ToyLSFFN" for m in model.modules()) == 4  # 2 encoder + 2 decoder layers
    assert build_transformer(tiny_config(), vocab_size=VOCAB, method="naive") is not None
    assert ls.criterion("toy") is None and ls.criterion("fd") is not None


def test_meta_device_build_is_free() -> None:
    with torch.device("meta"):
        model = build_transformer(tiny_config(embed_dim=1024, ffn_dim=4096, heads=16), vocab_size=250_000)
    assert all(p.is_meta for p in model.parameters())
    assert isinstance(model.encoder.final_norm, nn.LayerNorm | None)
