"""No host-device synchronisation in any method's training update or decoding steps on a GPU: the CPU tests of
``tests/models/test_method_syncs.py`` under ``torch.cuda.set_sync_debug_mode("error")``, which raises at any call
that waits for the device (every ``KINDS`` entry and naive, mixed-direction batches moved as the trainer moves
them, shared and per-target decoders, every inference route). Run with ``--device cuda``; skipped without it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch

from tests.models.helpers import collated, method_model
from tests.models.test_method_syncs import KIND_NAMES, MIXED, decoding_steps, step_inputs, systems, update

pytestmark = pytest.mark.cuda


@contextmanager
def sync_is_an_error() -> Iterator[None]:
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        yield
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.parametrize("decoder", ["shared", "per-target"])
@pytest.mark.parametrize("kind", KIND_NAMES, ids=lambda k: k or "naive")
def test_a_training_update_never_waits_for_the_gpu(kind: str | None, decoder: str, device: torch.device) -> None:
    model = method_model(kind, decoder).to(device)
    batch = collated(MIXED).to(device)  # Sample.to: the languages' host ids travel with the batch
    update(model, kind, batch)  # warm-up: kernels, workspaces and allocations of a first call
    model.zero_grad(set_to_none=True)
    with sync_is_an_error():
        update(model, kind, batch)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


@pytest.mark.parametrize("decoder", ["shared", "per-target"])
@pytest.mark.parametrize("system", [s for k in KIND_NAMES for s in systems(k)], ids=lambda s: "-".join(
    x for x in (s[0] or "naive", s[1]) if x))
def test_decoding_steps_never_wait_for_the_gpu(system: tuple, decoder: str, device: torch.device) -> None:
    kind, route = system
    model, batch = method_model(kind, decoder).eval().to(device), collated(MIXED).to(device)
    langs, inputs = batch.langs.with_(route=route), step_inputs(len(batch.langs), device)
    with torch.no_grad():
        decoding_steps(model, langs, batch.src_tokens, inputs)  # warm-up
        with sync_is_an_error():
            decoding_steps(model, langs, batch.src_tokens, inputs)


def test_moving_a_mixed_batchs_languages_does_not_wait_for_queued_work(device: torch.device) -> None:
    """Set-sync-debug mode does not see a copy from pageable memory, which may wait for the stream's queued work
    (CUDA's "API synchronization behavior"): the languages of a mixed batch and their row groups are copied while
    a long kernel still runs, in a fraction of its time."""
    cycles = 2_000_000_000
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    torch.cuda._sleep(cycles)
    torch.cuda.synchronize()
    queued = time.perf_counter() - t0  # how long the kernel keeps the stream busy
    batch = collated(MIXED)
    torch.cuda._sleep(cycles)
    t0 = time.perf_counter()
    langs = batch.to(device).langs
    order = langs.groups("tgt").order
    moved = time.perf_counter() - t0
    torch.cuda.synchronize()
    assert moved < queued / 4, f"moving the languages took {moved:.3f} s behind a {queued:.3f} s kernel"
    assert torch.equal(langs.tgt.cpu(), batch.langs.tgt)
    assert torch.equal(order.cpu(), torch.from_numpy(batch.langs.groups("tgt").host_order))
