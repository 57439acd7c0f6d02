"""A claim's content terms and how a term is found among a sentence's terms.
"""

from __future__ import annotations


import re

from analysis.pipeline.judging.lexical.cues import is_cue
from analysis.pipeline.judging.lexical.numerals import NUMBER_WORDS
from analysis.pipeline.judging.lexical.similarity import similarity
from analysis.pipeline.judging.lexical.words import STOPWORDS, stem, words

def content_terms(text: str, lang: str, exclude: frozenset[str] = frozenset()) -> list[str]:
    """The text's content stems in order: no stop words, no cue words, no number words (a
    figure in words is read by `quantities` and `shares`, as digits are), at least 3 letters."""
    return [stem(w, lang) for w in words(text)
            if len(w) >= 3 and w not in STOPWORDS and w not in exclude and w not in NUMBER_WORDS and not is_cue(w)]


_AUTHOR = r"[A-ZÄÖÜ][\w'’-]+(?:\s+(?:et\s+al\.?|u\.\s*a\.|and|&|und)(?:\s+[A-ZÄÖÜ][\w'’-]+)?)?(?:\s*\(\d{4}[a-z]?\))?"
_FRAMING = re.compile(
    rf"^\s*(?:(?:[Aa]ccording\s+to|[Ll]aut)\s+{_AUTHOR}\s*,?\s*"
    rf"|{_AUTHOR}\s+(?:\w+\s+)?(?:found|finds|showed|shows|reported|reports|argued|argues|demonstrated|"
    rf"demonstrates|observed|observes|noted|notes|concluded|concludes|stated|states|suggested|suggests|"
    rf"zeigte|zeigten|zeigt|fand|fanden|findet|berichtet\w*|stellte\w*\s+fest|argumentiert\w*|"
    rf"beobachtete\w*|kommt|kamen|kam)\b\s*(?:that\b|dass\b|,\s*dass\b)?\s*"
    rf"|{_AUTHOR}\s+zufolge\s*,?\s*)",
)


#: A parenthetical author-year citation inside the claim ("(Visser & de Boer, 2023)", "(Müller u. a. 2021, S. 4)").
_PAREN_CITATION = re.compile(r"\s*\((?:[^()]*?[A-ZÄÖÜ][^()]*?,?\s*(?:\d{4}[a-z]?|n\.\s*d\.|o\.\s*J\.)[^()]*)\)")


def claim_core(claim: str) -> str:
    """The claim without a leading attribution ("Smith et al. (2019) found that", "Laut Müller
    (2021)", "According to Castillo,") and without author-year citations in brackets: author
    names are not what the source's sentence says."""
    return _PAREN_CITATION.sub("", _FRAMING.sub("", claim, count=1))


def term_match(term: str, found: set[str] | frozenset[str], compounds: bool, lang: str | None = None) -> float:
    """Credit for a claim stem in a set of source stems: 1 for the stem itself, 0.75 for a
    German compound that ends in it or starts with it ("dauer" in "schlafdau"), else the best
    `similarity` of the stem to one of them (near-synonyms, derivations, shared compound
    parts; 0 when none is close). `lang` is the stemmer's language, for the synonym list."""
    if term in found:
        return 1.0
    best = 0.0
    if compounds and len(term) >= 3:
        for other in found:
            if len(other) >= len(term) + 3 and (other.endswith(term) or other.startswith(term)):
                return 0.75
            if len(term) >= len(other) + 3 and len(other) >= 4 and (term.endswith(other) or term.startswith(other)):
                return 0.75
    if lang is not None:
        for other in found:
            best = max(best, similarity(term, other, lang, compounds))
    return best
