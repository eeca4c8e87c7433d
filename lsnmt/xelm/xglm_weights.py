"""XGLM-1.7B's released weights as x-elm's seed (Sec. 3.1, 5.2), renamed onto the project's LM (``models/lm.py``):
the ``lm_seed`` stage writes them as ``model.pt`` instead of training one (``lm_data.init: xglm``). The tokenizer
and the one-line offline error: :mod:`lsnmt.xelm.xglm`.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsnmt.io import DataError, atomic_dir, write_json
from lsnmt.xelm.config import LMConfig
from lsnmt.xelm.xglm import PREFIX, source, unavailable

if TYPE_CHECKING:  # torch is imported where weights are loaded: a stage start without torch is 1.5-2 CPU-s shorter
    import torch

log = logging.getLogger(__name__)


def _check_config(hf: Any, lm: LMConfig, vocab_size: int, name: str) -> None:
    """``xelm.lm`` must describe the checkpoint; one line naming the first key that differs."""
    pairs = (("embed_dim", lm.embed_dim, hf.d_model), ("ffn_dim", lm.ffn_dim, hf.ffn_dim),
             ("heads", lm.heads, hf.attention_heads), ("layers", lm.layers, hf.num_layers),
             ("activation", lm.activation, hf.activation_function), ("normalize_before", lm.normalize_before, True),
             ("vocabulary (meta.json)", vocab_size, hf.vocab_size))
    for key, ours, theirs in pairs:
        if ours != theirs:
            raise DataError(f"xelm.lm.{key} is {ours!r} but {name} has {theirs!r}: set params.yaml to the checkpoint")
    if not hf.scale_embedding or lm.block_size > hf.max_position_embeddings:
        raise DataError(f"{name}: scale_embedding {hf.scale_embedding}, max_position_embeddings "
                        f"{hf.max_position_embeddings} (xelm.lm.block_size {lm.block_size}) do not fit models/lm.py")


def state_dict(hf_state: dict[str, torch.Tensor], layers: int) -> dict[str, torch.Tensor]:
    """transformers' ``XGLMForCausalLM`` parameters under :func:`models.lm.build_lm`'s names."""
    out = {"embed.tokens.weight": hf_state["model.embed_tokens.weight"],
           "output_projection.weight": hf_state["model.embed_tokens.weight"],
           "final_norm.weight": hf_state["model.layer_norm.weight"],
           "final_norm.bias": hf_state["model.layer_norm.bias"]}
    names = {"self_attn.q_proj": "self_attn.q_proj", "self_attn.k_proj": "self_attn.k_proj",
             "self_attn.v_proj": "self_attn.v_proj", "self_attn.out_proj": "self_attn.out_proj",
             "self_attn_layer_norm": "self_attn_block.norm", "fc1": "ffn.fc1", "fc2": "ffn.fc2",
             "final_layer_norm": "ffn_block.norm"}
    for i in range(layers):
        for theirs, ours in names.items():
            for p in ("weight", "bias"):
                out[f"layers.{i}.{ours}.{p}"] = hf_state[f"model.layers.{i}.{theirs}.{p}"]
    return out


def load_weights(name: str, lm: LMConfig, vocab_size: int) -> dict[str, torch.Tensor]:
    """XGLM's weights (float32) as a state dict of the project's LM, after checking ``lm`` against its config."""
    import torch
    from transformers import XGLMForCausalLM

    try:
        hf = XGLMForCausalLM.from_pretrained(source(name), dtype=torch.float32)
    except (OSError, ValueError) as exc:
        raise unavailable(name, exc) from None
    _check_config(hf.config, lm, vocab_size, name)
    return state_dict({k: v.detach().clone() for k, v in hf.state_dict().items()}, lm.layers)


def write_seed(name: str, lm: LMConfig, meta: dict, out: Path) -> dict:
    """``out/model.pt`` (as a trained seed's: ``model``, ``config``, ``step`` 0), ``curve.tsv``, ``data.json``."""
    from lsnmt.train import checkpoint as ckpt
    from lsnmt.train.curve import COLUMNS
    from models.lm import build_lm

    if meta.get("tokenizer") != PREFIX + name:
        raise DataError(f"the LM data were tokenised with {meta.get('tokenizer')!r}, not {PREFIX + name!r}: run "
                        "the lm_data stage again")
    model = build_lm(lm, vocab_size=meta["vocab_size"], padding_idx=meta["pad"])
    model.load_state_dict(load_weights(name, lm, meta["vocab_size"]))
    config = {"job": "seed", "lm": asdict(lm), "init": PREFIX + name, "vocab_size": meta["vocab_size"],
              "pad": meta["pad"], "eos": meta["eos"]}
    info = {"job": "seed", "updates": 0, "tokens_seen": 0, "init": PREFIX + name,
            "note": "XGLM's released weights (x-elm Sec. 3.1), not trained here"}
    with atomic_dir(out) as tmp:
        ckpt.save(tmp / "model.pt", {"model": model.state_dict(), "config": config, "step": 0})
        (tmp / "curve.tsv").write_text("\t".join(COLUMNS) + "\n", encoding="utf-8")  # no update: the header
        write_json(tmp / "data.json", info)
    log.info("seed: %s's weights written to %s", name, out)
    return info
