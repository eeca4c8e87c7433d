"""Decoding: batched beam search (:mod:`lsnmt.decode.beam`) and greedy search (:mod:`lsnmt.decode.greedy`) over
``models.transformer.Transformer``, translating a test set (:mod:`lsnmt.decode.translate`), and the torch-free
``decode`` section and ``translate`` view (:mod:`lsnmt.decode.config`, which the schema imports: this package
imports nothing on import)."""
