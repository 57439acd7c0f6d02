"""Each offline rule's precision on held-out labelled cases, and what the judge does with it.

`calibration.json` beside this module is generated (scripts/judge_rules.py --write): for every rule
and guard, how often it decided on the held-out case files named in tests/data/judge_split.json and
how often it was right. A verdict's confidence is its rule's held-out precision; a rule measured
below `floor` there (or measured fewer than `min_fired` times, or below `floor` even on the tuning
cases it was written from) answers `uncertain` with its evidence instead of deciding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from analysis.pipeline.judging.assessment import Assessment
from analysis.pipeline.judging.verdicts import Verdict

PATH = Path(__file__).resolve().parent / "calibration.json"


@dataclass(frozen=True)
class Measured:
    """One rule on the held-out cases: decisions made, decisions right (and on the tuning cases)."""

    fired: int
    right: int
    tuning_fired: int = 0
    tuning_right: int = 0

    @property
    def precision(self) -> float:
        return self.right / self.fired if self.fired else 0.0

    @property
    def tuning_precision(self) -> float | None:
        return self.tuning_right / self.tuning_fired if self.tuning_fired else None


@dataclass(frozen=True)
class Calibration:
    """The held-out precision of each rule, and the floor below which a rule does not decide."""

    floor: float
    #: fewest held-out decisions a rule needs before its precision is trusted
    min_fired: int
    rules: dict[str, Measured] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path = PATH) -> Calibration:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(floor=data["floor"], min_fired=data["min_fired"],
                   rules={name: Measured(m["fired"], m["right"], m.get("tuning_fired", 0), m.get("tuning_right", 0))
                          for name, m in data["rules"].items()})

    def trusted(self, name: str | None) -> Measured | None:
        """The rule's measurement when it may decide: measured often enough on held-out cases, at or
        above the floor there, and not below the floor on the cases it was written from either (a
        rule wrong that often on its own cases was lucky on a few held-out ones)."""
        measured = self.rules.get(name or "")
        if measured is None or measured.fired < self.min_fired or measured.precision < self.floor:
            return None
        tuning = measured.tuning_precision
        if tuning is not None and tuning < self.floor:
            return None
        return measured

    def apply(self, a: Assessment) -> Assessment:
        """`a` with its rule's held-out precision as confidence, or `uncertain` when the rule is not trusted."""
        if a.verdict is Verdict.uncertain:
            return a.model_copy(update={"confidence": 0.0})
        name = a.decided_by
        measured = self.trusted(name)
        if measured is not None:
            return a.model_copy(update={"confidence": round(measured.precision, 3)})
        known = self.rules.get(name or "")
        record = (f"right in {known.right} of {known.fired} held-out cases" if known and known.fired
                  else "not measured on held-out cases")
        if known and known.fired >= self.min_fired and known.precision >= self.floor:
            record += f" but {known.tuning_right} of {known.tuning_fired} of the cases it was written from"
        return a.model_copy(update={
            "verdict": Verdict.uncertain, "confidence": 0.0,
            "reason": f"{a.reason} — this would read as {a.verdict.value.replace('_', ' ')}, but the rule "
                      f"({name}) is {record}, below the {self.floor:.0%} it needs to decide; check the source"})
