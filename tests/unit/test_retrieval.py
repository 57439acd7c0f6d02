"""BM25 passage search over the sample sources, and reciprocal-rank fusion."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.pipeline.retrieval.chunking import split_passages
from analysis.pipeline.documents.readers import extract_pages
from analysis.pipeline.retrieval.index import DEFAULT_K, Hit, PassageIndex, PassageRecord, fuse_ranks, tokenize

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
SOURCES = [
    "castillo_2018_green_roofs.pdf",
    "hartmann_2020_feedback.pdf",
    "mueller_2021_spaced_homework.txt",
    "nakamura_heat_notes.txt",
    "okafor_lindqvist_2019.pdf",
]


@pytest.fixture(scope="module")
def index() -> PassageIndex:
    records = []
    for name in SOURCES:
        pages = extract_pages((SAMPLES / name).read_bytes(), name)
        for passage in split_passages(pages):
            records.append((f"{name}#{passage.ordinal}", name, passage.page, passage.text))
    return PassageIndex(records)


def test_tokenizer_lowercases_keeps_unicode_words_and_drops_stopwords():
    assert tokenize("Die Schüler und the Students of Müller's study, 2019!") == [
        "schüler", "students", "müller", "study", "2019",
    ]


def test_search_finds_the_passage_that_states_the_claim(index):
    # When searching for a claim about green roofs across all sources
    hits = index.search("green roofs lowered midday roof surface temperatures compared with bitumen")
    # Then the best hit is from the green-roof source and holds the statement
    assert hits[0].source_id == "castillo_2018_green_roofs.pdf"
    assert "bitumen" in hits[0].text
    assert len(hits) <= DEFAULT_K
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_search_can_be_restricted_to_one_source(index):
    # Given a query whose words appear in several sources
    query = "students final test scores"
    # When restricted to one source
    hits = index.search(query, source_id="hartmann_2020_feedback.pdf", k=10)
    # Then only that source's passages come back
    assert hits
    assert {h.source_id for h in hits} == {"hartmann_2020_feedback.pdf"}
    unrestricted = {h.source_id for h in index.search(query, k=10)}
    assert len(unrestricted) > 1


def test_k_bounds_the_hits_and_unrelated_queries_find_nothing(index):
    assert len(index.search("students", k=1)) == 1
    assert index.search("zeppelin quasar xylophone") == []
    assert index.search("the and of") == []  # only stopwords
    assert index.search("students", k=0) == []


def test_empty_index_answers_with_no_hits():
    empty = PassageIndex([])
    assert len(empty) == 0
    assert empty.search("anything") == []


def test_index_accepts_records_and_keeps_ids_pages_and_text():
    index = PassageIndex([
        PassageRecord(passage_id=7, source_id="s", page=3, text="Spaced homework improves retention."),
        PassageRecord(passage_id=8, source_id="s", page=4, text="Unrelated text about rooftops."),
    ])
    [hit] = index.search("spaced homework")
    assert (hit.passage_id, hit.source_id, hit.page) == (7, "s", 3)
    assert hit.score > 0


def _hit(pid: str, score: float = 1.0) -> Hit:
    return Hit(passage_id=pid, source_id="s", page=1, text=pid, score=score)


def test_rank_fusion_rewards_agreement_between_lists():
    # Given BM25 ranks a, b, c and vector search ranks c, a, d
    fused = fuse_ranks([_hit("a"), _hit("b"), _hit("c")], [_hit("c"), _hit("a"), _hit("d")], k=60)
    # Then items both lists found come first, with the exact RRF scores
    assert [h.passage_id for h in fused] == ["a", "c", "b", "d"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1].score == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2].score == pytest.approx(1 / 62)
    assert fused[3].score == pytest.approx(1 / 63)


def test_rank_fusion_ignores_raw_scores_and_breaks_ties_by_first_seen():
    fused = fuse_ranks([_hit("x", 999.0)], [_hit("y", 0.001)], k=1)
    assert [h.passage_id for h in fused] == ["x", "y"]
    assert fused[0].score == fused[1].score == pytest.approx(0.5)
    assert fuse_ranks([], []) == []


def test_the_opening_passages_of_a_source_in_document_order() -> None:
    # What retrieval falls back to when a claim shares no word with its source (a German claim
    # citing an English paper): the source's first passages, never another source's.
    index = PassageIndex([PassageRecord(passage_id=i, source_id="a" if i % 2 else "b", page=i + 1, text=f"text {i}")
                          for i in range(6)])
    assert index.search("Wärmepumpen im Altbau", source_id="a") == []
    opening = index.opening("a", k=2)
    assert [h.passage_id for h in opening] == [1, 3]
    assert all(h.source_id == "a" and h.score == 0.0 for h in opening)
    assert index.opening("missing") == []
