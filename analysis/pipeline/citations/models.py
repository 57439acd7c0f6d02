"""What citation extraction yields: `Reference`, `Citation`, `SourceInfo`, `SourceMatch`, and DOIs.
"""

from __future__ import annotations


from pydantic import BaseModel, Field
from analysis.inputs import DOI_PATTERN

from analysis.pipeline.citations.patterns import DOI_IN_TEXT

class Reference(BaseModel):
    """One entry of the thesis's reference list, fields pulled out best-effort."""

    key: str  #: "[3]" for numeric entries, "smith2020" for author–year ones
    number: int | None = None
    authors: list[str] = Field(default_factory=list)  #: surnames, in order
    #: other names of a corporate first author: "WHO" for "World Health Organization"
    aliases: list[str] = Field(default_factory=list)
    year: str | None = None  #: with its letter suffix, "2019a"; "n.d." when undated
    title: str | None = None
    doi: str | None = None
    raw: str

    @property
    def first_author(self) -> str | None:
        """The first author's surname, if one was found."""
        return self.authors[0] if self.authors else None

    @property
    def label(self) -> str:
        """How a reader names it: "[3]" or "Smith 2020"."""
        if self.number is not None:
            return f"[{self.number}]"
        names = self.first_author
        if names and len(self.authors) > 2:
            names += " et al."
        elif names and len(self.authors) == 2:
            names += f" & {self.authors[1]}"
        return " ".join(filter(None, [names, self.year])) or self.raw[:40]


class Citation(BaseModel):
    """One citation of one reference, in one sentence of the thesis."""

    ordinal: int = Field(ge=0)  #: position among all citations, in reading order
    claim: str  #: the clause the citation supports, every citation marker removed
    sentence: str  #: the sentence as written (footnote marks removed)
    marker: str  #: the literal text of this citation: "Smith et al., 2020", "[4]", "ebd., S. 5"
    #: parenthetical | narrative | numeric | footnote | ibid
    kind: str = "parenthetical"
    locator: str | None = None  #: "p. 12", "S. 4–5"
    page: int | None = None
    cited_authors: list[str] = Field(default_factory=list)
    cited_year: str | None = None
    cited_number: int | None = None
    reference: Reference | None = None
    #: why `reference` is None: no entry, or several entries fit equally
    unresolved_reason: str | None = None


class SourceInfo(BaseModel):
    """What is known about an uploaded source when matching it to references."""

    id: str
    filename: str
    text: str  #: the text of its first page(s)
    #: optional doi, title, author, created_year (PDF metadata stored at parse time)
    metadata: dict[str, str] = Field(default_factory=dict)


class SourceMatch(BaseModel):
    """How a citation was tied to an uploaded source, or why it was not."""

    source_id: str | None = None
    method: str | None = None  #: doi | author_year | title | metadata
    reason: str | None = None  #: why nothing matched (None when matched)


def is_valid_doi(s: str) -> bool:
    """True if `s` has the shape of a DOI (``10.<registrant>/<suffix>``)."""
    return bool(DOI_PATTERN.match(s.strip()))


def normalize_doi(s: str) -> str | None:
    """The bare, lower-case DOI in `s` ("https://doi.org/10.1/X." → "10.1/x"), or None."""
    found = find_doi(s)
    return found.lower() if found else None


def find_doi(text: str) -> str | None:
    """The first DOI written in ``text`` (bare, ``doi:`` or a doi.org link), trailing punctuation off."""
    match = DOI_IN_TEXT.search(text)
    return match.group(0).rstrip(".,;)]>") if match else None
