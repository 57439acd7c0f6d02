"""The evaluation harness's matching of reported citations to planted ones (no database)."""

from __future__ import annotations


def _load():
    from citeq.evaluation import harness

    return harness


ev = _load()


def test_marker_keys_read_every_citation_form():
    assert ev.marker_keys("[2–5]") == {"n:2", "n:3", "n:4", "n:5"}
    assert ev.marker_keys("[1, 3]") == {"n:1", "n:3"}
    assert ev.marker_keys("[4]") == {"n:4"}
    assert ev.marker_keys("Okafor & Lindqvist, 2019") == {"ay:okafor:2019"}
    assert ev.marker_keys("(see Okonkwo, 2018)") == {"ay:okonkwo:2018"}
    assert ev.marker_keys("vgl. Müller u. a. 2019, S. 12") == {"ay:muller:2019"}
    assert ev.marker_keys("Kessler (2020b, p. 14)") == {"ay:kessler:2020"}
    assert ev.marker_keys("(Baptiste, n.d.)") == {"ay:baptiste:nd"}
    assert ev.marker_keys("Lorenz o. J., S. 3") == {"ay:lorenz:nd"}
    assert ev.marker_keys("(Regional Labour Office n.d.)") == {"ay:regional:nd"}
    assert ev.marker_keys("van der Berg (2017)") == {"ay:berg:2017"}
    assert ev.marker_keys("Ebd., S. 118.") == {"ibid"}
    assert ev.marker_keys("(ibid.)") == {"ibid"}
    assert ev.marker_keys("[^3]") == {"fn:3"}
    assert ev.marker_keys("²") == {"fn:2", "n:2"}


def label(id, marker, claim, *, number=None, author=None, year=None, page=1, footnote=None, forms=()):
    return {"id": id, "marker": marker, "claim": claim, "ref_number": number, "ref_author": author,
            "ref_year": year, "page": page, "footnote": footnote, "forms": list(forms)}


def row(ordinal, marker, claim, page=1):
    return ev.Reported(ordinal=ordinal, marker=marker, claim=claim, page=page, source=None, verdict=None,
                       confidence=None)


def test_a_range_reported_per_number_matches_each_planted_number():
    claim = "Practical problems such as unsuitable cuffs limit home monitoring"
    labels = [label("a", "[2–5]", claim, number=2), label("b", "[2–5]", claim, number=3),
              label("c", "[2–5]", claim, number=4)]
    rows = [row(0, "[3]", claim + "."), row(1, "[2]", claim + "."), row(2, "[4]", claim + "."),
            row(3, "[9]", "A sentence nobody planted a citation in.")]
    matched, unmatched = ev.match(labels, rows)
    assert [(lab["id"], r.marker) for lab, r, _ in matched] == [("a", "[2]"), ("b", "[3]"), ("c", "[4]")]
    assert unmatched == 1


def test_the_claim_decides_between_two_citations_of_one_work():
    labels = [label("x", "(Kessler 2020a)", "firms cut the hours of each employee", author="Kessler", year="2020a"),
              label("y", "(Kessler 2020a)", "the smallest shops bore the entire adjustment", author="Kessler",
                    year="2020a")]
    rows = [row(0, "Kessler 2020a", "Interestingly, the smallest shops bore the entire adjustment."),
            row(1, "Kessler 2020a", "Instead, firms cut the hours of each employee by about 3 per cent.")]
    matched, unmatched = ev.match(labels, rows)
    assert [(lab["id"], r.ordinal) for lab, r, _ in matched] == [("x", 1), ("y", 0)]
    assert unmatched == 0


def test_a_footnote_matches_by_its_number_or_by_the_work_it_names():
    labels = [label("f", "footnote 2", "Seit 1923 konnte ein Vermieter nur noch durch Urteil kündigen",
                    author="Hartung", year="2015", footnote="Ebd., S. 118.", forms=["footnote", "ibid"])]
    for marker in ("2", "Ebd., S. 118", "Hartung 2015, S. 118"):
        matched, _ = ev.match(labels, [row(0, marker, "Seit 1923 konnte ein Vermieter nur noch durch Urteil "
                                                      "kündigen.")])
        assert matched[0][1] is not None, marker


def test_a_different_claim_is_no_match():
    labels = [label("a", "[1]", "Self-monitoring lowered systolic pressure", number=1)]
    matched, unmatched = ev.match(labels, [row(0, "[1]", "Heat waves raise mortality among older adults.")])
    assert matched[0][1] is None and unmatched == 1


def test_evidence_figures_count_the_page_and_the_planted_sentence_shown():
    quote = "Medication adherence, assessed by pill counts, did not differ between the groups."
    label = {"source": "sources/a.pdf"}
    assert ev.planted_evidence_pages(label, 1) == [1]
    assert ev.planted_evidence_pages(label, 3) is None  # a longer source without a label: unknown
    assert ev.planted_evidence_pages({**label, "evidence_pages": [2]}, 3) == [2]
    assert ev.evidence_holds(quote, "After a year ... " + quote + " More text.")
    assert ev.evidence_holds(quote, "Adherence (pill counts) did not differ between the groups.")
    assert not ev.evidence_holds(quote, "Systolic blood pressure was 4.7 mmHg lower.")
    assert not ev.evidence_holds(quote, None)

    def case(page, shown, planted_pages=(1,), planted=None, lang="de"):
        c = ev.Case(thesis="t", id="c", language=lang, style="apa", format="pdf", forms=[], contradiction=[],
                    expected_verdict="supported", expected_source="a.pdf", expected_page=1, marker="m", claim="x",
                    found=True, reported_source="a.pdf", verdict="uncertain", source_language="en",
                    planted_evidence_pages=list(planted_pages), planted_evidence=planted)
        c.evidence_page, c.evidence = page, shown
        return c

    cases = [case(1, quote, planted=[quote]), case(2, "Other words entirely here.", planted=[quote]),
             case(None, None), case(2, quote, planted_pages=(2,), lang="en")]
    figures = ev.figures(cases, 4, 0)["evidence"]

    assert (figures["measured"], figures["on_planted_page"], figures["shown"]) == (4, 2, 3)
    assert (figures["labelled_pages"], figures["labelled_pages_placed"]) == (1, 1)
    assert (figures["sentence_labelled"], figures["sentence_held"]) == (2, 1)
