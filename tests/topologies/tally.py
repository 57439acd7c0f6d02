"""The topology suite's tally, one line per topology, printed at the end of the run (as the
fault suite prints its own): faults injected, jobs, messages, lost, run twice to completion,
charged twice."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Line:
    faults: int = 0
    jobs: int = 0
    messages: int = 0
    lost: int = 0
    run_twice: int = 0
    charged_twice: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, *, faults: int = 0, jobs: int = 0, messages: int = 0, lost: int = 0, run_twice: int = 0,
            charged_twice: int = 0, note: str | None = None) -> None:
        self.faults += faults
        self.jobs += jobs
        self.messages += messages
        self.lost += lost
        self.run_twice += run_twice
        self.charged_twice += charged_twice
        if note:
            self.notes.append(note)


#: {topology: its line}, in the order the tests first reported.
TALLY: dict[str, Line] = {}


def record(topology: str, **counts) -> None:
    """Add counts to ``topology``'s line (call it before asserting, so a failure is counted)."""
    TALLY.setdefault(topology, Line()).add(**counts)


def lines() -> list[str]:
    return [f"topology {name}: faults injected {t.faults}, jobs {t.jobs}, messages {t.messages}, lost {t.lost}, "
            f"run twice to completion {t.run_twice}, charged twice {t.charged_twice}"
            + (f" ({'; '.join(t.notes)})" if t.notes else "")
            for name, t in TALLY.items()]
