"""Cost of a trained model: parameter counts and decoding speed.

* Parameters (LSL |θ| and |θ_eff|, CLM/LMS-FD "#params"): training parameters and
  the parameters one direction uses at inference, from :mod:`models.param_count`.
* Decoding speed (LSL App. H, Table 13): target tokens per second translating one
  sentence at a time (batch size 1) with beam search, on one CPU thread by default
  (LSL: a single-threaded Xeon, DE-EN Flores-101 test, mean and standard deviation of 5 runs).
  A run decodes every given sentence; its speed is generated tokens (EOS included) / wall time.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

import torch

from lsnmt.decode.beam import beam_search
from models.lang import LangContext
from models.param_count import inference_params, train_params


def parameter_counts(model: torch.nn.Module, pairs: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """Training parameters and inference parameters (min / max over the directions ``pairs`` of language ids)."""
    per_direction = [inference_params(model, s, t) for s, t in pairs]
    return {"train_params": train_params(model),
            "inference_params_min": min(per_direction, default=None),
            "inference_params_max": max(per_direction, default=None)}


def _decode_all(model: torch.nn.Module, sources: Sequence[torch.Tensor], src_lang: int, tgt_lang: int,
                beam: int, lenpen: float, max_len_a: float, max_len_b: int, eos: int, pad: int) -> int:
    tokens = 0
    for src in sources:
        langs = LangContext.single(src_lang, tgt_lang, 1)
        result = beam_search(model, src.unsqueeze(0), langs, beam=beam, lenpen=lenpen, max_len_a=max_len_a,
                             max_len_b=max_len_b, eos=eos, pad=pad)
        tokens += len(result.tokens[0]) + 1
    return tokens


def decoding_speed(model: torch.nn.Module, sources: Sequence[torch.Tensor], src_lang: int, tgt_lang: int, *,
                   beam: int = 5, lenpen: float = 1.0, max_len_a: float = 1.2, max_len_b: int = 10, eos: int = 2,
                   pad: int = 1, runs: int = 5, threads: int = 1) -> dict[str, Any]:
    """Tokens/s at batch size 1 over ``runs`` timed runs (after one warm-up sentence).

    ``sources``: 1-d token tensors, each ending in EOS. Thread count is restored afterwards.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        model.eval()
        _decode_all(model, sources[:1], src_lang, tgt_lang, beam, lenpen, max_len_a, max_len_b, eos, pad)
        speeds, tokens = [], 0
        for _ in range(runs):
            start = time.perf_counter()
            tokens = _decode_all(model, sources, src_lang, tgt_lang, beam, lenpen, max_len_a, max_len_b, eos, pad)
            speeds.append(tokens / (time.perf_counter() - start))
    finally:
        torch.set_num_threads(previous)
    return {"tokens_per_second": statistics.mean(speeds),
            "std": statistics.stdev(speeds) if len(speeds) > 1 else 0.0,
            "runs": runs, "threads": threads, "sentences": len(sources), "tokens_per_run": tokens,
            "batch_size": 1, "beam": beam}
