"""What a report of one analysis is: the model every rendering of it reads.

The facts of the job, the thesis, its sources and each citation with its verdict, and the
words people read for them (verdict labels, how a source was found, what a verdict means
for the lecturer). :mod:`analysis.surface.report` fills it from the database and renders it
as JSON, CSV and plain text; :mod:`analysis.surface.report_html` renders the printable page.
"""

from __future__ import annotations

from datetime import datetime, timezone

from pydantic import BaseModel, Field, computed_field, field_serializer

from analysis.pipeline.judging.lexical.words import language
from analysis.pipeline.judging.verdicts import Verdict

#: How each verdict reads to a person, in the order counts and filters show them.
VERDICT_LABELS = {
    Verdict.not_supported.value: "not supported",
    Verdict.partially_supported.value: "partially supported",
    Verdict.uncertain.value: "uncertain",
    Verdict.source_missing.value: "source missing",
    Verdict.supported.value: "supported",
}
#: A citation extracted but not judged yet (its job is still running).
PENDING = "pending"
#: The languages a claim and its evidence are told apart in (``lexical.language``).
LANGUAGE_NAMES = {"de": "German", "en": "English"}
#: Shown where the database holds no value yet (judge, match method of an older job).
NONE = "—"
#: What a finished report of a thesis without citations says in place of its table.
NO_CITATIONS = "the thesis has no citations citeq recognises: nothing to judge"

#: How a citation's source was found, in words.
MATCHED_BY = {"doi": "its DOI", "author_year": "author and year", "title": "its title",
              "metadata": "the source's metadata"}


def judge_words(judge: str | None) -> str:
    """Who checked the citations, in words ("offline" is the built-in rules)."""
    if not judge:
        return NONE
    if judge == "offline":
        return "built-in rules (no network)"
    if judge.startswith("openai:"):
        return "language model " + judge.split(":", 1)[1]
    return judge


def retrieval_words(mode: str | None) -> str:
    """How passages of the sources were found, in words."""
    if not mode:
        return NONE
    for name, words in (("bm25", "keyword search"), ("hybrid", "keyword and meaning search")):
        if mode.startswith(name):
            return words + mode[len(name):]
    return mode


def finding(c: "ReportCitation") -> str:
    """What was found, in one plain sentence; for ``uncertain``, what to check."""
    source = c.source_filename or "the cited source"
    where = f" on p. {c.evidence_page} of {source}" if c.evidence_page is not None else f" in {source}"
    v = c.verdict.value if c.verdict is not None else PENDING
    if v == "supported":
        return "The source says what the claim says" + (f": see the passage{where}." if c.evidence else ".")
    if v == "partially_supported":
        return f"The source backs part of the claim, not all of it: check which part the passage{where} leaves out."
    if v == "not_supported":
        return "The source says something different from the claim" + (
            f": compare the passage{where}." if c.evidence else ".")
    if v == "uncertain":
        if c.evidence:
            return (f"The wording alone does not settle it: read the passage{where} and decide whether it "
                    "says what the claim says.")
        return f"No passage close enough to the claim was found: look in {source} for where it makes this point."
    if v == "source_missing":
        if c.source_document_id is not None:
            return "The cited source could not be read, so nothing was checked."
        return "The cited work is not among the uploaded sources, so nothing was checked" + (
            f" ({c.unresolved_reason})." if c.unresolved_reason else ".")
    return "Not checked yet: the analysis is still running."


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


class ThesisFacts(BaseModel):
    """The analysed thesis."""

    document_id: int
    filename: str
    pages: int | None


class ResolvedReference(BaseModel):
    """A reference-list entry of the thesis that was resolved to a source, and how."""

    reference: str | None  #: the entry as written in the thesis
    match_method: str | None  #: doi, author_year, title or metadata; None on jobs older than the column


class SourceFacts(BaseModel):
    """One source the job was admitted with, and the references resolved to it."""

    document_id: int
    filename: str
    doi: str | None = None
    pages: int | None = None
    references: list[ResolvedReference] = Field(default_factory=list)


