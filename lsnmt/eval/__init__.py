"""Evaluation suite: scores, the papers' aggregates and analyses, one entry point.

=================  ============================================================================
module             what it computes
=================  ============================================================================
``scores``         BLEU, spBLEU (flores101/200), chrF with their sacreBLEU signatures
``aggregate``      en-xx / xx-en / all averages, win ratio, resource-group averages
``groups``         the papers' language groupings as data; OPUS-100 size thresholds
``significance``   paired bootstrap resampling against the baseline (Koehn 2004, as sacreBLEU)
``degenerate``     near-empty or sub-1-BLEU output: no significance verdict or win ratio against it
``offtarget``      off-target rate with fastText lid.176
``similarity``     CLM Sec. 5.2.1 top-1 similarity search on encoder sentence embeddings
``tsne``           CLM Figure 3: t-SNE of the sentence embeddings, one panel per language group
``comet``          optional COMET (unbabel-comet; LSL App. G)
``cost``           parameter counts and batch-size-1 decoding speed (LSL Table 13)
``evaluate``       :func:`~lsnmt.eval.summary.evaluate`: everything above for one experiment
=================  ============================================================================
"""
