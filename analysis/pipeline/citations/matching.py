"""Whether a reference is an uploaded source: DOI, author and year on the first pages, title,
the source's own metadata.
"""

from __future__ import annotations


import re

from analysis.pipeline.citations.models import Reference, SourceInfo, SourceMatch
from analysis.pipeline.citations.names import content_words, name_key, squash
from analysis.pipeline.citations.patterns import DOI_IN_TEXT, ET_AL, NAME

#: Where a source's own title stands: its first lines (a title of two lines, a subtitle,
#: a byline or a journal line before it), within its first characters, before its prose.
_TITLE_PAGE_TOP, _TITLE_LINES, _TITLE_LINE_WORDS = 1000, 4, 20


class PreparedSource:
    """A source's first pages and metadata, normalised once for all references."""

    def __init__(self, source: SourceInfo) -> None:
        self.id = source.id
        self.head = source.text[:8000]
        # Names and years inside citations ("(Okafor, 2021)", "Abel (2020) showed") are
        # works the source cites, never its own byline.
        # Its first line is its own even when it reads like a citation: "Nicola Harrow (2022)
        # Keeping the music going ..." is a byline.
        first, _, rest = self.head.lstrip().partition("\n")
        self.own = squash(first + " " + _without_citations(rest))
        self.names = name_key(self.own)
        self.dois = {d.rstrip(".,;)]>").lower() for d in DOI_IN_TEXT.findall(source.text)}
        if source.metadata.get("doi"):
            self.dois.add(source.metadata["doi"].lower())
        self.title = source.metadata.get("title", "")
        self.words = set(content_words(self.head + " " + self.title))
        #: The words of its title page's top and of its /Title: where a title names a work.
        top = []
        for line in source.text[:_TITLE_PAGE_TOP].splitlines():
            if len(top) == _TITLE_LINES or (len(line.split()) > _TITLE_LINE_WORDS
                                             and re.search(r"\w\w[.!?](?:\s+[A-ZÄÖÜ]|\s*$)", line)):
                break  # the first line of running prose (long, with a full stop) ends the title page's top
            if line.strip():
                top.append(line)
        self.top_words = set(content_words(" ".join(top) + " " + self.title))
        self.author = name_key(source.metadata.get("author", ""))
        self.created_year = source.metadata.get("created_year")
        self.filename_key = name_key(source.filename)


def match_reference(ref: Reference, sources: list[PreparedSource]) -> SourceMatch:
    label = ref.label
    sources = _distinct(sources)
    if ref.doi:
        hits = [s for s in sources if ref.doi.lower() in s.dois]
        if len(hits) == 1:
            return SourceMatch(source_id=hits[0].id, method="doi")
        if len(hits) > 1:
            return _ambiguous(hits, label)
    if ref.year and not ref.year[:4].isdigit():  # n.d., in press: the author and the title
        named = [s for s in sources if _author_on_page(ref, s.names, s.own) or _metadata_names(ref, s)]
        best, tied = _best_by_title(ref, named, minimum=0.5)
        if best is not None:
            return SourceMatch(source_id=best.id, method="title")
        if len(tied) > 1:
            return _ambiguous(tied, label)
    by_author = [s for s in sources if _author_year_on_page(ref, s)]
    if len(by_author) == 1:
        return SourceMatch(source_id=by_author[0].id, method="author_year")
    if len(by_author) > 1:
        best, tied = _best_by_title(ref, by_author, minimum=0.5)
        if best is not None:
            return SourceMatch(source_id=best.id, method="title")
        # A source that only mentions the author further down (citing the work itself)
        # gives way to the one whose byline, near the top, names the author.
        byline = [s for s in (tied or by_author) if _author_year_on_page(ref, s, within=_BYLINE)]
        if len(byline) == 1:
            return SourceMatch(source_id=byline[0].id, method="author_year")
        return _ambiguous(tied or by_author, label)
    by_metadata = [s for s in sources if _metadata_fits(ref, s)]
    if len(by_metadata) == 1:
        return SourceMatch(source_id=by_metadata[0].id, method="metadata")
    # By the title alone it must stand at the top of the source (its title line) or in its
    # metadata: a source on the same topic holds a title's words somewhere on its first pages.
    # And a source whose metadata names another author is another work of the same title words.
    candidates = [s for s in sources if not s.author or not ref.first_author or _metadata_names(ref, s)]
    best, tied = _best_by_title(ref, candidates, minimum=0.8, top=True)
    if best is not None:
        return SourceMatch(source_id=best.id, method="title")
    if len(tied) > 1:
        return _ambiguous(tied, label)
    if len(by_metadata) > 1:
        return _ambiguous(by_metadata, label)
    return SourceMatch(reason=f"reference found but no uploaded source matches '{label}'")


