"""The LSL paper's LSL rows (Pires et al. 2023, Tables 1, 4 and 5), appended to ``PAPER_ROWS``.

|θ| is every parameter of the model, |θeff| those one direction uses at inference (one decoder of ten, one
language's copy of each LSL): ``lsnmt.accounting.train_params`` / ``inference_params``. The model is the
paper's 16+3 Transformer (512 / 2048, 8 heads), 10 languages, with the 240,000-row embedding table that every
LSL baseline figure implies (``lsnmt/accounting.py``, ``_LSL_NOTE``; the stated 250K SentencePiece pieces add
5.12M to every |θ| and |θeff|). An LSL adds ``L - 1 = 9`` copies of a 3,152,384-parameter encoder layer
(28.37M), LS-FFN 9 feed-forward sublayers (18.90M), LS-ATTENTION 9 attention sublayers (9.46M); |θeff| stays
185.93M for every row, as the paper says. The Figure 4 sweep and Table 3 print no sizes; the search model
(Sec. 4.2, "804 million") is checked in ``tests/models/test_lsl.py`` (803.82M) since the paper gives no |θeff|
for it.
"""

from __future__ import annotations

from lsnmt.config import ModelConfig
from lsnmt.paper_row import PaperRow
from models.ls.lsl import LSLConfig

LSL_PAPER = "LSL (Pires et al. 2023)"
M = 10**6
VOCAB = 240_000
NOTE = ("LSL Sec. 3.1: an LSL is one full encoder layer per language (10), indexed by the source or target language; "
        "16+3 layers (512/2048, 8 heads), 240,000 embedding rows (the table every LSL baseline figure implies, see "
        "the naive LSL rows). |θeff|: one direction uses one copy of each LSL and, with separate decoders, one "
        "decoder: 185.93M for every row. LS-FFN / LS-ATTENTION (Table 4): only the feed-forward / self-attention "
        "sublayers of the LSL-NAS layers are language-specific; their residual LayerNorms stay shared (not stated; "
        "9 x 5 x 1,024 = 0.05M, below the 1M precision).")


def _model(decoder: str) -> ModelConfig:
    return ModelConfig(arch="transformer_base", encoder_layers=16, decoder_layers=3,
                       decoder="per-target" if decoder == "separate" else "shared")


def _row(table: str, method: str, cfg: LSLConfig, decoder: str, total: int) -> PaperRow:
    return PaperRow(paper=LSL_PAPER, table=table, experiment=f"lsl-{decoder}-decoder", method=method,
                    model=_model(decoder), vocab_size=VOCAB, num_languages=10, paper_train_params=total * M,
                    paper_inference_params=186 * M, kind="lsl", cfg=cfg, note=NOTE)


def lsl(src: tuple[int, ...] = (), tgt: tuple[int, ...] = (), components: str = "layer") -> LSLConfig:
    return LSLConfig(src=src, tgt=tgt, components=components)  # type: ignore[arg-type]


NAS = lsl((3, 4), (13, 14, 15))
"""LSL-NAS, the separate-decoder search's selection (Sec. 4.2, Figure 2)."""
NAS_SD = lsl((4,), (12, 13, 14, 15, 16))
"""LSL-NAS-SD, the shared-decoder search's selection (Sec. 4.4)."""

SEPARATE = {  # Table 1 (and Table 4's LSL-NAS, Table 5's separate-decoder row): method -> (config, |θ| in M)
    "lsl-nas": (NAS, 441),
    "lsl-nas+dense-pretraining": (NAS, 441),
    "lsl-s12-t15,16": (lsl((1, 2), (15, 16)), 413),
    "lsl-s123-t14,15,16": (lsl((1, 2, 3), (14, 15, 16)), 470),
    "lsl-s0-t13,14,15": (lsl((), (13, 14, 15)), 385),
    "lsl-s34-t0": (lsl((3, 4), ()), 356),
    "lsl-s13,14,15-t34": (lsl((13, 14, 15), (3, 4)), 441),
}
COMPONENTS = {  # Table 4
    "ls-ffn": (lsl((3, 4), (13, 14, 15), "ffn"), 394),
    "ls-attention": (lsl((3, 4), (13, 14, 15), "attention"), 347),
}
SHARED = {  # Table 5, shared decoder
    "lsl-nas-sd": (NAS_SD, 356),
    "lsl-nas-sd+dense-pretraining": (NAS_SD, 356),
    "lsl-s4-t13-16": (lsl((4,), (13, 14, 15, 16)), 328),
}


def lsl_rows() -> list[PaperRow]:
    rows = [_row("1", m, cfg, "separate", total) for m, (cfg, total) in SEPARATE.items()]
    rows += [_row("4", m, cfg, "separate", total) for m, (cfg, total) in COMPONENTS.items()]
    rows += [_row("5", m, cfg, "shared", total) for m, (cfg, total) in SHARED.items()]
    return rows


LSL_ROWS: tuple[PaperRow, ...] = tuple(lsl_rows())