class ReportCitation(BaseModel):
    """One claim–citation pair of the thesis with its verdict (None while not judged yet)."""

    ordinal: int  #: position among the thesis's citations, from 0, in reading order
    marker: str  #: the citation as written: "Smith et al., 2020", "[4]"
    claim: str
    page: int | None  #: page of the thesis
    source_document_id: int | None  #: the cited source; None when the citation is unresolved
    source_filename: str | None
    reference: str | None  #: the thesis's reference-list entry the marker points to, if found
    match_method: str | None  #: how the source was found (doi, author_year, title, metadata)
    unresolved_reason: str | None  #: why no source was found
    verdict: Verdict | None
    confidence: float | None
    evidence: str | None  #: the quoted passage of the source
    evidence_page: int | None  #: its page in the source
    rationale: str | None  #: the judge's reasoning
    carried_from_id: int | None  #: the base job's citation a delta re-check copied this verdict from
    judged_at: datetime | None
    rule: str | None = None  #: the offline judge's rule that decided (and the guards that changed it)

    @computed_field
    @property
    def number(self) -> int:
        """The citation's number as people count (1, 2, ...)."""
        return self.ordinal + 1

    @computed_field
    @property
    def cross_language(self) -> str | None:
        """"German claim, English source" when the evidence shown is in another language than the
        claim (found across languages by the embedder: read both); None when they agree."""
        if not self.evidence or not self.claim:
            return None
        claim, source = language(self.claim), language(self.evidence)
        return None if claim == source else f"{LANGUAGE_NAMES[claim]} claim, {LANGUAGE_NAMES[source]} source"

    @computed_field
    @property
    def carried_over(self) -> bool:
        """Whether a delta re-check copied this verdict from its base job instead of judging it."""
        return self.carried_from_id is not None

    @computed_field
    @property
    def found_by(self) -> str | None:
        """How the source was found, in words (None when it was not)."""
        if self.source_document_id is None:
            return None
        return MATCHED_BY.get(self.match_method or "", "its reference")

    @computed_field
    @property
    def finding(self) -> str:
        """What was found, in one plain sentence."""
        return finding(self)

    @property
    def verdict_key(self) -> str:
        return self.verdict.value if self.verdict is not None else PENDING

    @field_serializer("judged_at")
    def _utc(self, value: datetime | None) -> str | None:
        return _iso(value)


class JobFacts(BaseModel):
    """The job behind the report."""

    id: int
    status: str
    delta_of: int | None  #: the base job of a delta re-check
    judge: str | None  #: "offline", "openai:<model>"; None until the citations are extracted
    retrieval_mode: str | None  #: bm25, hybrid, "hybrid (k of n sources embedded)"
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None

    @computed_field
    @property
    def checked_by(self) -> str:
        """Who checked the citations, in words."""
        return judge_words(self.judge)

    @computed_field
    @property
    def passages_by(self) -> str:
        """How passages were found, in words."""
        return retrieval_words(self.retrieval_mode)

    @computed_field
    @property
    def duration_seconds(self) -> float | None:
        """From start to finish; None until the job finished."""
        if self.started_at is None or self.finished_at is None:
            return None
        return round((self.finished_at - self.started_at).total_seconds(), 3)

    @field_serializer("created_at", "started_at", "finished_at")
    def _utc(self, value: datetime | None) -> str | None:
        return _iso(value)


class Report(BaseModel):
    """Everything a lecturer reads about one analysis."""

    job: JobFacts
    thesis: ThesisFacts
    sources: list[SourceFacts]
    #: Citations per verdict, and ``pending`` for those not judged yet; every verdict is present.
    counts: dict[str, int]
    total: int  #: citations found in the thesis (0 until they are extracted)
    judged: int
    citations: list[ReportCitation]
    generated_at: datetime
    #: Citation numbers per verdict that needs a look, when ``citations`` does not hold them all
    #: (a streamed report's head); None: read them from ``citations``.
    attention: dict[str, list[int]] | None = Field(default=None, exclude=True)

    @field_serializer("generated_at")
    def _utc(self, value: datetime) -> str:
        return _iso(value)


def label(verdict_key: str) -> str:
    """A verdict (or ``pending``) as people read it."""
    return VERDICT_LABELS.get(verdict_key, verdict_key.replace("_", " "))
