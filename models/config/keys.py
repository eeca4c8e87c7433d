"""Which row of a per-language (or per-pair) table a direction uses (``models/ls/keys.py`` explains each)."""

from typing import Literal

Key = Literal["tgt", "src", "pair", "xx", "direction", "none"]
