"""How well a passage sentence covers a claim's terms (`Scorer`), the sentences of the retrieved
passages, and the note for a claim written in another language than its source.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache

from analysis.pipeline.judging import lexical
from analysis.pipeline.retrieval.chunking import sentence_spans
from analysis.pipeline.retrieval.index import Hit

from analysis.pipeline.judging.assessment import Sentence
from analysis.pipeline.judging.wording import CLAUSE_BREAK

_LANGUAGE_NAMES = {"en": "English", "de": "German"}


def across_languages(claim: str, passages: Sequence[Hit]) -> str:
    """A note for an `uncertain` claim written in another language than most of its passages (a
    German thesis citing English work): words are matched across languages only through the
    short bilingual list, so a reader or a model judge must decide. Empty when the languages agree."""
    claim_lang = lexical.language(claim)
    langs = [lexical.language(hit.text) for hit in passages]
    source_lang = max(set(langs), key=langs.count) if langs else claim_lang
    if source_lang == claim_lang:
        return ""
    return (f"the claim is {_LANGUAGE_NAMES[claim_lang]}, the source {_LANGUAGE_NAMES[source_lang]}: words are "
            f"matched across languages only through a short bilingual list (a model judge reads both); ")


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def split_sentences(passages: Sequence[Hit]) -> list[Sentence]:
    """Every sentence of every passage, verbatim (offsets into the passage text)."""
    out = []
    for rank, hit in enumerate(passages):
        lang, parts = _passage_sentences(hit.text)
        out += [Sentence(text=text, window=window, hit=hit, rank=rank, lang=lang, pairs=pairs)
                for text, window, pairs in parts]
    return out


#: Passages whose sentences a judge keeps split: the claims citing one source are judged against
#: the same few passages, and splitting them was a sixth of the offline judge's time (issue 29).
SPLIT_CACHE = 4096


@lru_cache(maxsize=SPLIT_CACHE)
def _passage_sentences(passage: str) -> tuple[str, tuple[tuple[str, str, tuple[str | None, str | None]], ...]]:
    """A passage's language and its sentences: (text, window, (with the one before, with the one after))."""
    spans = sentence_spans(passage) or [(0, len(passage))]
    texts = [passage[a:b].strip() for a, b in spans]
    parts = []
    for i, text in enumerate(texts):
        if not text:
            continue
        window = " ".join(texts[max(0, i - 1):i + 2])
        before = passage[spans[i - 1][0]:spans[i][1]].strip() if i > 0 and texts[i - 1] else None
        after = passage[spans[i][0]:spans[i + 1][1]].strip() if i + 1 < len(spans) and texts[i + 1] else None
        parts.append((text, window, (before, after)))
    return lexical.language(passage), tuple(parts)


_DEFINED = re.compile(r"((?:[^\W\d_][\w-]*\s+){1,6}?)\((?P<abbr>[A-ZÄÖÜ][A-Za-zÄÖÜäöü]{1,7})\)")


@lru_cache(maxsize=1024)
def _abbreviations(texts: tuple[str, ...]) -> dict[str, str]:
    """Abbreviations the source defines, lower case, to the words they stand for: "recycled
    concrete aggregate (RCA)" → {"rca": "recycled concrete aggregate"} (the initials of the last
    words before the bracket must spell it)."""
    out: dict[str, str] = {}
    for text in texts:
        for m in _DEFINED.finditer(text):
            abbr = m.group("abbr")
            capitals = [c for c in abbr if c.isupper()]
            if len(capitals) < 2:
                continue
            words = re.split(r"[\s-]+", m.group(1).strip())
            initials = [w[0].lower() for w in words if w]
            n = len(capitals)
            if len(initials) >= n and initials[-n:] == [c.lower() for c in capitals]:
                out[abbr.lower()] = " ".join(words[-n:])
    return out


@lru_cache(maxsize=4096)
def stems_of(text: str, lang: str) -> frozenset[str]:
    return frozenset(lexical.content_terms(text, lang))


class Scorer:
    """Weighted coverage of a claim's content terms in a text. A term found in few of the
    retrieved sentences weighs more than one found in most ("medication" against "pain"
    when every sentence is about pain); a term found nowhere weighs as a rare one."""

    def __init__(self, claim: str, claim_lang: str, sentences: list[Sentence]) -> None:
        self.claim, self.claim_lang, self.sentences = claim, claim_lang, sentences
        self._by_lang: dict[str, tuple[list[str], list[float]]] = {}
        self._abbreviations = _abbreviations(tuple(s.text for s in sentences))

    def stems(self, text: str, lang: str) -> frozenset[str]:
        """The text's content stems, an abbreviation the source defines ("RCA") read as its words."""
        found = stems_of(text, lang)
        if self._abbreviations:
            for word in lexical.words(text):
                if word in self._abbreviations:
                    found = found | stems_of(self._abbreviations[word], lang)
        return found

    def terms(self, lang: str) -> list[str]:
        return self._weighted(lang)[0]

    def _weighted(self, lang: str) -> tuple[list[str], list[float]]:
        if lang not in self._by_lang:
            terms = _unique(lexical.content_terms(lexical.claim_core(self.claim), lang, exclude=lexical.SHARE_WORDS))
            stems = [self.stems(s.text, s.lang) for s in self.sentences]
            n = len(stems)
            compounds = self._compounds(lang)
            weights = []
            for t in terms:
                df = sum(lexical.term_match(t, found, compounds, lang) > 0 for found in stems)
                weights.append(1.0 + math.log((n + 1) / (max(df, 1) + 1)))
            self._by_lang[lang] = (terms, weights)
        return self._by_lang[lang]

    def _compounds(self, lang: str) -> bool:
        return "de" in (lang, self.claim_lang)

    def coverage(self, text: str, lang: str) -> float:
        terms, weights = self._weighted(lang)
        if not terms:
            return 0.0
        found = self.stems(text, lang)
        compounds = self._compounds(lang)
        # math.fsum, not sum: the sum is exact, so a coverage on a rule's threshold is read alike on
        # every Python (3.12's sum() rounds differently from 3.11's).
        return (math.fsum(w * lexical.term_match(t, found, compounds, lang) for t, w in zip(terms, weights))
                / math.fsum(weights))

    def absent_terms(self, lang: str) -> list[str]:
        """The claim's terms that no retrieved sentence states, not even in near words."""
        terms, _ = self._weighted(lang)
        stems = [self.stems(s.text, s.lang) for s in self.sentences]
        compounds = self._compounds(lang)
        return [t for t in terms if max((lexical.term_match(t, found, compounds, lang) for found in stems),
                                        default=0.0) < 0.5]

    def closest_clause(self, sentence: Sentence) -> str:
        """The clause of the sentence closest to the claim (the whole sentence when one)."""
        clauses = [c for c in CLAUSE_BREAK.split(sentence.text) if c and c.strip()]
        if len(clauses) < 2:
            return sentence.text
        return max(clauses, key=lambda c: self.coverage(c, sentence.lang))