def _distinct(sources: list[PreparedSource]) -> list[PreparedSource]:
    """One of each set of identical uploads (same text): copies are no ambiguity."""
    seen: set[tuple] = set()
    out = []
    for source in sources:
        # Scans with the same (empty) text layer but their own metadata are different works.
        identity = (source.head, source.author, source.title, tuple(sorted(source.dois)))
        if identity not in seen:
            seen.add(identity)
            out.append(source)
    return out


def _ambiguous(sources: list[PreparedSource], label: str) -> SourceMatch:
    return SourceMatch(reason=f"ambiguous: {len(sources)} sources match '{label}'")


def _best_by_title(ref: Reference, sources: list[PreparedSource], *, minimum: float,
                   top: bool = False) -> tuple[PreparedSource | None, list[PreparedSource]]:
    """The one source whose text (with top: the top of its first page) holds the title
    clearly best, else (None, the tied ones)."""
    scored = sorted(((_title_score(ref, s, top=top), s) for s in sources), key=lambda pair: -pair[0])
    if not scored or scored[0][0] < minimum:
        return None, []
    top = [s for score, s in scored if score >= scored[0][0] - 0.05]
    return (top[0], top) if len(top) == 1 else (None, top)


_BYLINE = 600  # characters of a first page that hold title, authors and venue


def _author_year_on_page(ref: Reference, source: PreparedSource, within: int | None = None) -> bool:
    if not ref.first_author or not ref.year or not ref.year[:4].isdigit():
        return False
    name = re.escape(name_key(ref.first_author))
    year = ref.year[:4]
    names, own = (source.names, source.own) if within is None else (source.names[:within], source.own[:within])
    on_page = _author_on_page(ref, names, own) and re.search(rf"\b{year}\b", own)
    if within is not None:
        return bool(on_page)
    in_filename = re.search(name, source.filename_key) and year in source.filename_key
    return bool(on_page or in_filename)


def _author_on_page(ref: Reference, names: str, own: str) -> bool:
    """The first author's surname (or a corporate author's name, or its abbreviation
    written in capitals) on the page, outside citations."""
    name = r"\s+".join(re.escape(w) for w in name_key(ref.first_author or "").split())
    if name and re.search(rf"\b{name}\b", names):
        return True
    return any(re.search(rf"\b{re.escape(alias)}\b", own) for alias in ref.aliases)


_CITATION_IN_SOURCE = re.compile(
    rf"\([^()]{{0,200}}?[A-ZÄÖÜ][\w'’-]+[^()]{{0,40}}?,?\s+(?:19|20)\d{{2}}[a-z]?\b[^()]{{0,200}}\)"
    rf"|{NAME}{ET_AL}?(?:\s+(?:and|&|und)\s+{NAME})?['’]?s?\s+\((?:19|20)\d{{2}}[a-z]?[^()]{{0,20}}\)")


def _without_citations(text: str) -> str:
    return _CITATION_IN_SOURCE.sub(" ", text)


def _metadata_names(ref: Reference, source: PreparedSource) -> bool:
    return bool(ref.first_author and source.author
                and re.search(rf"\b{re.escape(name_key(ref.first_author))}\b", source.author))


def _metadata_fits(ref: Reference, source: PreparedSource) -> bool:
    """The source's own /Author names the first author, and its /Title or year agrees."""
    if not ref.first_author or not source.author:
        return False
    if not re.search(rf"\b{re.escape(name_key(ref.first_author))}\b", source.author):
        return False
    if source.title and ref.title:
        words = content_words(ref.title)
        title_words = set(content_words(source.title))
        if words and sum(w in title_words for w in words) / len(words) >= 0.6:
            return True
    return bool(ref.year and source.created_year and ref.year[:4] == source.created_year)


def _title_score(ref: Reference, source: PreparedSource, *, top: bool = False) -> float:
    words = _title_words(ref)
    if len(words) < 3:
        return 0.0
    found = source.top_words if top else source.words
    return sum(w in found for w in words) / len(words)


def _title_words(ref: Reference) -> list[str]:
    """The title's content words; a title of one or two ("Mikrodepots planen. Ein Leitfaden
    für Kommunen.") takes its subtitle's, the sentence after it in the entry."""
    # APA's descriptions in brackets ("[Working paper]", "[Doctoral dissertation]") are no title.
    words = content_words(re.sub(r"\[[^\]]{0,60}\]", " ", ref.title or ""))
    if ref.title and len(words) < 3:
        after = ref.raw.split(ref.title, 1)[-1]
        subtitle = re.match(r"\s*[.:?!]\s*([^.]{3,200})\.", after)
        if subtitle:
            words += content_words(subtitle.group(1))
    return words
