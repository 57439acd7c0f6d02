"""The offline judge alone, on cases written by the team (never on eval/): the tuning set
tests/data/judge_cases.jsonl (claims against short invented sources, English and German,
each with the verdict a careful reader gives and tags: number, direction, negation,
paraphrase, overstated, hedge, extra, scope, unrelated, ...), the judge's own unit-test
corpus (tests/unit/test_offline_judge.py), and the time per judgement with cold caches. It reads
the raw rule table (every rule decides, confidence 0.5); --calibrated reads the shipped judge.
Per-rule figures and the calibration: scripts/judge_rules.py.

    .venv/bin/python scripts/bench_offline_judge.py              # both, figures only
    .venv/bin/python scripts/bench_offline_judge.py --wrong      # also list the tuning cases judged wrong
    .venv/bin/python scripts/bench_offline_judge.py --cases tests/data/judge_cases_heldout.jsonl --wrong
                                                                 # another case file (a held-out batch)

For the tuning set it prints what scripts/eval_verdicts.py prints for a corpus: right among
the decided verdicts (not `uncertain`), the share of `uncertain`, the confusion matrix,
accuracy per confidence band, per language and per tag, and how many claims with a
contradicted number or direction were judged `supported` (must be 0). These are figures on
cases the judge's author wrote; the labelled evaluation corpus (scripts/eval_verdicts.py)
is the measure that counts.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.pipeline.judging import scoring  # noqa: E402
from analysis.pipeline.judging import lexical
from analysis.pipeline.judging.verdicts import CONFIDENCE_BANDS, Verdict, confidence_band  # noqa: E402
from analysis.pipeline.judging.offline import OfflineJudge
from tests.judge_cases import CASES, VERDICTS, evaluate, load_cases  # noqa: E402

def _pct(x: float | None) -> str:
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def report(figures: dict, *, wrong: bool = False, path: Path = CASES) -> None:
    print(f"{'tuning set' if path == CASES else 'cases'} ({path.resolve().relative_to(ROOT)}): {figures['n']} cases; decided right "
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


def unit_corpus(judge: OfflineJudge) -> None:
    from tests.unit.test_offline_judge import ALL

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
        scoring.stems_of.cache_clear()
        lexical.stem.cache_clear()
        lexical.is_cue.cache_clear()
        lexical.similarity.cache_clear()
        for cached in ("root", "_quantities", "_shares", "_ngrams"):  # caches added later, cleared as well
            if hasattr(lexical, cached):
                getattr(lexical, cached).cache_clear()
        for claim, passages, _ in ALL:
            judge.judge(claim, passages)
    per = (time.perf_counter() - start) / (rounds * len(ALL))
    print(f"  {per * 1000:.2f} ms per judgement (cold caches each round)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wrong", action="store_true", help="list the tuning cases judged wrong")
    parser.add_argument("--cases", type=Path, default=None,
                        help="judge this case file (e.g. a held-out batch) instead; skips the unit-test corpus")
    parser.add_argument("--calibrated", action="store_true",
                        help="the shipped judge (rules below 90 %% held-out precision answer uncertain) instead "
                             "of the raw rule table")
    args = parser.parse_args()
    judge = OfflineJudge() if args.calibrated else OfflineJudge(calibration=None)
    if args.cases is not None:
        report(evaluate(load_cases(args.cases), judge), wrong=args.wrong, path=args.cases)
        return 0
    report(evaluate(load_cases(), judge), wrong=args.wrong)
    print()
    unit_corpus(judge)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
