"""Deep Transformer baseline (Zhang et al. 2020; CLM Sec. 4.2): more layers, nothing language-specific.

CLM: "the model depth (for both encoder and decoder) are set to 26 and 8 for OPUS-100 and WMT-14".
Both stacks get the depth: 26 + 26 Transformer-Base layers with the 64,096-row embedding table give
224.086M (Table 1: 224.09M) and 8 + 8 with 64,008 rows 91.625M (Table 2: 91.63M); a 26-layer encoder
over a 6-layer decoder would be 140M. The exact figures need pre-norm's two final LayerNorms (2,048
parameters: post-norm gives 224.08M / 91.62M), and Zhang et al.'s deep models are pre-norm, so
``normalize_before: true`` is the default.

The method only changes the model config (:attr:`models.config.kinds.Kind.model`); its factories are the
defaults. As a method (not a separate experiment) it trains on the experiment's data next to the others.
"""

from __future__ import annotations

from models.config.deep import DeepConfig, model  # noqa: F401  (the kind's config, torch-free)
from models.factories import Factories


def build(cfg: DeepConfig, defaults: Factories) -> Factories:
    del cfg
    return defaults
