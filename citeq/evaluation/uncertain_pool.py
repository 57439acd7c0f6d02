"""How far lexical evidence can go on the claims the offline judge leaves `uncertain`.

    .venv/bin/python scripts/uncertain_pool.py                  # tuning set and held-out batches 1-7
    .venv/bin/python scripts/uncertain_pool.py --holdout tests/data/judge_cases_heldout8.jsonl

It judges every case of the case files (tests/judge_cases.py's format), keeps the ones judged
`uncertain` and describes each by the lexical features the judge reads (coverage of the claim's
key terms in the closest sentence, its window, the next sentence, anywhere in the source, exact
matches, how many terms, figures, directions, comparisons, denials, the rule that left it
undecided). Then it prints, for telling the planted `supported` from the rest:

- each feature's AUC alone (0.5 is chance, 1.0 a perfect separation);
- a logistic regression on all of them, leave-one-file-out over the case files (each file scored
  by a model fitted on the others), with how many of the pool's top-ranked 10, 20, 30 % are
  planted `supported` (deciding them so is what would bring `uncertain` down), and, with --holdout, fitted on all case files and scored on
  the held-out file only: what a learned combination of the same evidence could do on new text.

Only aggregate figures are printed, never a case, so a blind file stays blind. A judge rule that
decides this pool can be no better than these figures say.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

from analysis.pipeline.judging import lexical
from analysis.pipeline.judging.wording import COMPARISON as _COMPARISON
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Verdict
from analysis.pipeline.judging.scoring import Scorer as _Scorer, split_sentences as _sentences
from tests.judge_cases import CASES, HELDOUT, load_cases

FEATURES = ("coverage", "window", "next_sentence", "anywhere", "exact", "terms", "figures", "directions",
            "comparison", "claim_denies", "source_denies", "rule_absent", "rule_words")


def features(claim: str, passages: list, found) -> list[float]:
    """The lexical evidence on one claim the judge left `uncertain`."""
    sentences = _sentences(passages)
    lang = lexical.language(claim)
    scorer = _Scorer(claim, lang, sentences)
    covered = sorted(((scorer.coverage(s.text, s.lang), scorer.coverage(s.window, s.lang))
                      for s in sentences if scorer.terms(s.lang)), reverse=True) or [(0.0, 0.0)]
    terms = scorer.terms(lang)
    stems = [scorer.stems(s.text, s.lang) for s in sentences]
    exact = sum(any(lexical.term_match(t, found_stems, lang == "de", lang) >= 1.0 for found_stems in stems)
                for t in terms)
    n = max(1, len(terms))
    return [found.coverage, max(w for _, w in covered), covered[1][0] if len(covered) > 1 else 0.0,
            1 - len(scorer.absent_terms(lang)) / n, exact / n, float(len(terms)),
            float(any(not q.weak for q in lexical.quantities(claim, lang))), float(bool(lexical.directions(claim))),
            float(bool(_COMPARISON.search(claim))),
            float(lexical.negated(claim)), float(bool(found.sentence and lexical.negated(found.sentence.text))),
            float(found.cue == "absent"), float(found.cue == "words")]


def pool(path: Path, judge: OfflineJudge) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels (1 = planted supported) of the cases of `path` judged `uncertain`."""
    rows, labels = [], []
    for case in load_cases(path):
        found = judge.assessment(case.claim, case.passages)
        if found is None or found.verdict is not Verdict.uncertain:
            continue
        rows.append(features(case.claim, case.passages, found))
        labels.append(int(case.gold == "supported"))
    return np.array(rows, dtype=float).reshape(-1, len(FEATURES)), np.array(labels)


def auc(scores: np.ndarray, labels: np.ndarray) -> float | None:
    """The probability that a planted `supported` scores above one that is not (ties count half)."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    if not len(pos) or not len(neg):
        return None
    return float(((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])).mean())


def fit(x: np.ndarray, y: np.ndarray, *, l2: float = 1.0, steps: int = 3000):
    """An L2-regularised logistic regression by gradient descent on standardised features."""
    mean, std = x.mean(0), x.std(0) + 1e-9
    z = np.c_[np.ones(len(x)), (x - mean) / std]
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        w -= 0.5 * (z.T @ (p - y) / len(y) + l2 * np.r_[0.0, w[1:]] / len(y))
    return lambda x2: np.c_[np.ones(len(x2)), (x2 - mean) / std] @ w


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, nargs="*", default=[CASES, *HELDOUT[:7]],
                        help="case files to fit and cross-validate on (default: tuning set, batches 1-7)")
    parser.add_argument("--holdout", type=Path, help="a case file scored only by a model fitted on --cases")
    args = parser.parse_args(argv)
    judge = OfflineJudge(calibration=None)
    files = [pool(path, judge) for path in args.cases]
    x = np.vstack([f[0] for f in files])
    y = np.concatenate([f[1] for f in files])
    print(f"uncertain pool: {len(y)} cases of {len(args.cases)} files, {int(y.sum())} planted supported")
    for i, name in enumerate(FEATURES):
        value = auc(x[:, i], y)
        print(f"  {name:<15} AUC {'-' if value is None else f'{value:.3f}'}")
    scored, truth = [], []
    for i, (xi, yi) in enumerate(files):
        if not len(yi):
            continue
        rest = [f for j, f in enumerate(files) if j != i]
        model = fit(np.vstack([f[0] for f in rest]), np.concatenate([f[1] for f in rest]))
        scored.append(model(xi))
        truth.append(yi)
    scores, truth = np.concatenate(scored), np.concatenate(truth)
    print(f"logistic regression on all features, leave-one-file-out: AUC {auc(scores, truth):.3f}")
    order = np.argsort(-scores, kind="stable")
    for share in (0.1, 0.2, 0.3):
        top = order[:max(1, round(share * len(order)))]
        print(f"  deciding the {share:.0%} of the pool it ranks most likely supported as `supported`: "
              f"{truth[top].mean():.1%} right")
    if args.holdout:
        hx, hy = pool(args.holdout, judge)
        value = auc(fit(x, y)(hx), hy)
        print(f"fitted on all of them, on {args.holdout.name} ({len(hy)} uncertain, {int(hy.sum())} planted "
              f"supported): AUC {'-' if value is None else f'{value:.3f}'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
