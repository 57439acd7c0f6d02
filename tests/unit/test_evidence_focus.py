"""The evidence sentence on the hits (no database): where it goes, and what the offline judge
shows when it cannot decide."""

from __future__ import annotations

from analysis.pipeline.documents.pdftext import Page
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.verdicts import Verdict
from analysis.pipeline.retrieval.chunking import split_page_sentences
from analysis.pipeline.retrieval.evidence import Focus, with_focus
from analysis.pipeline.retrieval.index import Hit

FOCUS = Focus(text="Medication adherence, assessed by pill counts, did not differ between the groups.", page=2,
              similarity=0.87)


def hit(pid: int, page: int = 1, text: str = "Patients were recruited from general practices.") -> Hit:
    return Hit(passage_id=pid, source_id="7", page=page, text=text, score=1.0 / pid)


def test_the_passage_holding_the_focus_replaces_the_last_hit_and_the_focus_goes_on_the_first():
    holding = hit(9, page=2, text=FOCUS.text)

    hits = with_focus([hit(1), hit(2), hit(3)], FOCUS, holding, k=3)

    assert [h.passage_id for h in hits] == [1, 2, 9]
    assert (hits[0].focus, hits[0].focus_page, hits[0].focus_similarity) == (FOCUS.text, 2, 0.87)
    assert hits[1].focus is None and hits[2].focus is None


def test_a_passage_already_among_the_hits_is_not_added_twice_and_fewer_than_k_grow_by_one():
    assert [h.passage_id for h in with_focus([hit(1), hit(9)], FOCUS, hit(9), k=3)] == [1, 9]
    assert [h.passage_id for h in with_focus([hit(1)], FOCUS, hit(9), k=3)] == [1, 9]
    assert with_focus([], FOCUS, hit(9), k=3)[0].focus == FOCUS.text
    assert with_focus([], FOCUS, None, k=3) == []


def test_sentences_keep_their_page_and_leave_out_headings():
    pages = [Page(number=1, text="Results\n\nThe groups did not differ in adherence at all. Short one."),
             Page(number=2, text="Eleven patients withdrew from the trial before the final visit.")]

    found = split_page_sentences(pages)

    assert [(s.ordinal, s.page, s.text) for s in found] == [
        (0, 1, "The groups did not differ in adherence at all."),
        (1, 2, "Eleven patients withdrew from the trial before the final visit.")]


def test_an_uncertain_offline_verdict_shows_the_focus_sentence_and_its_page():
    claim = "Wer selbst misst, fühlt sich im Umgang mit der eigenen Erkrankung sicherer."
    focus = Focus(text="Patients in the self-monitoring group reported greater confidence in managing their "
                       "condition.", page=2, similarity=0.86)
    passages = [hit(1, text="Patients were recruited from 41 general practices in three regions."),
                hit(9, page=2, text="After twelve months the groups were compared. " + focus.text)]
    plain = OfflineJudge().judge(claim, passages)
    assert plain.verdict is Verdict.uncertain  # the lexical judge cannot read this German against English

    focused = OfflineJudge().judge(claim, with_focus(passages, focus, None, k=3))

    assert focused.verdict is Verdict.uncertain
    assert (focused.evidence, focused.evidence_page) == (focus.text, 2)
    assert (focused.confidence, focused.rationale) == (plain.confidence, plain.rationale)


def test_a_decided_offline_verdict_keeps_the_judges_own_evidence():
    claim = "Die Therapietreue bei der Medikamenteneinnahme unterschied sich zwischen den Gruppen nicht."
    passages = [hit(1, text="Patients were recruited from 41 general practices in three regions."),
                hit(9, page=2, text="After twelve months the groups were compared. " + FOCUS.text)]
    # The raw rule table (no calibration) decides this one; the shipped judge may leave it uncertain.
    plain = OfflineJudge(calibration=None).judge(claim, passages)
    assert plain.verdict is not Verdict.uncertain  # decided (through the judge's bilingual word list)
    focus = Focus(text="Eleven patients withdrew from the trial before the final visit.", page=3, similarity=0.5)

    assert OfflineJudge(calibration=None).judge(claim, with_focus(passages, focus, None, k=3)) == plain


def test_a_passage_vector_is_the_mean_of_its_sentences_and_a_passage_without_one_is_embedded():
    from analysis.pipeline.retrieval.chunking import Passage
    from analysis.pipeline.retrieval.evidence import pooled_passage_vectors

    sentences = [Passage(ordinal=0, page=1, text="Alpha beta gamma delta epsilon."),
                 Passage(ordinal=1, page=1, text="Zeta eta theta iota kappa."),
                 Passage(ordinal=2, page=2, text="Alpha beta gamma delta epsilon.")]
    vectors = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    passages = [Passage(ordinal=0, page=1, text="Alpha beta gamma delta epsilon.  Zeta eta theta iota kappa."),
                Passage(ordinal=1, page=2, text="Alpha beta gamma delta epsilon."),
                Passage(ordinal=2, page=2, text="words of a very long sentence cut into a window")]
    embedded = []

    pooled = pooled_passage_vectors(passages, sentences, vectors,
                                    lambda texts: embedded.extend(texts) or [[0.6, 0.8, 0.0]] * len(texts))

    half = 2 ** -0.5
    assert [[round(x, 6) for x in v] for v in pooled] == [[round(half, 6), round(half, 6), 0.0], [0.0, 0.0, 1.0],
                                                          [0.6, 0.8, 0.0]]
    assert embedded == ["words of a very long sentence cut into a window"]  # only the passage without a sentence
