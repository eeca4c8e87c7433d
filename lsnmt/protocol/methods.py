"""Method-level settings of the protocol: every method a paper experiment trains, its settings and their source.

The settings are the experiment's ``method_cfg`` entry as written (``kind`` apart; a key left out takes the
kind's default, ``models/config``); the source names where the method and the values of that paper come from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lsnmt.experiment.params import Experiment
from models.config.kinds import KINDS

METHOD_SOURCES: dict[str, dict[str, str]] = {
    "lmsfd": {
        "naive": "Sec. 5.2, App. A (the naive multilingual Transformer)",
        "lms": ("Sec. 2 (LMS: W + Wv Wf per language or pair), Sec. 5.2 (d = 32 IWSLT'14; d = 64 / 16 / 4 "
                "OPUS-100, sized to Switch / CLSR), App. D, Table 6 and 9 (OPUS-15: d = 20, 4 ... 60, attention)"),
        "fd": "Sec. 3 (Fuse Distillation: language-level MoE + a shared FFN, Share and LS routes from one training)",
        "lms_fd": "Sec. 4 (LMS+FD), Sec. 5.2 (the ranks of the LMS rows)",
        "switch": ("Sec. 5.1 (Switch Transformer, Fedus et al. 2021, top-1: 16 experts every two layers, gate "
                   "balance loss weight 0.01), Table 9 (E = 4 ... 16)"),
        "clsr": "Sec. 5.1 (CLSR, Zhang et al. 2021: budget p = 0.3; CLSR* without sharing)",
    },
    "clm": {
        "naive": "Sec. 4.2 (Multilingual: Transformer-Base)",
        "adapter": ("Sec. 4.2 (Bapna and Firat 2019, bottleneck 128; Table 9 caption), Figure 2 footnote 6 "
                    "(bottlenecks 32 ... 112); `adapter_lean`: the bias- and LayerNorm-free count Table 1 implies"),
        "clsr": "Sec. 4.2 (CLSR, Zhang et al. 2021)",
        "deep": "Sec. 4.2 (Deep Transformer, depth sized to CLM's parameters: Tables 1, 2)",
        "clm": ("Sec. 3 (sCLM: one P per layer; mCLM: one per pair), Tables 1, 2, 9 captions (k), Table 3 (k = 94 "
                "ablations: placements E / D / dedicated / LS), Figure 2 footnote 6 (k = 74 ... 194), Figure 4 "
                "(top-w sweep)"),
    },
    "lsl": {
        "naive": "Sec. 4.1-4.2 (the separate-decoder baseline; shared decoder in the zero-shot setting, Sec. 4.5)",
        "lsl": ("Sec. 3.1 (LSL: source- / target-indexed encoder layers), Sec. 3.2 and Figure 2 (LSL-NAS: SRC={3, 4} "
                "& TGT={13, 14, 15}), Sec. 3.3 (dense pre-training), Tables 1, 3-5 and Figure 4 (the layouts and "
                "the wider baselines, LSL kind without LSLs)"),
        "adapter": ("Sec. 4.2 (language adapters on the encoder, source or source+target indexed, bottlenecks 128 / "
                    "256 / 512), App. D / Table 10 (language-pair adapters, encoder+decoder adapters)"),
    },
}
"""Paper -> method kind -> where its methods and their settings come from in that paper (a kind the paper does not
name: the kind's own source, ``models.config.kinds.Kind.source``)."""


def settings(entry: Mapping[str, Any]) -> str:
    """``key value`` pairs of a ``method_cfg`` entry, ``kind`` apart; ``–`` for none."""
    return ", ".join(f"{k} {_value(v)}" for k, v in entry.items() if k != "kind") or "–"


def _value(v: Any) -> str:
    if isinstance(v, list | tuple):
        return "[" + " ".join(map(_value, v)) + "]"
    return f"{v:g}" if isinstance(v, float) else str(v)


def rows(exp: Experiment, paper: str) -> list[tuple[str, str, str, str]]:
    """``(method, kind, settings, source)`` of every method the experiment trains (its ``methods`` list)."""
    out = []
    for name in exp.methods or ("naive", *exp.method_cfg):
        method = exp.method_cfg.get(name)
        entry = {"kind": "naive"} if method is None else method.entry  # as written (a key left out: its default)
        kind = str(entry.get("kind", "naive"))
        own = KINDS[kind].source if kind in KINDS else ""
        out.append((name, kind, settings(entry), METHOD_SOURCES.get(paper, {}).get(kind, own)))
    return out
