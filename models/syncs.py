"""Count host-device synchronisations on any device, a CPU included (:func:`count_syncs`).

On a GPU, a host read of a device value (``.item()``, ``bool(t)``, ``.tolist()``, ``.cpu()``), an op whose
output shape depends on the data (``nonzero``, boolean-mask indexing, ``unique``, ``masked_select``,
``repeat_interleave`` without ``output_size``) and ``torch.cuda.synchronize`` all wait until the GPU has drained
its queue, so a hot path (an update, a method's forward, a decoding step) must have none.
``torch.cuda.set_sync_debug_mode("error")`` catches them on a GPU only; this counter catches the same calls on a
CPU, where the project's default tests run, so that a sync put back into a forward fails a CPU test:

* a ``TorchDispatchMode`` sees every aten op of the calling thread and flags those listed in
  :data:`SYNC_OPS` (``item``/``bool``/``int``/``float`` all reach ``aten._local_scalar_dense`` or
  ``aten.is_nonzero``) and indexing with a boolean mask;
* the host reads that never reach the dispatcher on a CPU tensor (``Tensor.tolist``, ``.numpy``, ``.cpu``,
  ``__array__``) and ``torch.cuda.synchronize`` are wrapped for the duration, counted on the calling thread only
  (a data-loading thread may read host tensors freely);
* an assignment of a Python number through a tensor index (``t[rows, cols] = 3``): for a CUDA tensor PyTorch makes
  the number a CPU tensor (``THPVariable_setitem``) and ``index_put_`` copies it to the device with a blocking copy,
  a synchronisation that a CPU tensor does not make (a number assigned through basic indexing, ``t[:, 0] = 3``, is a
  fill: no copy).

Use::

    with count_syncs() as syncs:
        loss = model(x).sum(); loss.backward()
    assert not syncs.events, syncs.report()

A CPU count over-approximates a GPU's in one way only: a value that lives on the host on a GPU too (a CPU
tensor built from host data) is counted when it is read inside the block; keep such reads outside it.
"""

from __future__ import annotations

import threading
import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

SYNC_OPS = frozenset({
    aten._local_scalar_dense.default,
    aten.is_nonzero.default,
    aten.item.default,
    aten.nonzero.default,
    aten.nonzero.out,
    aten.argwhere.default,
    aten.masked_select.default,
    aten._unique.default,
    aten._unique2.default,
    aten.unique_dim.default,
    aten.unique_consecutive.default,
    aten.repeat_interleave.Tensor,
    aten.equal.default,
    aten.allclose.default,
    aten.bincount.default,
})
"""Aten ops that wait for the device: host reads of a value, and ops whose output size depends on the data
(``repeat_interleave.Tensor`` counts unless ``output_size`` is given; ``bincount`` reads its input's maximum on a
GPU, ``minlength`` or not, where the CPU reads it without a dispatched op)."""

HOST_READS = ("tolist", "numpy", "cpu", "__array__")
"""``Tensor`` methods that copy a value to the host (no dispatch on a CPU tensor, so wrapped instead)."""

_INDEX_OPS = frozenset({aten.index.Tensor, aten.index_put.default, aten.index_put_.default,
                        aten._index_put_impl_.default})


@dataclass
class SyncLog:
    """The synchronising calls seen: ``events`` is ``[(what, where)]`` in order (``where``: the innermost frame
    outside torch, as ``file:line``)."""

    events: list[tuple[str, str]] = field(default_factory=list)

    def add(self, what: str) -> None:
        self.events.append((what, _caller()))

    @property
    def count(self) -> int:
        return len(self.events)

    def report(self) -> str:
        """One line per distinct (call, place), with how often it occurred."""
        counts = Counter(self.events)
        return "; ".join(f"{what} at {where} x{n}" for (what, where), n in counts.most_common()) or "no sync"


def _caller() -> str:
    for frame in reversed(traceback.extract_stack()[:-2]):
        name = frame.filename.replace("\\", "/")
        if "/torch/" not in name and not name.endswith("/models/syncs.py"):
            return f"{name.rsplit('/', 2)[-2]}/{name.rsplit('/', 1)[-1]}:{frame.lineno}"
    return "?"


def _tensor_index(index: Any) -> bool:
    """``index`` (of ``t[index] = v``) holds a tensor: advanced indexing, which goes through ``index_put_``."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, torch.Tensor) for i in parts)


def _bool_index(args: Any) -> bool:
    indices = args[1] if len(args) > 1 else ()
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices or ())


class _SyncMode(TorchDispatchMode):
    def __init__(self, log: SyncLog) -> None:
        super().__init__()
        self.log = log

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in SYNC_OPS and not (func is aten.repeat_interleave.Tensor and kwargs.get("output_size")):
            self.log.add(str(func.overloadpacket.__name__))
        elif func in _INDEX_OPS and _bool_index(args):
            self.log.add(f"{func.overloadpacket.__name__} with a boolean mask")
        return func(*args, **kwargs)


@contextmanager
def count_syncs() -> Iterator[SyncLog]:
    """Record, on this thread, every call that would synchronise host and device (module docstring)."""
    log = SyncLog()
    me = threading.get_ident()
    originals: dict[str, Any] = {name: getattr(torch.Tensor, name) for name in HOST_READS}
    sync = torch.cuda.synchronize

    def wrap(name: str) -> Any:
        original = originals[name]

        def read(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == me:
                log.add(name)
            return original(self, *args, **kwargs)

        return read

    def synchronize(*args: Any, **kwargs: Any) -> None:
        if threading.get_ident() == me:
            log.add("cuda.synchronize")
        sync(*args, **kwargs)

    setitem = torch.Tensor.__setitem__

    def set_number(self: torch.Tensor, index: Any, value: Any) -> None:
        if threading.get_ident() == me and isinstance(value, (bool, int, float)) and _tensor_index(index):
            log.add("setitem of a Python number through a tensor index")
        setitem(self, index, value)

    for name in HOST_READS:
        setattr(torch.Tensor, name, wrap(name))
    torch.Tensor.__setitem__ = set_number  # type: ignore[method-assign,assignment]
    torch.cuda.synchronize = synchronize
    try:
        with _SyncMode(log):
            yield log
    finally:
        for name, original in originals.items():
            setattr(torch.Tensor, name, original)
        torch.Tensor.__setitem__ = setitem  # type: ignore[method-assign]
        torch.cuda.synchronize = sync
