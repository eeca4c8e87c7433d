"""Language-specific methods: one line per kind, ``kind -> LSKind(config, build, criterion)``.

A new method adds ``models/ls/<name>.py`` (modules), ``models/config/<name>.py`` (its torch-free config),
one line in ``models/config/kinds.py`` (config and traits) and one line here; ``models/build.py`` looks the kind
up (no decorators, no directory-scan imports).
"""

from __future__ import annotations

from models.config.kinds import KINDS
from models.ls import adapter, clm, clsr, deep, fd, lms, lsl, switch
from models.ls.base import Criterion, LSBuilder, LSKind
from models.ls.distill import fd_criterion, lms_fd_criterion


def _kind(name: str, build: LSBuilder, criterion: Criterion | None = None) -> LSKind:
    return LSKind(KINDS[name].config, build, criterion, KINDS[name].model)


LS_KINDS: dict[str, LSKind] = {
    "lms": _kind("lms", lms.build),  # Xu et al. 2023 Sec. 2 (pair- or language-wise)
    "lms_fd": _kind("lms_fd", lms.build, lms_fd_criterion),  # Sec. 4, Eq. 4
    "fd": _kind("fd", fd.build, fd_criterion),  # Sec. 3, Eq. 2-3
    "switch": _kind("switch", switch.build),  # Fedus et al. 2021
    "clsr": _kind("clsr", clsr.build),  # Zhang et al. 2021 (share: false = CLSR*)
    "clm": _kind("clm", clm.build),  # Liu et al. 2022 Sec. 3: sCLM / mCLM / LS ablation
    "adapter": _kind("adapter", adapter.build),  # Bapna and Firat 2019; Philip et al. 2020
    "deep": _kind("deep", deep.build),  # CLM Sec. 4.2 (Zhang et al. 2020)
    "lsl": _kind("lsl", lsl.build),  # Pires et al. 2023 Sec. 3.1, Tables 1, 3-5
}
assert LS_KINDS.keys() == KINDS.keys()

LS_BUILDERS: dict[str, LSBuilder] = {kind: k.build for kind, k in LS_KINDS.items()}
"""``kind -> build(method_cfg, defaults) -> Factories`` (what ``models/build.py`` looks up)."""


def criterion(kind: str | None) -> Criterion | None:
    """The training criterion ``kind`` registers (``None``: the trainer's default)."""
    return None if kind is None else LS_KINDS[kind].criterion
