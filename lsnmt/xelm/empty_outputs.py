"""What the x-elm stage scripts share: the record written when an experiment has no ``xelm`` section.

DVC runs every stage of ``dvc.yaml`` whatever the experiment; an experiment without x-elm settings gets each
x-elm output folder with one ``status.json`` saying so (Snakemake's ``all`` asks for x-elm outputs only when
the section exists).
"""

from __future__ import annotations

import logging
from pathlib import Path

from lsnmt import paths as P
from lsnmt.io import atomic_dir, write_json

log = logging.getLogger(__name__)


def not_configured(exp: str, lm_data: object | None, out: Path) -> bool:
    """``True`` (after writing ``out/status.json``) when experiment ``exp`` has no x-elm sections (``lm_data``, the
    ``lm_data`` section, is ``None``)."""
    if lm_data is not None:
        return False
    reason = f"experiments.{exp} has no lm_data and xelm sections"
    log.warning("%s: nothing to do for %s", reason, out)
    with atomic_dir(out) as tmp:
        write_json(tmp / "status.json", {"status": "not configured", "reason": reason})
    return True


def job_parents(exp: str) -> None:
    """Create the (possibly empty) folders that hold one sub-folder per expert / HMR job.

    ``lm_hmr``, ``lm_eval`` and ``lm_icl`` depend on these folders in DVC, which refuses a missing dependency:
    an experiment without x-elm, or without HMR targets, lists no such job. Only empty folders are made here.
    """
    for folder in (P.EXPERTS, P.HMRS):
        P.at(folder, exp).mkdir(parents=True, exist_ok=True)
