"""Average token-level feature proportions (ATP; CLM Sec. 5.1, Eq. 4) and the languages with the most
similar ATP vectors (CLM Tables 4, 10, 11).

For the test set ``D_l`` of language pair ``l`` and the CLM modules ``N_enc`` of the encoder,

    ATP_l^e = sum_{X in D_l} P_e(X) / sum_{X in D_l} |X| |N_enc|,    P_e(X) = sum_{x in X} sum_{m in N_enc} P_m(x)

(the decoder's ATP likewise over the target positions it is fed and its modules). ``P_m`` is Eq. 1's
smoothed proportion vector (before any top-``w`` pruning), so each ATP is a distribution over the ``k``
features. Similar languages: for each ``l`` the 5 others with the highest cosine similarity of ATP vectors.

Data: as in the paper, the test set of each en-xx direction (Sec. 5.1 studies "en-xx translation on the
OPUS-100 testset"): the encoded ``bin/test/en-xx`` shards, sources with their tags and EOS, decoder fed the
reference (teacher forcing, ``EOS y_1 … y_n``), first ``decode.max_sentences`` sentences, padding excluded.
mCLM and sCLM both qualify (the paper shows sCLM); the LS ablation has no proportions and gets none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from lsnmt.data.corpus import Direction, Vocab, collate
from models.ls.clm import Proportions

TOP = 5


def _hooks(model: nn.Module, sums: dict[str, Tensor], counts: dict[str, int], masks: dict[str, Tensor]) -> list:
    """Forward hooks on every :class:`Proportions` adding its output over the current non-pad positions."""
    handles = []
    for name, module in model.named_modules():
        if not isinstance(module, Proportions):
            continue
        side = "encoder" if name.startswith("encoder") else "decoder"

        def hook(_m: nn.Module, _inp: Any, out: Tensor, side: str = side) -> None:
            keep = masks[side].unsqueeze(-1).to(out.dtype)  # (B, T, 1)
            sums[side] = sums.get(side, 0) + (out * keep).sum((0, 1)).double()
            counts[side] = counts.get(side, 0) + int(masks[side].sum())

        handles.append(module.register_forward_hook(hook))
    return handles


@torch.no_grad()
def atp_vectors(model: nn.Module, batches: Iterable[tuple[Tensor, Tensor, Any]], pad: int) -> dict[str, np.ndarray]:
    """Eq. 4 over ``batches`` of ``(src_tokens, prev_output_tokens, langs)``: ``{side: (k,) ATP}``.

    ``counts`` adds ``|X|`` once per module call, so the denominator is ``sum |X| |N|`` as in Eq. 4.
    """
    sums: dict[str, Tensor] = {}
    counts: dict[str, int] = {}
    masks: dict[str, Tensor] = {}
    handles = _hooks(model, sums, counts, masks)
    try:
        device = next(model.parameters()).device
        for src, prev, langs in batches:
            src, prev = src.to(device), prev.to(device)
            masks["encoder"], masks["decoder"] = src.ne(pad), prev.ne(pad)
            model(src, prev, langs.to(device))
    finally:
        for h in handles:
            h.remove()
    return {side: (sums[side] / counts[side]).cpu().numpy() for side in sums}


def top_similar(vectors: Mapping[str, np.ndarray], top: int = TOP) -> dict[str, list[str]]:
    """For each language, the ``top`` other languages by cosine similarity of their vectors (ties: code order)."""
    langs = sorted(vectors)
    m = np.stack([vectors[lang] / max(float(np.linalg.norm(vectors[lang])), 1e-12) for lang in langs])
    sim = m @ m.T
    out = {}
    for i, lang in enumerate(langs):
        order = sorted((j for j in range(len(langs)) if j != i), key=lambda j: (-sim[i, j], langs[j]))
        out[lang] = [langs[j] for j in order[:top]]
    return out


def direction_batches(direction: Direction, vocab: Vocab, max_sentences: int | None,
                      batch_size: int = 64) -> Iterable[tuple[Tensor, Tensor, Any]]:
    n = min(len(direction), max_sentences or len(direction))
    for start in range(0, n, batch_size):
        rows = np.stack([np.zeros(min(batch_size, n - start), dtype=np.int64),
                         np.arange(start, min(start + batch_size, n), dtype=np.int64)], 1)
        s = collate([direction], rows, vocab)
        yield s.src_tokens, s.prev_output_tokens, s.langs


def atp_analysis(model: nn.Module, directions: Iterable[Direction], vocab: Vocab, pivot: str,
                 max_sentences: int | None) -> dict[str, Any]:
    """ATP per non-pivot language of the given ``pivot -> xx`` test directions, per side, and the top-5 lists."""
    per_lang: dict[str, dict[str, np.ndarray]] = {}
    for d in directions:
        lang = d.name.split("-")[1]
        per_lang[lang] = atp_vectors(model, direction_batches(d, vocab, max_sentences), vocab.pad)
    sides = sorted({s for v in per_lang.values() for s in v})
    out: dict[str, Any] = {"data": f"test sets of the {pivot}-xx directions (first {max_sentences or 'all'} "
                                   "sentences, teacher-forced), CLM Sec. 5.1 Eq. 4",
                           "languages": sorted(per_lang)}
    for side in sides:
        vecs = {lang: v[side] for lang, v in per_lang.items() if side in v}
        out[side] = {"atp": {lang: [round(float(x), 6) for x in v] for lang, v in sorted(vecs.items())},
                     "top5": top_similar(vecs) if len(vecs) > 1 else {}}
    return out
