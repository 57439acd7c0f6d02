"""The offline judge's working records: a passage sentence with its terms and figures, and the
assessment a verdict is built from.
"""

from __future__ import annotations

from pydantic import BaseModel
from analysis.pipeline.retrieval.index import Hit

from analysis.pipeline.judging.verdicts import Verdict

class Sentence(BaseModel):
    """A verbatim sentence of a retrieved passage, with its neighbours' text for context."""

    text: str
    window: str
    hit: Hit
    rank: int
    lang: str
    #: the sentence with the one before it, and with the one after it, verbatim (None at an edge)
    pairs: tuple[str | None, str | None] = (None, None)


class Assessment(BaseModel):
    verdict: Verdict
    confidence: float
    reason: str
    #: how decisive the cue was: "figure", "direction", "negation", "absolute", "overlap", "weak";
    #: an `uncertain` for shared words alone, with no cue either way, is "words" (or "absent")
    cue: str
    coverage: float
    sentence: Sentence | None
    #: the evidence when it is more than the sentence (two adjacent sentences), verbatim
    evidence: str | None = None
    #: the rule of `analysis.pipeline.judging.rules` that decided, and the guards that changed it
    rule: str | None = None
    guards: tuple[str, ...] = ()
    #: a claim judged in parts: (part, the sentence covering it best, its coverage), in claim order
    parts: tuple[tuple[str, Sentence | None, float], ...] = ()

    @property
    def decided_by(self) -> str | None:
        """The name whose held-out precision this verdict carries: the last guard that changed it, else its rule."""
        return self.guards[-1] if self.guards else self.rule
