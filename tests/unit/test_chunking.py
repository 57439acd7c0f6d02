"""Passages and sentences: page-bound, boundary-aware, overlapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.pipeline.retrieval.chunking import sentence_spans, split_passages, split_sentences
from analysis.pipeline.documents.pdftext import Page
from analysis.pipeline.documents.readers import extract_pages

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


def _sentences(n: int, words: int = 10, page_tag: str = "w") -> str:
    return " ".join(" ".join(f"{page_tag}{i}x{j}" for j in range(words)) + "." for i in range(n))


def test_passages_never_cross_a_page_boundary():
    # Given the pages of a real multi-page thesis
    pages = extract_pages((SAMPLES / "thesis_retrieval_practice.pdf").read_bytes(), "t.pdf")
    # When cut into passages
    passages = split_passages(pages, target_words=60, overlap=10)
    # Then each passage's text lies entirely within the page it names
    squashed = {p.number: " ".join(p.text.split()) for p in pages}
    assert {p.page for p in passages} == {p.number for p in pages if p.text.strip()}
    for passage in passages:
        assert passage.text in squashed[passage.page]


def test_ordinals_count_from_zero_across_pages():
    pages = [Page(number=1, text=_sentences(30, page_tag="a")), Page(number=2, text=_sentences(30, page_tag="b"))]
    passages = split_passages(pages, target_words=100, overlap=20)
    assert [p.ordinal for p in passages] == list(range(len(passages)))
    assert all(("a0x0" in p.text) <= (p.page == 1) for p in passages)
    assert passages[-1].page == 2


def test_passages_respect_the_target_and_cut_at_sentence_ends():
    # Given 30 sentences of 10 words on one page
    page = Page(number=1, text=_sentences(30))
    # When cut with a 100-word target
    passages = split_passages([page], target_words=100, overlap=20)
    # Then no passage exceeds the target and every passage ends a sentence
    assert len(passages) > 3
    for passage in passages:
        assert len(passage.text.split()) <= 100
        assert passage.text.endswith(".")


def test_neighbouring_passages_overlap_by_whole_sentences():
    passages = split_passages([Page(number=1, text=_sentences(30))], target_words=100, overlap=20)
    for first, second in zip(passages, passages[1:], strict=False):
        last_two = " ".join(first.text.split()[-20:])
        assert second.text.startswith(last_two)


def test_a_sentence_longer_than_the_target_becomes_overlapping_windows():
    # Given one 250-word "sentence" without punctuation (a table dump, say)
    words = [f"t{i}" for i in range(250)]
    passages = split_passages([Page(number=1, text=" ".join(words))], target_words=100, overlap=20)
    # Then windows of 100 words step by 80 and cover every word
    assert [p.text.split()[0] for p in passages] == ["t0", "t80", "t160"]
    assert all(len(p.text.split()) <= 100 for p in passages)
    assert passages[-1].text.split()[-1] == "t249"


def test_paragraph_break_ends_a_long_enough_passage():
    first = _sentences(7, page_tag="p")  # 70 words >= half the target
    second = _sentences(2, page_tag="q")
    passages = split_passages([Page(number=1, text=first + "\n\n" + second)], target_words=120, overlap=20)
    assert [p.text.split()[0] for p in passages] == ["p0x0", "q0x0"]


def test_empty_pages_produce_no_passages_but_keep_numbering():
    pages = [Page(number=1, text=""), Page(number=2, text="Only this page has words.")]
    passages = split_passages(pages)
    assert [(p.ordinal, p.page, p.text) for p in passages] == [(0, 2, "Only this page has words.")]


@pytest.mark.parametrize(("target", "overlap"), [(0, 0), (50, 50), (50, -1)])
def test_invalid_sizes_are_rejected(target, overlap):
    with pytest.raises(ValueError):
        split_passages([Page(number=1, text="x")], target_words=target, overlap=overlap)


def test_sentences_survive_citation_abbreviations_and_initials():
    text = (
        "Smith et al. (2020) found it, e.g. in Fig. 3 on p. 4. J. Smith agrees (Lee et al., 2018). "
        "Vgl. z.B. Müller. Is that so? Yes!"
    )
    assert split_sentences(text) == [
        "Smith et al. (2020) found it, e.g. in Fig. 3 on p. 4.",
        "J. Smith agrees (Lee et al., 2018).",
        "Vgl. z.B. Müller.",
        "Is that so?",
        "Yes!",
    ]


def test_a_heading_line_is_its_own_sentence_but_wrapped_prose_is_not():
    text = "2.1 Related Work\nEarlier studies were small.\nThe effect of spaced practice\non retention was clear."
    assert split_sentences(text) == [
        "2.1 Related Work",
        "Earlier studies were small.",
        "The effect of spaced practice on retention was clear.",
    ]


def test_sentence_spans_point_into_the_original_text():
    text = "  One here.   Two there.  "
    assert [text[a:b] for a, b in sentence_spans(text)] == ["One here.", "Two there."]
