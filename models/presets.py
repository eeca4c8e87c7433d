"""Architecture presets (defined torch-free in ``models/config/model.py``, beside :class:`ModelConfig`)."""

from models.config.model import PRESETS, ArchDims, resolve_dims

__all__ = ["PRESETS", "ArchDims", "resolve_dims"]
