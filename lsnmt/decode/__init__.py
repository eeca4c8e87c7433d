"""Decoding: batched beam search and greedy search over ``models.transformer.Transformer``."""

from lsnmt.decode.beam import beam_search
from lsnmt.decode.common import Hypothesis, SearchResult, tag_start_tokens
from lsnmt.decode.greedy import greedy_search

__all__ = ["Hypothesis", "SearchResult", "beam_search", "greedy_search", "tag_start_tokens"]
