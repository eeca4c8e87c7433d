"""Models on the meta device, for counting: shapes without storage, built in a fraction of the time.

On the meta device initialisation computes nothing, yet every initialiser still goes through PyTorch's dispatch
(and the device mode's): half of the time it takes to build the papers' 165 configurations. :func:`meta_device`
makes ``torch.nn.init``'s in-place initialisers no-ops while inside; use it only to count (parameters, shapes),
never for a model that will be trained or loaded, and from one thread (it swaps the functions of the module)::

    with meta_device():
        model = build_transformer(ModelConfig(arch="transformer_big"), vocab_size=64_000)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import Tensor, nn

INITIALISERS = ("uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "orthogonal_",
                "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_")
"""The ``torch.nn.init`` functions skipped inside :func:`meta_device` (looked up at call time by our modules and
torch's own ``reset_parameters``)."""


def _keep(tensor: Tensor, *args: object, **kwargs: object) -> Tensor:
    return tensor


@contextmanager
def meta_device() -> Iterator[None]:
    """``torch.device("meta")`` with ``torch.nn.init``'s initialisers skipped (module docstring)."""
    saved = {name: getattr(nn.init, name) for name in INITIALISERS}
    try:
        for name in INITIALISERS:
            setattr(nn.init, name, _keep)
        with torch.device("meta"):
            yield
    finally:
        for name, fn in saved.items():
            setattr(nn.init, name, fn)
