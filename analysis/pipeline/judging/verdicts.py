"""The verdict model every judge answers in: `Verdict`, `Judgement`, the `Judge` protocol, and the
confidence bands both judges share.

"Source missing" is decided before judging (no uploaded source matches the citation);
`source_missing_judgement` builds that answer so every verdict has one shape.
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import Protocol
from pydantic import BaseModel, Field
from analysis.pipeline.retrieval.index import Hit

logger = logging.getLogger(__name__)


class Verdict(str, Enum):
    """How well the cited source backs the claim."""

    #: the source states the claim
    supported = "supported"
    #: the source states part of the claim, or states it with less certainty
    partially_supported = "partially_supported"
    #: the source does not state the claim, or contradicts it
    not_supported = "not_supported"
    #: the evidence does not decide it: a reader should look at the best passage
    uncertain = "uncertain"
    #: no uploaded source matches the citation
    source_missing = "source_missing"


class EvidencePart(BaseModel):
    """One part of a claim the judge split into parts, with the sentence of the source that
    covers it best (None when no sentence shares its words)."""

    part: str
    sentence: str | None = None
    page: int | None = None
    #: share of the part's key terms the sentence states
    coverage: float = Field(default=0.0, ge=0.0, le=1.0)


class Judgement(BaseModel):
    """A verdict with its evidence: the passage (and page) it rests on."""

    verdict: Verdict
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: str | None = None
    evidence_page: int | None = None
    rationale: str
    #: provider tokens this judgement cost (usage.total_tokens over its attempts); 0 offline
    tokens: int = Field(default=0, ge=0)
    #: the offline rule that decided, and the guards that changed its verdict ("overlap_sentence >
    #: guard_directions"); None for a judge without rules (a model judge)
    rule: str | None = None
    #: a claim judged in two or more parts: each part with its best sentence; empty otherwise
    parts: list[EvidencePart] = []


class Judge(Protocol):
    """Anything that turns a claim and its candidate passages into a judgement."""

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Judge `claim` against `passages` (best first)."""
        ...


def source_missing_judgement(marker: str) -> Judgement:
    """The judgement for a citation whose source was not uploaded."""
    return Judgement(
        verdict=Verdict.source_missing,
        confidence=1.0,
        rationale=f"No uploaded source matches the citation {marker}.",
    )


def no_passages() -> Judgement:
    return Judgement(
        verdict=Verdict.uncertain,
        confidence=0.1,
        rationale="The cited source has no passage to compare the claim with.",
    )


#: Confidence bands, (name, lower bound inclusive, upper bound exclusive; the last includes 1).
#: Offline verdicts are calibrated to them: `uncertain` is always "low"; a verdict resting on
#: a figure, or a matching direction, is "high"; an opposite direction, a negation, an
#: overstatement or a clear word overlap "medium"; a weak overlap, a claim the source does not
#: state, or clauses judged apart "low". The evaluation reports accuracy per band.
CONFIDENCE_BANDS: tuple[tuple[str, float, float], ...] = (("low", 0.0, 0.5), ("medium", 0.5, 0.75),
                                                          ("high", 0.75, 1.0))


def confidence_band(confidence: float) -> str:
    """The name of the band a confidence falls in (see `CONFIDENCE_BANDS`)."""
    for name, low, high in CONFIDENCE_BANDS:
        if low <= confidence < high:
            return name
    return CONFIDENCE_BANDS[-1][0]
