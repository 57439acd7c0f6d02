"""Lexical evidence for the offline judge, in English and German.

What a claim and a source sentence can be compared on without understanding them:
their content terms (stemmed, stop words removed, German compounds matched by their
parts), their figures (value and unit), the direction they state (increase/decrease,
improve/worsen), negation, absolute words ("all", "always", "vollständig") and hedges
("may", "some", "teilweise"). Each is a small, explicit word list: the offline judge
rests on these cues and says `uncertain` where none decides.

The vocabulary lives in one module per kind (``words``, ``terms``, ``similarity``, ``cues``,
``numerals``, ``quantities``, ``proportions``); this package is their public face.
"""

from analysis.pipeline.judging.lexical.cues import (absolutes, certainties, direction_positions, directions, hedged,
                                                    is_cue, modally_hedged, negated, negated_only_by_never,
                                                    open_question)
from analysis.pipeline.judging.lexical.numerals import NUMBER_WORDS, SHARE_WORDS
from analysis.pipeline.judging.lexical.proportions import Share, shares
from analysis.pipeline.judging.lexical.quantities import Quantity, compatible_units, quantities, same_value
from analysis.pipeline.judging.lexical.similarity import antonym_swap, root, similarity, synonymous
from analysis.pipeline.judging.lexical.terms import claim_core, content_terms, term_match
from analysis.pipeline.judging.lexical.words import STOPWORDS, language, stem, word_spans, words

__all__ = [
    "NUMBER_WORDS", "SHARE_WORDS", "STOPWORDS", "Quantity", "Share", "absolutes", "antonym_swap", "certainties",
    "claim_core", "compatible_units", "content_terms", "direction_positions", "directions", "hedged", "is_cue",
    "language", "modally_hedged", "negated", "negated_only_by_never", "open_question", "quantities", "root",
    "same_value", "shares", "similarity", "stem", "synonymous", "term_match", "word_spans", "words",
]
