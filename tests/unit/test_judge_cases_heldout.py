"""The offline judge on its held-out batches (tests/data/judge_cases_heldout*.jsonl): claims
against invented sources of other domains and styles than the tuning set, English and German,
each batch written and measured before any judge change made for it.

Measured before the changes made for them: batch 1 (77 cases) 64.8 % right among decided,
29.9 % uncertain, two contradicted directions `supported`; batch 2 (35 cases) 65.4 %, 25.7 %,
one contradicted figure `supported` — the honest estimate for text the judge has not seen.
Since then the judge was changed with both in view, so the floors below (just under today's
84.9 % / 31.2 % and 73.1 % / 25.7 %) guard against regressions, they do not measure quality.

Batch 3, measured before any change for it (86 cases, 14 sources of new domains, 36 German and
50 English; gold 34 supported / 22 partially / 30 not): 65.9 % right among decided (27 of 41),
52.3 % uncertain; German 66.7 % / 58.3 %, English 65.4 % / 48.0 %; three claims with a
contradicted number or direction judged `supported` (a figure of the older group given for the
younger, "rose" for "fell", "teurer" for "günstiger"). Its floor is just under those figures, and
those three are listed as known misses so that any new one still fails the test.
"""

from __future__ import annotations

import pytest

from tests.judge_cases import HELDOUT, evaluate, load_cases

#: (decided right at least, uncertain at most) per batch, just below the figures when set.
FLOORS = {"judge_cases_heldout.jsonl": (0.82, 0.33), "judge_cases_heldout2.jsonl": (0.70, 0.29),
          "judge_cases_heldout3.jsonl": (0.65, 0.53)}
#: Contradicted claims judged `supported` when the batch was measured, before any change for it;
#: a fix removes its id here, a new one fails the test.
KNOWN_CONTRADICTED_SUPPORTED = {"judge_cases_heldout3.jsonl": {"h3_en_dialect_n1", "h3_de_zwischenfrucht_n1",
                                                               "h3_de_fluoridlack_n2"}}


@pytest.fixture(scope="module", params=HELDOUT, ids=lambda p: p.name)
def batch(request) -> tuple[str, list, dict]:
    cases = load_cases(request.param)
    return request.param.name, cases, evaluate(cases)


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
    assert set(figures["contradicted_supported"]) <= KNOWN_CONTRADICTED_SUPPORTED.get(name, set())
