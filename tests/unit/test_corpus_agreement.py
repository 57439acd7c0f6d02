"""End to end over the sample corpus, without a database: extract → match → retrieve → judge.

The planted citations and their right verdicts are in sample_data/expected.json.
The offline judge's rule table must get the clear cases right (explicit support, explicit
contradiction, missing source) and most of the rest; the shipped judge, which decides only by
rules measured at 90 % or more on held-out cases, must decide no clear case wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.pipeline.retrieval.chunking import split_passages
from analysis.pipeline.citations import Citation, SourceInfo, extract_citations, match_sources
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Verdict, source_missing_judgement
from analysis.pipeline.documents.readers import extract_pages
from analysis.pipeline.retrieval.index import PassageIndex

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
MIN_AGREEMENT = 0.75


@pytest.fixture(scope="module")
def expected() -> dict[str, list[dict]]:
    data = json.loads((SAMPLES / "expected.json").read_text(encoding="utf-8"))
    return {name: cases for name, cases in data.items() if not name.startswith("_")}


@pytest.fixture(scope="module")
def corpus(expected):
    """(source infos, passage index) for every uploaded source named in the ground truth."""
    names = sorted({case["source"] for cases in expected.values() for case in cases if case["source"]})
    infos, records = [], []
    for name in names:
        pages = extract_pages((SAMPLES / name).read_bytes(), name)
        infos.append(SourceInfo(id=name, filename=name, text=pages[0].text))
        records += [(f"{name}#{p.ordinal}", name, p.page, p.text) for p in split_passages(pages)]
    return infos, PassageIndex(records)


def _run(thesis: str, corpus, judge: OfflineJudge | None = None) -> list[tuple[Citation, str | None, Verdict]]:
    infos, index = corpus
    citations = extract_citations(extract_pages((SAMPLES / thesis).read_bytes(), thesis))
    matched = match_sources(citations, infos)
    judge = judge or OfflineJudge(calibration=None)
    results = []
    for citation in citations:
        source = matched[citation.ordinal]
        if source is None:
            judgement = source_missing_judgement(citation.marker)
        else:
            judgement = judge.judge(citation.claim, index.search(citation.claim, source_id=source))
        results.append((citation, source, judgement.verdict))
    return results


def _pair(cases: list[dict], results) -> list[tuple[dict, tuple]]:
    """Each planted case with the one extracted citation it describes."""
    pairs = []
    for case in cases:
        found = [r for r in results if r[0].marker == case["marker"] and case["claim"] in r[0].claim]
        assert len(found) == 1, f"expected exactly one citation for {case['marker']!r}: {case['claim']!r}"
        pairs.append((case, found[0]))
    return pairs


def test_every_citation_is_planted_and_found_with_its_source(expected, corpus):
    for thesis, cases in expected.items():
        results = _run(thesis, corpus)
        # Then extraction finds the planted citations and nothing else
        assert len(results) == len(cases), thesis
        for case, (citation, source, _) in _pair(cases, results):
            assert source == case["source"], f"{thesis} {citation.marker}: matched {source}"


def test_offline_judge_agrees_with_the_planted_verdicts(expected, corpus):
    agree, total, clear_misses = 0, 0, []
    for thesis, cases in expected.items():
        for case, (citation, _, verdict) in _pair(cases, _run(thesis, corpus)):
            total += 1
            agree += verdict.value == case["expected"]
            if case["clear"] and verdict.value != case["expected"]:
                clear_misses.append(f"{thesis} {citation.marker} {citation.claim!r}: {verdict.value}")
            print(f"{'OK  ' if verdict.value == case['expected'] else 'MISS'} {case['expected']:<20} "
                  f"got {verdict.value:<20} {citation.marker:<28} {citation.claim[:60]}")
    ratio = agree / total
    print(f"offline judge agreement on the planted set: {agree}/{total} = {ratio:.2f}")
    assert clear_misses == []
    assert ratio >= MIN_AGREEMENT


def test_the_calibrated_judge_decides_no_clear_case_wrong(expected, corpus):
    wrong = []
    for thesis, cases in expected.items():
        for case, (citation, _, verdict) in _pair(cases, _run(thesis, corpus, OfflineJudge())):
            if case["clear"] and verdict is not Verdict.uncertain and verdict.value != case["expected"]:
                wrong.append(f"{thesis} {citation.marker}: {verdict.value}, planted {case['expected']}")
    assert wrong == []
