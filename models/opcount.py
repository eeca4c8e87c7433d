"""Count the ATen operations a piece of eager code dispatches (:func:`count_ops`): the CPU proxy of a GPU's host
cost per update.

In eager mode every dispatched ATen operation costs the host a trip through the dispatcher (and, for the ones that
compute, a kernel launch on a GPU). When the maths of an update is small, as for ``default_gpu``'s 256-dimensional
model, that host cost is the update's time: on a GPU the device waits for the host. The count does not depend on
the machine, so a CPU test can hold it (``tests/models/test_op_counts.py``). Two figures:

* ``total``: every operation the dispatcher sees below autograd (views and ``detach`` included: each is a call
  into the dispatcher, and each returns a new tensor the host allocates);
* ``kernels``: those that compute, i.e. would launch a kernel on a GPU (:data:`METADATA` ops, which only make a
  new view of the same storage, left out).

Use::

    with count_ops() as ops:
        loss = model(x).sum(); loss.backward()
    print(ops.total, ops.kernels, ops.report())
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

METADATA = frozenset(
    {
        "view",
        "_unsafe_view",
        "t",
        "transpose",
        "permute",
        "unsqueeze",
        "squeeze",
        "expand",
        "detach",
        "alias",
        "slice",
        "select",
        "split",
        "split_with_sizes",
        "unbind",
        "as_strided",
        "reshape",
        "narrow",
        "chunk",
        "view_as",
        "expand_as",
        "_reshape_alias",
        "unfold",
        "diagonal",
        "lift_fresh",
    }
)
"""Operations that return a view (or the same data) and launch no kernel on a GPU."""


@dataclass
class OpLog:
    """The operations seen, by name (``aten`` overload packets, e.g. ``addmm``)."""

    counts: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def kernels(self) -> int:
        """Operations that compute (not :data:`METADATA`)."""
        return sum(n for name, n in self.counts.items() if name not in METADATA)

    def report(self, top: int = 12) -> str:
        """``total (kernels): name n, ...`` for the ``top`` most frequent."""
        common = ", ".join(f"{name} {n}" for name, n in self.counts.most_common(top))
        return f"{self.total} ops ({self.kernels} computing): {common}"


class _OpMode(TorchDispatchMode):
    def __init__(self, log: OpLog) -> None:
        super().__init__()
        self.log = log

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.log.counts[str(func.overloadpacket.__name__)] += 1
        return func(*args, **(kwargs or {}))


@contextmanager
def count_ops() -> Iterator[OpLog]:
    """Record every ATen operation dispatched on this thread (the autograd engine's backward included: it runs the
    backward of a CPU graph on the calling thread) while the block runs."""
    log = OpLog()
    with _OpMode(log):
        yield log
