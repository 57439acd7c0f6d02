"""The offline judge alone: accuracy per confidence band on the judge's own test corpus
(tests/unit/test_offline_judge.py, written by the team, English and German) and time per
judgement with cold caches.

    .venv/bin/python scripts/bench_offline_judge.py

These are figures on cases the judge's author wrote; the labelled evaluation corpus
(scripts/eval_verdicts.py) is the measure that counts.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.pipeline import judges, lexical  # noqa: E402
from analysis.pipeline.judges import CONFIDENCE_BANDS, OfflineJudge, Verdict, confidence_band  # noqa: E402
from tests.unit.test_offline_judge import ALL  # noqa: E402


def main() -> int:
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
    print(f"{len(ALL)} cases; verdicts {dict(verdicts)}")
    print(f"uncertain on {wrongly_uncertain} of {relevant} citations whose source decides them")
    for (name, low, high), counts in zip(CONFIDENCE_BANDS, bands.values()):
        total = counts["right"] + counts["wrong"]
        if total:
            print(f"band {name} [{low}, {high}): {counts['right']}/{total} right")
    rounds, start = 10, time.perf_counter()
    for _ in range(rounds):
        judges._stems.cache_clear()
        lexical.stem.cache_clear()
        lexical.is_cue.cache_clear()
        lexical.similarity.cache_clear()
        for claim, passages, _ in ALL:
            judge.judge(claim, passages)
    per = (time.perf_counter() - start) / (rounds * len(ALL))
    print(f"{per * 1000:.2f} ms per judgement (cold caches each round)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
