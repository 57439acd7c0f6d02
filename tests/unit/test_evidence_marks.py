"""Finding a claim or a quote on a page to mark it (analysis/surface/evidence.py): no database."""

from __future__ import annotations

from analysis.surface.evidence import Block, locate, mark, sentences


def test_a_quote_is_found_across_line_breaks_and_case():
    text = "Results\nStudents who took weekly\nquizzes scored 14 points higher on the delayed test. Others did not."
    start, end = locate(text, "students who took weekly quizzes scored 14 points higher on the delayed test.")
    assert text[start:end] == "Students who took weekly\nquizzes scored 14 points higher on the delayed test"


def test_a_claim_with_its_marker_cut_out_is_found_by_its_first_and_last_words():
    text = ("As earlier work shows, retrieval practice improves delayed recall in secondary school classrooms "
            "(Okafor & Lindqvist, 2019) across all four subjects that were taught.")
    claim = ("retrieval practice improves delayed recall in secondary school classrooms across all four subjects "
             "that were taught")
    start, end = locate(text, claim)
    assert text[start:].startswith("retrieval practice") and text[:end].endswith("that were taught")


def test_text_that_is_not_there_is_not_marked():
    assert locate("Green roofs cool buildings.", "Blue roofs heat cities.") is None
    assert locate("anything", "") is None


def test_two_quoted_sentences_get_a_mark_each_where_they_stand():
    quote = "The trial enrolled 120 pupils. Its members were tested twice."
    assert sentences(quote) == ["The trial enrolled 120 pupils.", "Its members were tested twice."]
    blocks = [Block(kind="heading", text="Method"), Block(kind="paragraph", text="The trial enrolled 120 pupils."),
              Block(kind="paragraph", text="Its members were tested twice, in May and June.")]
    assert mark(blocks, sentences(quote)) is True
    assert [b.marks for b in blocks] == [[], [(0, 29)], [(0, 29)]]
    assert blocks[2].text[0:29] == "Its members were tested twice"


def test_a_heading_beside_a_quote_is_not_part_of_the_mark():
    blocks = [Block(kind="heading", text="Results"), Block(kind="paragraph", text="Scores rose by a third.")]
    assert mark(blocks, ["Scores rose by a third."])
    assert blocks[0].marks == [] and blocks[1].marks == [(0, 22)]


def test_a_quote_running_over_a_title_block_and_a_heading_is_marked_in_each_block_it_takes_in():
    blocks = [Block(kind="paragraph", text="Quizzing and retention"), Block(kind="heading", text="Abstract"),
              Block(kind="paragraph", text="We tested quizzes. Scores rose.")]
    assert mark(blocks, sentences("Quizzing and retention Abstract We tested quizzes."))
    assert [b.marks for b in blocks] == [[(0, 22)], [(0, 8)], [(0, 17)]]
