"""Language-specific methods' modules: one file per kind, looked up through the kind table.

``models.config.kinds.KINDS`` is the one table of kinds (config, traits, and ``"module:function"`` references
to the builder and criterion here); :func:`builder` and :func:`criterion` import what it names (no decorators,
no directory-scan imports).
"""

from __future__ import annotations

from models.config.kinds import KINDS, load
from models.ls.base import Criterion, LSBuilder


def builder(kind: str) -> LSBuilder:
    """``build(method_cfg, factories) -> factories`` of ``kind``; ``KeyError`` naming the known kinds."""
    if kind not in KINDS:
        raise KeyError(f"unknown language-specific method {kind!r} (known: {', '.join(sorted(KINDS))})")
    return load(KINDS[kind].build)


def criterion(kind: str | None) -> Criterion | None:
    """The training criterion of ``kind`` (``None``: the trainer's default)."""
    ref = None if kind is None else KINDS[kind].criterion
    return None if ref is None else load(ref)
