"""Optional COMET scores (Rei et al. 2020; LSL App. G, Table 12: wmt20-comet-da).

Enabled by listing ``comet`` in ``evaluate.metrics`` (off by default). Needs the
package ``unbabel-comet`` (not a project dependency: it pins its own torch and
transformers) and the checkpoint ``evaluate.comet_model``: a local
``model.ckpt`` path, or a Hugging Face name fetched into the HF cache. Either
missing is a :class:`~lsnmt.io.DataError` that says what to install or download.
COMET reads the untagged source, the hypothesis and the reference of every sentence.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from lsnmt.io import DataError


def import_comet() -> Any:
    """The ``comet`` module, or a :class:`DataError` saying how to install it."""
    try:
        return importlib.import_module("comet")
    except ImportError:
        raise DataError("evaluate.metrics lists 'comet' but the package unbabel-comet is not installed: "
                        "`pip install unbabel-comet` into the environment, or remove 'comet' from "
                        "evaluate.metrics") from None


@lru_cache(maxsize=1)
def load_comet(model: str) -> Any:
    """The COMET model ``model`` (a ``.ckpt`` path or a Hugging Face name)."""
    comet = import_comet()
    path = Path(model)
    if path.suffix == ".ckpt" or path.is_absolute() or model.startswith("."):
        if not path.is_file():
            raise DataError(f"{path}: COMET checkpoint (evaluate.comet_model) not found")
        return comet.load_from_checkpoint(str(path))
    try:
        checkpoint = comet.download_model(model)
    except Exception as exc:  # network, auth and cache errors all mean "model absent"
        raise DataError(f"COMET model {model!r} is not available ({type(exc).__name__}: {exc}). Fetch it where "
                        f"there is internet access (`huggingface-cli download {model}`) and set "
                        f"evaluate.comet_model to its checkpoints/model.ckpt") from None
    return comet.load_from_checkpoint(checkpoint)


def comet_score(sources: Sequence[str], hyps: Sequence[str], refs: Sequence[str], model: str,
                batch_size: int = 16) -> dict[str, Any]:
    """System-level COMET (mean of the segment scores) with the model name as its signature."""
    scorer = load_comet(model)
    data = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(sources, hyps, refs, strict=True)]
    import torch

    out = scorer.predict(data, batch_size=batch_size, gpus=1 if torch.cuda.is_available() else 0,
                         progress_bar=False)
    return {"name": "COMET", "score": float(out.system_score), "signature": f"comet:{model}"}
