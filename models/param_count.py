"""Parameter accounting: training, inference, shared and deployed counts of a model.

*Training* parameters are all distinct parameters (tied embeddings once).
*Inference* parameters are those a forward pass for one direction ``src -> tgt``
uses at test time: per-target decoders count one decoder, language-specific
modules count what they report through
:class:`~models.ls.base.ReportsActiveParams` (``models.ls.base.active_parameters``
walks the module tree). Fixed sinusoidal positions are buffers, not parameters
(as in fairseq). *Deployed* parameters are the union over every direction of the
inference parameters: what a model serving all directions through its inference
route stores (the LMS-FD paper's "Inference" column: FD-LS keeps all language
experts but drops the shared FFN, LMS+FD-Share keeps only the shared factors).

The papers' #params columns are counted with these by :mod:`lsnmt.report.paper_counts` (``reports/params.csv``).
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
from torch import nn

from models.ls.base import active_parameters, split_active


def train_params(model: nn.Module) -> int:
    """All distinct parameters (``model.parameters()`` yields tied weights once)."""
    return sum(p.numel() for p in model.parameters())


def _key(t: torch.Tensor) -> tuple[int, int, tuple[int, ...], tuple[int, ...]]:
    """Identity of a parameter or of a view of one (``weight[l]``): the same slice twice counts once."""
    base = t._base if t._base is not None else t
    return id(base), t.storage_offset(), tuple(t.shape), tuple(t.stride())


def _distinct(tensors: Iterator[torch.Tensor], seen: dict | None = None) -> dict:
    seen = {} if seen is None else seen
    for t in tensors:
        seen[_key(t)] = t  # keep the tensors alive: ids stay unique
    return seen


def inference_params(model: nn.Module, src: int, tgt: int) -> int:
    """Distinct parameters used to translate ``src -> tgt`` at test time."""
    return sum(p.numel() for p in _distinct(active_parameters(model, src, tgt)).values())


def shared_params(model: nn.Module, directions: list[tuple[int, int]]) -> int:
    """Distinct parameters that every direction ``(src, tgt)`` of ``directions`` uses at test time: the model's
    shared capacity (tied embeddings once; per-language slices of a parameter are not shared)."""
    per_direction = [_distinct(active_parameters(model, s, t)) for s, t in directions]
    common = set.intersection(*(set(d) for d in per_direction)) if per_direction else set()
    return sum(per_direction[0][k].numel() for k in common)


def deployed_params(model: nn.Module, num_languages: int, pivot: int = 0) -> int:
    """Distinct parameters of the inference route over all directions ``pivot <-> l`` (every language as source
    and as target, so every per-language slice a direction may use)."""
    shared, reporting = split_active(model)  # the tree walked once, not once per direction
    seen = _distinct(iter(shared))
    for lang in range(num_languages):
        if lang != pivot:
            for src, tgt in ((pivot, lang), (lang, pivot)):
                for module in reporting:
                    _distinct(module.active_parameters(src, tgt), seen)  # type: ignore[operator]
    return sum(p.numel() for p in seen.values())


def fairseq_dict_size(spm_vocab: int, n_tags: int, padding_factor: int = 8) -> int:
    """Rows of a fairseq dictionary built from a SentencePiece vocabulary plus language tags.

    ``spm_vocab - 3`` pieces (SentencePiece's ``<unk> <s> </s>`` are replaced by)
    fairseq's 4 specials ``<s> <pad> </s> <unk>``, plus ``n_tags`` tag symbols,
    rounded up to a multiple of ``padding_factor`` (``fairseq-preprocess --padding-factor 8``).
    """
    n = spm_vocab - 3 + 4 + n_tags
    return -(-n // padding_factor) * padding_factor
