"""Composition root: ``ModelConfig`` (+ vocabulary, languages, method) -> :class:`Transformer`.

Config stops here: modules get flat constructor arguments (torchtune's builder
functions, fairseq2's factories). A language-specific method is kind of
``models.config.kinds.KINDS`` whose builder swaps some of the :class:`Factories`.

Build paper-scale models on the meta device to count parameters instantly::

    with torch.device("meta"):
        model = build_transformer(ModelConfig(arch="transformer_big"), vocab_size=64_000)

(:func:`models.meta.meta_device` does the same with the initialisers skipped: twice as fast, to count only.)
"""

from __future__ import annotations

from typing import Any

from torch import nn

from models.config.kinds import KINDS
from models.config.model import ModelConfig
from models.embedding import SinusoidalPositionalEmbedding, TransformerEmbedding, build_token_embedding
from models.factories import Factories, LayerSpec, Side
from models.ls import builder
from models.presets import ArchDims, resolve_dims
from models.transformer import Decoder, DecoderStack, Encoder, Transformer


def _spec(cfg: ModelConfig, dims: ArchDims, side: Side, layer: int, num_layers: int, stack: int | None,
          num_languages: int) -> LayerSpec:
    return LayerSpec(
        side=side, layer=layer, num_layers=num_layers, stack=stack,
        embed_dim=dims.embed_dim, ffn_dim=dims.ffn_dim, heads=dims.heads,
        dropout=cfg.dropout, attention_dropout=cfg.attention_dropout, activation_dropout=cfg.activation_dropout,
        normalize_before=cfg.normalize_before, num_languages=num_languages,
    )


def _final_norm(cfg: ModelConfig, dims: ArchDims) -> nn.Module | None:
    return nn.LayerNorm(dims.embed_dim) if cfg.normalize_before else None


def resolve_factories(method: str | None, method_cfg: Any = None, factories: Factories | None = None) -> Factories:
    """The default factories (or ``factories``), with ``method``'s replacements applied.

    ``method`` is a kind of ``KINDS`` (``lsnmt.methods.resolve`` maps a params.yaml name to it);
    ``None`` or ``"naive"`` (the plain multilingual model) changes nothing. ``method_cfg`` ``None``
    takes the kind's default config.
    """
    base = factories or Factories()
    if method is None or method == "naive":
        return base
    build = builder(method)
    if method_cfg is None:
        method_cfg = KINDS[method].config()
    return build(method_cfg, base)


def build_transformer(
    cfg: ModelConfig,
    *,
    vocab_size: int,
    tgt_vocab_size: int | None = None,
    num_languages: int = 1,
    padding_idx: int = 1,
    method: str | None = None,
    method_cfg: Any = None,
    factories: Factories | None = None,
) -> Transformer:
    """Build the encoder-decoder model of ``cfg``.

    ``vocab_size``: the (joint) dictionary size, fairseq's specials included;
    ``tgt_vocab_size``: a separate target dictionary (only without ``share_all_embeddings``);
    ``num_languages``: language ids in :class:`~models.lang.LangContext` (and decoders when
    ``cfg.decoder == "per-target"``); ``method``/``method_cfg``: a ``KINDS`` entry and
    its config; ``factories``: explicit sub-module factories (tests, ablations).
    Built on the current default device (``with torch.device("meta"): …``).
    """
    kind = KINDS.get(method) if method is not None else None
    if kind is not None and kind.model is not None:  # e.g. the Deep Transformer's depth
        cfg = kind.model(method_cfg or kind.config(), cfg)
    dims = resolve_dims(cfg)
    f = resolve_factories(method, method_cfg, factories)
    tgt_vocab = vocab_size if tgt_vocab_size is None else tgt_vocab_size
    if cfg.share_all_embeddings and tgt_vocab != vocab_size:
        raise ValueError("share_all_embeddings needs one joint vocabulary (tgt_vocab_size == vocab_size)")
    src_emb = build_token_embedding(vocab_size, dims.embed_dim, padding_idx)
    tgt_emb = src_emb if cfg.share_all_embeddings else build_token_embedding(tgt_vocab, dims.embed_dim, padding_idx)

    def embedding(tokens: nn.Embedding) -> TransformerEmbedding:
        return TransformerEmbedding(tokens, SinusoidalPositionalEmbedding(dims.embed_dim, padding_idx,
                                                                          cfg.max_positions), cfg.dropout)

    enc_layers = [f.encoder_layer(_spec(cfg, dims, "encoder", i, dims.encoder_layers, None, num_languages), f)
                  for i in range(dims.encoder_layers)]
    encoder = Encoder(embedding(src_emb), enc_layers, _final_norm(cfg, dims), padding_idx)

    per_target = cfg.decoder == "per-target"
    stack_ids: list[int | None] = list(range(num_languages)) if per_target else [None]
    stacks = [
        DecoderStack([f.decoder_layer(_spec(cfg, dims, "decoder", i, dims.decoder_layers, s, num_languages), f)
                      for i in range(dims.decoder_layers)], _final_norm(cfg, dims))
        for s in stack_ids
    ]
    output_projection = nn.Linear(dims.embed_dim, tgt_vocab, bias=False)
    output_projection.weight = tgt_emb.weight  # tied: share_decoder_input_output_embed
    decoder = Decoder(embedding(tgt_emb), stacks, output_projection, per_target=per_target)
    return Transformer(encoder, decoder, num_languages=num_languages, max_positions=cfg.max_positions)

