"""x-elm never loads shared artifacts in a way that can run code (pickle, torch.load without weights_only)."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_xelm_loads_no_pickle() -> None:
    for path in sorted((ROOT / "lsnmt" / "xelm").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import pickle|from pickle)|pickle\.loads?\(|allow_pickle=True|joblib", text,
                             re.M), path
        for call in re.findall(r"torch\.load\([^)]*\)", text):
            assert "weights_only=True" in call, (path, call)
