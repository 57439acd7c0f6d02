"""The sentence for each part of a claim judged in parts (issue 28): stored with the verdict by
the real pipeline and shown by the evidence view; rows stored before keep working."""

from __future__ import annotations

import json

from analysis.settings import PipelineSettings
from analysis.pipeline import analyze as pipeline
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import EvidencePart
from analysis.queue import userqueue
from analysis.surface import evidence
from tests.integration.conftest import query, queue_broker  # noqa: F401
from tests.integration.test_pipeline import parsed_session, start_analysis

THESIS = "thesis_retrieval_practice.pdf"


class _Halves:
    """The offline judge's verdict with the claim read as two parts, its halves, the first with the
    quoted sentence (which claims the real judge splits is tests/unit/test_judge_parts.py's)."""

    def __init__(self) -> None:
        self.offline = OfflineJudge()

    def judge(self, claim, passages):
        j = self.offline.judge(claim, passages)
        words = claim.split()
        half = len(words) // 2
        return j.model_copy(update={"parts": [
            EvidencePart(part=" ".join(words[:half]), sentence=j.evidence, page=j.evidence_page, coverage=0.8),
            EvidencePart(part=" ".join(words[half:]))]})


def judged(queue_broker, conn, judge=None) -> int:  # noqa: F811
    _, docs = parsed_session(queue_broker, conn, 1)
    job_id = start_analysis(conn, queue_broker, 1, docs[THESIS], [docs[n] for n in docs if not n.startswith("thesis")])
    for (ordinal,) in query(conn, "SELECT ordinal FROM job_citations WHERE job_id = %s AND verdict IS NULL "
                                  "ORDER BY ordinal", job_id):
        pipeline.judge_citation(job_id, ordinal, settle=userqueue.settle, broker=queue_broker, judge=judge,
                                settings=PipelineSettings())
    return job_id


def test_the_pipeline_stores_a_sentence_per_part_and_the_evidence_view_shows_and_marks_them(queue_broker, conn):  # noqa: F811
    job_id = judged(queue_broker, conn, judge=_Halves())
    rows = query(conn, "SELECT ordinal, claim, evidence, evidence_page, evidence_parts FROM job_citations "
                       "WHERE job_id = %s AND source_document_id IS NOT NULL AND evidence IS NOT NULL "
                       "ORDER BY ordinal", job_id)
    assert rows
    for ordinal, claim, quote, page, parts in rows:
        assert parts == [{"part": " ".join(claim.split()[:len(claim.split()) // 2]), "sentence": quote, "page": page,
                          "coverage": 0.8},
                         {"part": " ".join(claim.split()[len(claim.split()) // 2:]), "sentence": None, "page": None,
                          "coverage": 0.0}]
    assert query(conn, "SELECT count(*) FROM job_citations WHERE job_id = %s AND source_document_id IS NULL "
                       "AND evidence_parts IS NOT NULL", job_id)[0][0] == 0  # a missing source: no parts

    ordinal, claim, quote, page, parts = rows[0]
    view = evidence.view(queue_broker, job_id, ordinal + 1, user_id=1)
    assert [p.part for p in view.parts] == [p["part"] for p in parts]
    assert [p.marked for p in view.parts] == [view.source is not None and view.source.page == page, False]

    # a verdict stored before parts were kept: the view reads as it did
    query(conn, "UPDATE job_citations SET evidence_parts = NULL WHERE job_id = %s AND ordinal = %s", job_id, ordinal)
    assert evidence.view(queue_broker, job_id, ordinal + 1, user_id=1).parts == []


def test_a_part_on_the_page_shown_is_marked_there_beside_the_quote(queue_broker, conn):  # noqa: F811
    job_id = judged(queue_broker, conn)
    ordinal, quote, page = query(conn, "SELECT ordinal, evidence, evidence_page FROM job_citations WHERE job_id = %s "
                                       "AND evidence IS NOT NULL AND evidence_page IS NOT NULL ORDER BY ordinal LIMIT 1",
                                 job_id)[0]
    before = evidence.view(queue_broker, job_id, ordinal + 1, user_id=1).source
    other = next(b.text for b in before.blocks if not b.marks and len(b.text) > 40)
    parts = [{"part": "the first part", "sentence": quote, "page": page, "coverage": 0.9},
             {"part": "the second part", "sentence": other, "page": page, "coverage": 0.5},
             {"part": "a third part", "sentence": None, "page": None, "coverage": 0.0}]
    query(conn, "UPDATE job_citations SET evidence_parts = %s::jsonb WHERE job_id = %s AND ordinal = %s",
          json.dumps(parts), job_id, ordinal)
    view = evidence.view(queue_broker, job_id, ordinal + 1, user_id=1)
    assert [p.marked for p in view.parts] == [True, True, False]
    # the quote is marked once, as before; the second part's sentences are marked beside it
    assert sum(len(b.marks) for b in view.source.blocks) == \
        sum(len(b.marks) for b in before.blocks) + len(evidence.sentences(other))
    assert all(set(a.marks) <= set(b.marks) for a, b in zip(before.blocks, view.source.blocks))
