"""The offline judge's rule table on its held-out batches (tests/data/judge_cases_heldout*.jsonl): claims
against invented sources of other domains and styles than the tuning set, English and German,
each batch written and measured before any judge change made for it.

Measured before the changes made for them: batch 1 (77 cases) 64.8 % right among decided,
29.9 % uncertain, two contradicted directions `supported`; batch 2 (35 cases) 65.4 %, 25.7 %,
one contradicted figure `supported` — the honest estimate for text the judge has not seen.
Since then the judge was changed with both in view (today 93.2 % / 42.9 % and 84.2 % / 45.7 %),
so the floors below guard against regressions, they do not measure quality.

Batch 3 (86 cases, 14 sources of new domains) measured before any change for it: 65.9 % right
among decided, 52.3 % uncertain, three contradicted claims `supported` (a figure of the older
group given for the younger, "nahm … zu" for "verringerte sich", "teurer" for "günstiger").
Batches 4 and 5 (87 and 86 cases, 14 sources each, written by people who had read neither the
judge nor the other batches) measured before any change for them: batch 4 43.5 % / 28.7 % /
three contradictions `supported` on the judge before this round; batch 5 61.2 % / 43.0 % / two
on the judge after the batch-3/4 round (50.0 % / 27.9 % / four on the one before). All three
were then used to find general faults (tests/unit/test_offline_generalisation.py, each rule
tested on cases written anew); today batch 3 stands at 88.2 % / 60.5 %, batch 4 at 69.6 % /
47.1 %, batch 5 at 74.0 % / 41.9 %, no contradiction `supported` in any batch. The floors sit
just under today's figures; the honest estimate for unseen text is the "before" figures, and
the share of `uncertain` on paraphrased text is far above the issue's 30 %.

The round on general causes (number words as figures, light words, roots across word classes,
near-synonyms and antonyms, figures in other units and fraction words, comparisons read from
the groups' figures, a cause, scope or permanence the source does not state; each rule tested
on sentences written anew in tests/unit/test_offline_wording.py) moved batch 1 to 93.8 % /
37.7 %, batch 2 to 85.7 % / 40.0 %, batch 3 to 91.1 % / 47.7 %, batch 4 to 77.6 % / 33.3 %
and batch 5 to 82.3 % / 27.9 %, still no contradiction `supported`; the floors were raised to
just under these. The batches were looked at to find the causes, so these are no estimate
for unseen text either.

Batches 6 and 7 (90 cases each, nine new sources each, written blind by people who read
neither the judge nor the other batches). Batch 6 was measured on the judge before that
round: 67.4 % / 48.9 % / three contradictions `supported`; on the judge after it, before any
change for batch 6: 74.5 % / 43.3 % / the same three. Batch 7 was measured before any change
for it: 83.3 % / 40.0 % / two. Both were then used to find general faults (a weak overlap
with a denying clause or a denying rival sentence; a subject ranked at the other end; a
ranking read from figures; a related sentence agreeing in direction without the claim's
figure; the same ranking words for another group; tests/unit/test_offline_guards.py): batch 6
now 80.8 % / 42.2 % / none, batch 7 85.2 % / 40.0 % / one, the known miss below ("the soil
was drier under the panels" against "soil moisture was higher there", both sentences about
dry spells: the axis wetness is no word list's). A new contradiction `supported` still fails.

Batch 8 (90 cases, nine new sources, written blind on 2026-12-01 like 6 and 7) was never used to
change the judge: 60.8 % / 43.3 % / two contradictions `supported` on the judge at the start of
that session, 62.7 % / 43.3 % / the same two after its changes (made for the blind thesis sets).
Its two misses are listed so that a third still fails.

Batch 9 (90 cases, nine new sources, written blind on 2026-12-02 like 6–8) was measured once, on
the judge after that session's changes (made for the looked-at thesis sets), and never used to
change it: 72.9 % / 46.7 % / one contradiction `supported` — the same figures as on the judge at
that session's start (ac8b35d). It is the current honest estimate, with batch 8.
Batch 10 (67 cases, eight new sources, 35 German and 32 English claims, five of them on a source in
the other language) was written for issue 23 after the rule table and measured once: the raw table
81.0 % right among decided, 37.3 % uncertain, six contradictions `supported`; the calibrated judge
(rules measured on batches 8 and 9) 5 of 5 decided right, 92.5 % uncertain, none `supported`.
Since then batches 8–10 are the held-out cases the calibration is measured on
(tests/data/judge_split.json); the floors below are the raw table's, which decides as the judge
did before it became a table (issue 23).
"""

