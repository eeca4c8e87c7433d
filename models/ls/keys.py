"""Which row of a per-language (or per-pair) table a sentence uses, and the keyed matmul that applies it.

Shared by CLM (``models/ls/clm.py``: mCLM's proportion weights, the LS ablation's maps) and the
adapters (``models/ls/adapter.py``). A *key* maps a direction ``src -> tgt`` (language ids, ``L``
languages, ``pivot`` the English id) to a row of a table:

* ``tgt``: the target language (``L`` rows). In a one-to-many model (CLM's en-xx models) this *is*
  the language pair; Philip et al.'s target adapters.
* ``src``: the source language (``L`` rows): a many-to-one model's pair; source adapters.
* ``pair``: the English-centric pair as a direction (``2 L`` rows): ``en -> x`` uses row ``x``,
  ``x -> en`` row ``L + x``. A zero-shot direction ``x -> y`` (neither is the pivot) uses the row of
  ``en -> y``. This is "one per language pair" for a model trained on both directions.
* ``xx``: the non-English language of the direction (``L - 1`` rows; a zero-shot ``x -> y`` uses ``y``):
  "one per language pair" of the paper's separate en-xx and xx-en models (94 OPUS-100 pairs, 13 WMT-14
  pairs: the sizes of CLM Tables 1-3 and 9 need exactly these rows), shared by ``en -> x`` and ``x -> en``
  in a model trained on both directions.
* ``direction``: any ordered pair ``src != tgt`` (``L (L - 1)`` rows, row ``src (L-1) + tgt - [tgt > src]``):
  Bapna and Firat's language-pair adapters in a many-to-many model (LSL Table 10).
* ``none``: one row for everything (a per-target decoder's own adapter).
"""

from __future__ import annotations

import torch
from torch import Tensor

from models.config.keys import Key
from models.lang import LangContext


def table_size(key: Key, num_languages: int) -> int:
    """Rows of a table indexed by ``key``."""
    n = num_languages
    return {"tgt": n, "src": n, "pair": 2 * n, "xx": n - 1, "direction": n * (n - 1), "none": 1}[key]


def key_for(key: Key, src: int, tgt: int, num_languages: int, pivot: int = 0) -> int:
    """Row used by the direction ``src -> tgt`` (ints)."""
    if key == "none":
        return 0
    if key == "tgt":
        return tgt
    if key == "src":
        return src
    if key == "pair":
        return num_languages + src if tgt == pivot and src != pivot else tgt
    if key == "xx":
        x = src if tgt == pivot else tgt
        return x - int(x > pivot)
    return src * (num_languages - 1) + tgt - int(tgt > src)


def key_ids(key: Key, langs: LangContext, num_languages: int, pivot: int = 0) -> int | Tensor:
    """Row of each sentence: an int on a one-direction batch (fast path), else a ``(B,)`` LongTensor."""
    src, tgt = langs.uniform_src, langs.uniform_tgt
    if key == "none":
        return 0
    if key == "tgt" and tgt is not None:
        return tgt
    if key == "src" and src is not None:
        return src
    if src is not None and tgt is not None:
        return key_for(key, src, tgt, num_languages, pivot)
    if key == "tgt":
        return langs.tgt
    if key == "src":
        return langs.src
    return langs.memo(("key_ids", key, num_languages, pivot), lambda: _mixed_ids(key, langs, num_languages, pivot))


def _mixed_ids(key: Key, langs: LangContext, num_languages: int, pivot: int) -> Tensor:
    """:func:`key_ids` of a batch of several directions, ``(B,)`` (made once per batch: ``LangContext.memo``)."""
    s, t = langs.src, langs.tgt
    if key == "pair":
        return torch.where((t == pivot) & (s != pivot), num_languages + s, t)
    if key == "xx":
        x = torch.where(t == pivot, s, t)
        return x - (x > pivot).long()
    return s * (num_languages - 1) + t - (t > s).long()


def keyed_matmul(x: Tensor, table: Tensor, ids: int | Tensor) -> Tensor:
    """``x (B, T, a)`` times each row's matrix ``table[ids] (a, b)`` -> ``(B, T, b)``.

    One matmul on a one-direction batch (a one-row table's matrix by ``squeeze``, a view whose gradient is one too,
    where ``table[0]``'s gradient is a zero-filled copy); a batched matmul over the gathered ``(B, a, b)`` matrices
    otherwise.
    """
    if isinstance(ids, int):
        return x @ (table.squeeze(0) if table.size(0) == 1 else table[ids])
    return torch.bmm(x, table.index_select(0, ids))


def keyed_rows(table: Tensor, ids: int | Tensor) -> Tensor:
    """``table[ids]`` broadcastable against ``(B, T, …)``: ``(…)`` for an int, ``(B, 1, …)`` for a tensor."""
    if isinstance(ids, int):
        return table[ids]
    return table.index_select(0, ids).unsqueeze(1)
