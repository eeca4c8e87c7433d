"""Hugging Face MarianMT at an experiment's naive dimensions, one training update at a time (``throughput.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from lsnmt.experiment.params import Experiment
from models.presets import resolve_dims


def marian_update(exp: Experiment, vocab: int, device: torch.device, pad: int, eos: int) -> Callable[[Any], None]:
    """``update(step)``: forward, label-smoothed loss, backward and fused AdamW over a trainer's step (its samples),
    bf16 autocast on a GPU when ``train.precision`` is bf16. MarianMT is post-norm (it has no pre-norm); its
    dimensions are the preset's with the experiment's overrides (``resolve_dims``)."""
    from transformers import MarianConfig, MarianMTModel

    dims = resolve_dims(exp.model)
    cfg = MarianConfig(
        vocab_size=vocab,
        decoder_vocab_size=vocab,
        d_model=dims.embed_dim,
        encoder_layers=dims.encoder_layers,
        decoder_layers=dims.decoder_layers,
        encoder_attention_heads=dims.heads,
        decoder_attention_heads=dims.heads,
        encoder_ffn_dim=dims.ffn_dim,
        decoder_ffn_dim=dims.ffn_dim,
        activation_function="relu",
        dropout=exp.model.dropout,
        attention_dropout=0.0,
        activation_dropout=0.0,
        max_position_embeddings=1024,
        scale_embedding=True,
        pad_token_id=pad,
        eos_token_id=eos,
        decoder_start_token_id=eos,
        share_encoder_decoder_embeddings=True,
        tie_word_embeddings=True,
    )
    model = MarianMTModel(cfg).to(device).train()  # type: ignore[arg-type]  # transformers types .to as a model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    bf16 = device.type == "cuda" and exp.train.precision == "bf16"

    def update(step: Any) -> None:
        for s in step.samples:
            s = s.to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                logits = model(
                    input_ids=s.src_tokens, attention_mask=s.src_tokens.ne(pad), decoder_input_ids=s.prev_output_tokens
                ).logits
                loss = torch.nn.functional.cross_entropy(
                    logits.reshape(-1, vocab).float(),
                    s.target.reshape(-1),
                    ignore_index=pad,
                    label_smoothing=0.1,
                    reduction="sum",
                )
            (loss / step.ntokens).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return update
