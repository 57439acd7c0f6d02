"""Markers to references, and references to uploaded sources (`resolve_sources`); ambiguity is
never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from analysis.pipeline.citations.markers import Marker
from analysis.pipeline.citations.matching import PreparedSource, match_reference
from analysis.pipeline.citations.models import Citation, Reference, SourceInfo, SourceMatch
from analysis.pipeline.citations.names import content_words, name_key
from analysis.pipeline.citations.references import acronym_of

def resolve_sources(citations: Iterable[Citation], sources: Sequence[SourceInfo]) -> dict[int, SourceMatch]:
    """Each citation's ordinal → its source, the method that found it, or why none was.

    Tried in order: the reference's DOI in a source's text or metadata; the first author's
    surname and the year on the source's first pages (several such sources: the one whose
    text holds the reference's title clearly best); the source's metadata; the title's
    words alone. Two sources that fit equally leave the citation unresolved, with the reason.
    """
    prepared = [PreparedSource(s) for s in sources]
    cache: dict[str, SourceMatch] = {}
    result: dict[int, SourceMatch] = {}
    for citation in citations:
        ref = citation.reference
        if ref is None:
            result[citation.ordinal] = SourceMatch(reason=citation.unresolved_reason or "no reference entry")
            continue
        if ref.key not in cache:
            cache[ref.key] = match_reference(ref, prepared)
        result[citation.ordinal] = cache[ref.key]
    return result


def match_sources(citations: Iterable[Citation], sources: Sequence[SourceInfo]) -> dict[int, str | None]:
    """Map each citation's ordinal to the id of the uploaded source it cites, or None."""
    return {o: m.source_id for o, m in resolve_sources(citations, sources).items()}


def resolve(marker: Marker, references: list[Reference]) -> tuple[Reference | None, str | None]:
    label = _marker_label(marker)
    if marker.kind == "ibid" and marker.reference is not None:  # the work the citation before resolved to
        return marker.reference, None
    if marker.authors and marker.year is None and marker.short_title is not None:
        return _resolve_short_title(marker, references, label)
    if marker.number is not None:
        ref = next((r for r in references if r.number == marker.number), None)
        return ref, None if ref else f"no reference entry for '{label}'"
    if not marker.authors or marker.year is None:
        return None, "ebd./ibid. without a citation before it" if marker.kind == "ibid" else\
            f"no reference entry for '{label}'"
    candidates = [r for r in references if _names_fit(marker.authors[0], r) and _same_year(marker.year, r.year)]
    words = marker.authors[0].split()
    for i in range(1, len(words)):  # a word before the name: "Anders Hartung 2015", "Ähnlich Brandt 2009"
        if candidates:
            break
        candidates = [r for r in references
                      if _names_fit(" ".join(words[i:]), r) and _same_year(marker.year, r.year)]
    if not candidates:
        if marker.reference is not None:  # the footnote wrote the whole reference
            return marker.reference, None
        return None, f"no reference entry for '{label}'"
    scores = [(_fit(marker, r), r) for r in candidates]
    best = max(s for s, _ in scores)
    top = [r for s, r in scores if s == best]
    if len(top) > 1:
        return None, f"ambiguous: {len(top)} reference entries match '{label}'"
    return top[0], None


def _resolve_short_title(marker: Marker, references: list[Reference],
                         label: str) -> tuple[Reference | None, str | None]:
    """The one entry of the author whose title holds the short title's words (each word
    may be shortened: "Mieterschutz Weimar"); without a short title (a. a. O.) the
    author's only entry."""
    same = [r for r in references if _names_fit(marker.authors[0], r)]
    words = content_words(marker.short_title or "")
    if words:
        same = [r for r in same if r.title and all(
            any(t.startswith(w) for t in content_words(r.title)) for w in words)]
    if len(same) == 1:
        return same[0], None
    if len(same) > 1:
        return None, f"ambiguous: {len(same)} reference entries match '{label}'"
    return None, f"no reference entry for '{label}'"


def _marker_label(marker: Marker) -> str:
    if marker.number is not None:
        return f"[{marker.number}]"
    if not marker.authors:
        return marker.text
    names = marker.authors[0] + (" et al." if marker.et_al or len(marker.authors) > 2 else
                                 f" & {marker.authors[1]}" if len(marker.authors) == 2 else "")
    if marker.year is None and marker.short_title is not None:
        return f"{names}, {marker.short_title}" if marker.short_title else names
    return f"{names} {marker.year}"


def _names_fit(cited: str, ref: Reference) -> bool:
    """The cited first author is the entry's: the same surname, or a corporate author by
    its name or abbreviation ("WHO" for "World Health Organization (WHO)")."""
    if not ref.authors:
        return False
    cited_key, listed = name_key(cited), name_key(ref.authors[0])
    if _same_name(cited_key, listed):
        return True
    listed_forms = {name_key(a) for a in ref.aliases}
    cited_acronym = acronym_of(cited)
    if cited_acronym:
        return name_key(cited_acronym) in listed_forms | {listed}
    return cited_key in listed_forms


def _same_name(cited: str, listed: str) -> bool:
    return cited == listed or cited.startswith(listed + " ") or listed.startswith(cited + " ")


def _fit(marker: Marker, ref: Reference) -> int:
    """How well a same-first-author, same-year entry fits the marker's shape."""
    score = 4 * (ref.year == marker.year)
    others = {name_key(a) for a in ref.authors[1:]}
    score += 2 * sum(name_key(a) in others for a in marker.authors[1:])
    # APA: "et al." stands for three or more authors; no "et al." lists them all.
    if marker.et_al:
        score += len(ref.authors) >= 3
    else:
        score += len(ref.authors) == len(marker.authors)
    return score


def _same_year(cited: str, listed: str | None) -> bool:
    if listed is None:
        return False
    if cited == listed:
        return True
    # "2019" against "2019a" (or back) is the same work when the letter was dropped.
    return cited[:4] == listed[:4] and cited[:2].isdigit() and (len(cited) == 4 or len(listed) == 4)
