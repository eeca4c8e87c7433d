"""Language-specific methods: one line per kind, ``kind -> LSKind(config, build, criterion)``.

A new method adds ``models/ls/<name>.py`` and one line here; ``models/build.py``
looks the kind up (no decorators, no directory-scan imports). ``params.yaml``'s
``method_cfg.<name>: {kind: <kind>, ...}`` is built into ``LS_KINDS[kind].config``
(``lsnmt/methods.py``).
"""

from __future__ import annotations

from models.ls import adapter, clm, clsr, deep, fd, lms, lsl, switch
from models.ls.base import LSBuilder, LSKind
from models.ls.distill import fd_criterion, lms_fd_criterion

LS_KINDS: dict[str, LSKind] = {
    "lms": LSKind(lms.LMSConfig, lms.build),  # Xu et al. 2023 Sec. 2 (pair- or language-wise)
    "lms_fd": LSKind(lms.LMSFDConfig, lms.build, lms_fd_criterion),  # Sec. 4, Eq. 4
    "fd": LSKind(fd.FDConfig, fd.build, fd_criterion),  # Sec. 3, Eq. 2-3
    "switch": LSKind(switch.SwitchConfig, switch.build),  # Fedus et al. 2021
    "clsr": LSKind(clsr.CLSRConfig, clsr.build),  # Zhang et al. 2021 (share: false = CLSR*)
    "clm": LSKind(clm.CLMConfig, clm.build),  # Liu et al. 2022 Sec. 3: sCLM / mCLM / LS ablation
    "adapter": LSKind(adapter.AdapterConfig, adapter.build),  # Bapna and Firat 2019; Philip et al. 2020
    "deep": LSKind(deep.DeepConfig, deep.build, model=deep.model),  # CLM Sec. 4.2 (Zhang et al. 2020)
    "lsl": LSKind(lsl.LSLConfig, lsl.build, model=lsl.model),  # Pires et al. 2023 Sec. 3.1, Tables 1, 3-5
}

LS_BUILDERS: dict[str, LSBuilder] = {kind: k.build for kind, k in LS_KINDS.items()}
"""``kind -> build(method_cfg, defaults) -> Factories`` (what ``models/build.py`` looks up)."""
