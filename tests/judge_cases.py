"""The offline judge's tuning set: tests/data/judge_cases.jsonl, read and scored.

Claims against short invented sources (English and German), written for the judge and never
taken from eval/: each with the verdict a careful reader gives and tags (number, direction,
negation, paraphrase, overstated, hedge, extra, scope, share, unrelated, unstated, derived).
In the file, a line with "source" and "passages" defines a source (its passages in retrieval
order); every other line is a case naming its source. `evaluate` counts as
scripts/eval_verdicts.py does: right among the decided verdicts (not `uncertain`), the share
of `uncertain`, and the claims with a contradicted number, direction or negation judged `supported`.
Used by tests/unit/test_judge_cases.py (floors) and scripts/bench_offline_judge.py (figures).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from analysis.pipeline.judging.verdicts import CONFIDENCE_BANDS, Verdict, confidence_band
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.retrieval.index import Hit

CASES = Path(__file__).resolve().parent / "data" / "judge_cases.jsonl"
#: Held-out batches in the same format, each written and measured before any judge change made
#: for it (the figures then are in the commits that added them and in the README).
HELDOUT = [Path(__file__).resolve().parent / "data" / name
           for name in ("judge_cases_heldout.jsonl", "judge_cases_heldout2.jsonl",
                        "judge_cases_heldout3.jsonl", "judge_cases_heldout4.jsonl",
                        "judge_cases_heldout5.jsonl", "judge_cases_heldout6.jsonl",
                        "judge_cases_heldout7.jsonl", "judge_cases_heldout8.jsonl",
                        "judge_cases_heldout9.jsonl", "judge_cases_heldout10.jsonl")]
VERDICTS = ["supported", "partially_supported", "not_supported", "uncertain"]


@dataclass
class Case:
    id: str
    lang: str
    claim: str
    passages: list[Hit]
    gold: str
    tags: list[str]


def load_cases(path: Path = CASES) -> list[Case]:
    """The tuning set: lines with "source" and "passages" define a source (its passages in
    retrieval order), the others are cases naming their source."""
    sources: dict[str, list[Hit]] = {}
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if "passages" in row:
            sources[row["source"]] = [Hit(passage_id=i, source_id=row["source"], page=i + 1, text=t, score=1.0)
                                      for i, t in enumerate(row["passages"])]
        else:
            cases.append(Case(row["id"], row["lang"], row["claim"], sources[row["source"]], row["gold"],
                              row.get("tags", [])))
    return cases


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def evaluate(cases: list[Case], judge: OfflineJudge | None = None) -> dict:
    """Figures of the offline judge on cases, as scripts/eval_verdicts.py counts them."""
    judge = judge or OfflineJudge()
    results = [(c, judge.judge(c.claim, c.passages)) for c in cases]
    decided = [(c, j) for c, j in results if j.verdict is not Verdict.uncertain]
    confusion = {g: Counter() for g in VERDICTS[:3]}
    for c, j in results:
        confusion[c.gold][j.verdict.value] += 1
    bands = {name: Counter() for name, _, _ in CONFIDENCE_BANDS}
    for c, j in decided:
        bands[confidence_band(j.confidence)]["right" if j.verdict.value == c.gold else "wrong"] += 1
    groups: dict[str, list] = defaultdict(list)
    for c, j in results:
        groups[f"lang {c.lang}"].append((c, j))
        for tag in c.tags:
            groups[f"tag {tag}"].append((c, j))
    per_group = {}
    for name, rows in sorted(groups.items()):
        dec = [(c, j) for c, j in rows if j.verdict is not Verdict.uncertain]
        per_group[name] = {"n": len(rows), "decided_right": _ratio(sum(j.verdict.value == c.gold for c, j in dec), len(dec)),
                           "uncertain": _ratio(len(rows) - len(dec), len(rows))}
    contradicted = [c for c, j in results if c.gold == "not_supported" and {"number", "direction", "negation"} & set(c.tags)
                    and j.verdict is Verdict.supported]
    return {
        "n": len(results),
        "decided_right": _ratio(sum(j.verdict.value == c.gold for c, j in decided), len(decided)),
        "uncertain": _ratio(len(results) - len(decided), len(results)),
        "confusion": confusion,
        "bands": bands,
        "groups": per_group,
        "contradicted_supported": [c.id for c in contradicted],
        "wrong": [(c, j) for c, j in results if j.verdict.value != c.gold],
    }
