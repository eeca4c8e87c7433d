"""The sha256 of a checkpoint's content: what ``torch.load`` gives back, not the bytes of the file.

A checkpoint stores this digest inside itself (:mod:`lsnmt.train.checkpoint`), so it cannot cover the file's
bytes; it covers what matters instead, the loaded values: every tensor's dtype, shape and bytes (on the CPU,
contiguous), every other value by type and ``repr`` (a float's is exact), mappings in their stored order. A bit
flipped in a tensor's storage or in the pickled structure changes it; bytes that ``torch.load`` does not read
(padding, zip metadata) do not.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch


def state_digest(state: Any) -> str:
    """Hex sha256 of ``state`` (nested dicts, lists, tuples, tensors and plain values)."""
    h = hashlib.sha256()
    _feed(h, state)
    return h.hexdigest()


def _feed(h: Any, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous().reshape(-1)
        h.update(f"T{t.dtype}{tuple(value.shape)};".encode())
        h.update(t.view(torch.uint8).numpy().data)
    elif isinstance(value, dict):
        h.update(f"D{len(value)};".encode())
        for k, v in value.items():
            _feed(h, k)
            _feed(h, v)
    elif isinstance(value, (list, tuple)):
        h.update(f"{'L' if isinstance(value, list) else 'U'}{len(value)};".encode())
        for v in value:
            _feed(h, v)
    else:
        text = repr(value).encode()
        h.update(f"{type(value).__name__}{len(text)};".encode() + text)
