"""The offline judge alone, on cases written by the team (never on eval/): the tuning set
tests/data/judge_cases.jsonl (claims against short invented sources, English and German,
each with the verdict a careful reader gives and tags: number, direction, negation,
paraphrase, overstated, hedge, extra, scope, unrelated, ...), the judge's own unit-test
corpus (tests/unit/test_offline_judge.py), and the time per judgement with cold caches.

    .venv/bin/python scripts/bench_offline_judge.py              # both, figures only
    .venv/bin/python scripts/bench_offline_judge.py --wrong      # also list the tuning cases judged wrong

For the tuning set it prints what scripts/eval_verdicts.py prints for a corpus: right among
the decided verdicts (not `uncertain`), the share of `uncertain`, the confusion matrix,
accuracy per confidence band, per language and per tag, and how many claims with a
contradicted number or direction were judged `supported` (must be 0). These are figures on
cases the judge's author wrote; the labelled evaluation corpus (scripts/eval_verdicts.py)
is the measure that counts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.pipeline import judges, lexical  # noqa: E402
from analysis.pipeline.judges import CONFIDENCE_BANDS, OfflineJudge, Verdict, confidence_band  # noqa: E402
from analysis.pipeline.retrieval import Hit  # noqa: E402

CASES = ROOT / "tests" / "data" / "judge_cases.jsonl"
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
    contradicted = [c for c, j in results if c.gold == "not_supported" and {"number", "direction"} & set(c.tags)
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


def _pct(x: float | None) -> str:
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def report(figures: dict, *, wrong: bool = False) -> None:
    print(f"tuning set ({CASES.relative_to(ROOT)}): {figures['n']} cases; decided right "
          f"{_pct(figures['decided_right'])}, uncertain {_pct(figures['uncertain'])}, contradicted number or "
          f"direction judged supported: {len(figures['contradicted_supported'])} {figures['contradicted_supported']}")
    print(f"  {'gold':<22}" + "".join(f"{v[:8]:>10}" for v in VERDICTS))
    for gold, row in figures["confusion"].items():
        print(f"  {gold:<22}" + "".join(f"{row[v]:>10}" for v in VERDICTS))
    for (name, low, high), counts in zip(CONFIDENCE_BANDS, figures["bands"].values()):
        total = counts["right"] + counts["wrong"]
        print(f"  band {name:<6} [{low}, {high}): {counts['right']}/{total} right")
    for name, g in figures["groups"].items():
        print(f"  {name:<18} n={g['n']:<4} decided right {_pct(g['decided_right'])}  uncertain {_pct(g['uncertain'])}")
    if wrong:
        for c, j in figures["wrong"]:
            print(f"\n[{c.id}] gold {c.gold}, judged {j.verdict.value} ({j.confidence:.2f}) {c.tags}\n  {c.claim}\n"
                  f"  {j.rationale}\n  evidence: {j.evidence}")


def unit_corpus() -> None:
    from tests.unit.test_offline_judge import ALL

    judge = OfflineJudge()
    bands: dict[str, Counter] = {name: Counter() for name, _, _ in CONFIDENCE_BANDS}
    verdicts: Counter = Counter()
    for claim, passages, expected in ALL:
        j = judge.judge(claim, passages)
        verdicts[j.verdict.value] += 1
        bands[confidence_band(j.confidence)]["right" if j.verdict is expected else "wrong"] += 1
    relevant = sum(e is not Verdict.uncertain for _, _, e in ALL)
    wrongly_uncertain = sum(judge.judge(c, p).verdict is Verdict.uncertain and e is not Verdict.uncertain
                            for c, p, e in ALL)
    print(f"unit-test corpus: {len(ALL)} cases; verdicts {dict(verdicts)}")
    print(f"  uncertain on {wrongly_uncertain} of {relevant} citations whose source decides them")
    for (name, low, high), counts in zip(CONFIDENCE_BANDS, bands.values()):
        total = counts["right"] + counts["wrong"]
        if total:
            print(f"  band {name} [{low}, {high}): {counts['right']}/{total} right")
    rounds, start = 10, time.perf_counter()
    for _ in range(rounds):
        judges._stems.cache_clear()
        lexical.stem.cache_clear()
        lexical.is_cue.cache_clear()
        lexical.similarity.cache_clear()
        for claim, passages, _ in ALL:
            judge.judge(claim, passages)
    per = (time.perf_counter() - start) / (rounds * len(ALL))
    print(f"  {per * 1000:.2f} ms per judgement (cold caches each round)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wrong", action="store_true", help="list the tuning cases judged wrong")
    args = parser.parse_args()
    report(evaluate(load_cases()), wrong=args.wrong)
    print()
    unit_corpus()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
