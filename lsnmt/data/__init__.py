"""Data stages' code: download, prepare, sample, SentencePiece, encode (the layout: :mod:`lsnmt.data.layout`)."""