from __future__ import annotations

import pytest

from analysis.pipeline.judging.offline import OfflineJudge
from tests.judge_cases import HELDOUT, evaluate, load_cases

#: (decided right at least, uncertain at most) per batch, just below the figures when set.
FLOORS = {"judge_cases_heldout.jsonl": (0.92, 0.41), "judge_cases_heldout2.jsonl": (0.84, 0.41),
          "judge_cases_heldout3.jsonl": (0.89, 0.49), "judge_cases_heldout4.jsonl": (0.76, 0.35),
          "judge_cases_heldout5.jsonl": (0.80, 0.29), "judge_cases_heldout6.jsonl": (0.79, 0.43),
          "judge_cases_heldout7.jsonl": (0.83, 0.41), "judge_cases_heldout8.jsonl": (0.62, 0.44),
          "judge_cases_heldout9.jsonl": (0.72, 0.47), "judge_cases_heldout10.jsonl": (0.80, 0.38)}
#: Contradicted claims the raw rule table judges `supported`, per batch (since issue 23 a
#: contradicted negation counts as well as a number or direction: h2_en_battery_06,
#: h7-hausarzt-09, h8-museumvisit-09 and h9-inoculation-09 joined the list). The shipped judge
#: turns none of them into a `supported` (`test_the_calibrated_judge_supports_no_contradiction`).
KNOWN_MISSES = {"judge_cases_heldout2.jsonl": ["h2_en_battery_06"],
                "judge_cases_heldout7.jsonl": ["h7-breakfast-09", "h7-hausarzt-09", "h7-agripv-08"],
                "judge_cases_heldout8.jsonl": ["h8-museumvisit-09", "h8-esports-08", "h8-moorvernaessung-08"],
                "judge_cases_heldout9.jsonl": ["h9-inoculation-09", "h9-pruefungsangst-09"],
                "judge_cases_heldout10.jsonl": ["h10-coral-03", "h10-coral-06", "h10-hybridwork-08",
                                                "h10-schulgarten-02", "h10-waermepumpe-02", "h10-waermepumpe-06"]}


@pytest.fixture(scope="module", params=HELDOUT, ids=lambda p: p.name)
def batch(request) -> tuple[str, list, dict]:
    """The raw rule table (issue 23) on a batch: it decides as the judge did before it became a table."""
    cases = load_cases(request.param)
    return request.param.name, cases, evaluate(cases, OfflineJudge(calibration=None))


def test_each_batch_is_bilingual_and_mixed(batch) -> None:
    _, cases, _ = batch
    assert len(cases) >= 25
    assert {c.lang for c in cases} == {"en", "de"}
    assert {c.gold for c in cases} == {"supported", "partially_supported", "not_supported"}
    assert len({c.id for c in cases}) == len(cases)


def test_decided_verdicts_stay_above_the_floor(batch) -> None:
    name, _, figures = batch
    right, uncertain = FLOORS[name]
    assert figures["decided_right"] >= right, figures["confusion"]
    assert figures["uncertain"] <= uncertain, figures["confusion"]


def test_a_contradicted_number_or_direction_is_never_supported(batch) -> None:
    name, _, figures = batch
    assert figures["contradicted_supported"] == KNOWN_MISSES.get(name, []), name


@pytest.mark.parametrize("path", HELDOUT, ids=lambda p: p.name)
def test_the_calibrated_judge_supports_no_contradiction(path) -> None:
    # the shipped judge: only rules measured at 90 % or more on held-out cases decide
    assert evaluate(load_cases(path), OfflineJudge())["contradicted_supported"] == []
