"""The corpus kinds of the source catalogue and the splits each provides: a leaf, torch-free, importing nothing
of ours.

The schema (``lsnmt.experiment.params``) checks every ``data.sources`` entry against it when params.yaml loads, and each
catalogue module (``lsnmt/data/sources/``) builds its :class:`~lsnmt.data.sources.base.Source` with these
splits, so that the schema needs no import of the catalogue (which imports the schema's types).
"""

from __future__ import annotations

_ALL = frozenset({"train", "valid", "test", "multiway"})
_BITEXT = frozenset({"train", "valid", "test"})

SOURCE_SPLITS: dict[str, frozenset[str]] = {
    "embedded": _ALL,
    "opus100": _BITEXT,
    "flores101": frozenset({"valid", "test", "multiway"}),
    "flores200": frozenset({"valid", "test", "multiway"}),
    "iwslt14": _BITEXT,
    "iwslt17": _BITEXT,
    "wmt14": _BITEXT,
    "ted_multiway": _ALL,
    "mc4": _BITEXT,
    "mtdata": _BITEXT,
    "local": _ALL,
}
"""kind -> the splits it can provide (``lsnmt.data.sources.SOURCES[kind].splits``)."""
