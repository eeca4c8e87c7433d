"""The compiled training forward (``train.compile``): :func:`compile_net` and :func:`step_begin`.

Eager PyTorch makes the host dispatch every operation of an update (``lsnmt.train.ops`` counts them: ~1,000 for
``default_gpu``'s naive model, forward and backward); on a GPU, for a model whose maths takes a few milliseconds,
that dispatch is the update's time. ``torch.compile`` traces the forward (and, through AOTAutograd, its backward)
once into graphs that run with far fewer host calls:

* ``default``: inductor fuses the elementwise work into a few generated kernels (matrix multiplies stay cuBLAS);
* ``reduce-overhead``: the same, and each graph is recorded once per batch shape as a CUDA graph and replayed (one
  launch for the whole forward, one for the backward);
* ``cudagraphs``: CUDA graphs of the eager kernels, no inductor: seconds to compile instead of minutes.

**Shapes.** Batch dimensions are compiled as symbolic (``dynamic=True``): one trace serves every batch shape, so a
run compiles once (the trace is redone only when a guard fails, e.g. a new language layout in a method that routes
by language on the host). A CUDA graph, though, holds one shape: ``train.bucket_width`` keeps the shapes to a
small known set (``lsnmt.train.batching``, "Fixed shapes"), each recorded once.

**On a CPU** (the tests, a CPU run): ``reduce-overhead`` compiles as ``default`` (CUDA graphs need a GPU) and
``cudagraphs`` traces with ``aot_eager`` (the same graphs, run by the eager kernels): what a GPU would run, minus
the recording, so that a CPU test catches a graph break or a recompilation.

The loss (a custom ``autograd.Function``, ``lsnmt.train.loss``), the optimizer step (fused AdamW) and the gradient
accumulation stay eager: a few dozen operations per update.
"""

from __future__ import annotations

import logging
from typing import Literal

import torch
from torch import nn

log = logging.getLogger(__name__)

Mode = Literal["none", "default", "reduce-overhead", "cudagraphs"]
RECOMPILE_LIMIT = 64
"""Traces kept per compiled function before dynamo falls back to eager (torch's default, 8, is below the shapes a
bucketed run may trace when a method's guards specialise on them)."""


def uses_cuda_graphs(mode: Mode, device: torch.device) -> bool:
    """Whether ``mode`` records CUDA graphs on ``device``."""
    return device.type == "cuda" and mode in ("reduce-overhead", "cudagraphs")


def compile_options(mode: Mode, device: torch.device) -> dict[str, object]:
    """The keyword arguments of ``torch.compile`` for ``mode`` on ``device`` (module docstring)."""
    if mode == "cudagraphs":
        return {"backend": "cudagraphs" if device.type == "cuda" else "aot_eager", "dynamic": True}
    if mode == "reduce-overhead" and device.type == "cuda":
        return {"mode": "reduce-overhead", "dynamic": True}
    return {"mode": "default", "dynamic": True}


def compile_net(net: nn.Module, mode: Mode, device: torch.device) -> nn.Module:
    """``net`` through ``torch.compile`` in ``mode`` (``"none"``: ``net`` itself)."""
    if mode == "none":
        return net
    for name in ("recompile_limit", "cache_size_limit"):  # renamed in torch 2.7; either raises the limit
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, max(RECOMPILE_LIMIT, getattr(torch._dynamo.config, name)))
    torch._dynamo.config.suppress_errors = True  # a graph that fails to compile runs eagerly, with a warning
    options = compile_options(mode, device)
    log.info("train.compile %s: torch.compile(%s)", mode, ", ".join(f"{k}={v!r}" for k, v in options.items()))
    return torch.compile(net, **options)  # type: ignore[call-overload]


def step_begin(mode: Mode, device: torch.device) -> None:
    """Mark a new update for CUDA graph trees: the previous update's graph outputs (its logits, the gradients it
    returned) may be overwritten by the next replay (``torch.compiler.cudagraph_mark_step_begin``)."""
    if uses_cuda_graphs(mode, device):
        torch.compiler.cudagraph_mark_step_begin()
