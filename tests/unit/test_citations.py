"""Citation markers, reference lists and source matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.pipeline.citations import (
    SourceInfo,
    extract_citations,
    find_reference_section,
    is_valid_doi,
    match_sources,
    parse_references,
)
from analysis.pipeline.documents.readers import extract_pages

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"

AUTHOR_YEAR_THESIS = """\
Contents
1 Introduction
References

1 Introduction
Retrieval practice helps (Müller, 2019). Spacing works too (Smith et al., 2020; Lee 2018).
Smith (2020) showed that sleep matters. Pairs were compared (Smith & Jones, 2020).
Pairs were compared again (Smith and Jones 2020). A second study followed (Müller, 2019a).
See also the review (see van der Berg, 2015, p. 12). Nobody listed this (Ghost, 2001).

References
Berg, A. van der (2015). A review of reviews. Review Journal, 1, 1-9.
Lee, K. (2018). Sleep and memory in adolescents. Journal of Sleep, 3(2), 1–10.
Müller, A. (2019). Retrieval practice in German schools. Zeitschrift für Lernen,
   4, 22–30. https://doi.org/10.1234/zfl.2019.4
Müller, A. (2019a). Another study of retrieval. Journal X, 2, 5–6.
Smith, J., & Jones, K. (2020). Pairs of things compared. Journal Y, 7, 1–2. doi:10.5555/abc.1
Smith, J., Brown, L., & Lee, K. (2020). Spacing effects revisited. Memory, 2, 3–9.
"""

NUMERIC_THESIS = """\
Green roofs cool roofs [1]. Streets stay warm [2-3]. Many agree [1, 4–6].
Not a citation [2019] or a range [1-900].

Literaturverzeichnis
[1] R. Castillo and A. Feld, "Surface temperatures of green roofs," Urban Climate, vol. 6, 2018, doi: 10.5555/gr.2018.77.
[2] Nakamura, Y. (2020). Heat waves and excess mortality. Working notes.
[3] Report 2019.
[4] Four, A. (2004). Four.
[5] Five, B. (2005). Five.
[6] Six, C. (2006). Six.
"""


def _by_marker(citations):
    return {c.marker: c for c in citations}


def test_author_year_markers_are_found_in_all_their_forms():
    # Given a thesis body with the common author–year forms
    citations = extract_citations(AUTHOR_YEAR_THESIS)
    # Then each citation is reported once, with its literal marker, in reading order
    assert [c.marker for c in citations] == [
        "Müller, 2019",
        "Smith et al., 2020",
        "Lee 2018",
        "Smith (2020)",
        "Smith & Jones, 2020",
        "Smith and Jones 2020",
        "Müller, 2019a",
        "van der Berg, 2015, p. 12",
        "Ghost, 2001",
    ]
    assert [c.ordinal for c in citations] == list(range(9))


def test_author_year_markers_resolve_to_the_right_reference():
    citations = _by_marker(extract_citations(AUTHOR_YEAR_THESIS))
    assert citations["Müller, 2019"].reference.doi == "10.1234/zfl.2019.4"
    assert citations["Müller, 2019a"].reference.title == "Another study of retrieval"
    # "et al." picks the three-author Smith 2020, the pair picks Smith & Jones
    assert citations["Smith et al., 2020"].reference.authors == ["Smith", "Brown", "Lee"]
    assert citations["Smith & Jones, 2020"].reference.authors == ["Smith", "Jones"]
    assert citations["Smith and Jones 2020"].reference.doi == "10.5555/abc.1"
    assert citations["Lee 2018"].reference.year == "2018"
    assert citations["van der Berg, 2015, p. 12"].reference.first_author == "Berg"
    assert citations["Ghost, 2001"].reference is None


def test_claim_is_the_sentence_without_markers_and_the_sentence_keeps_them():
    citations = _by_marker(extract_citations(AUTHOR_YEAR_THESIS))
    lee = citations["Lee 2018"]
    assert lee.claim == "Spacing works too."
    assert lee.sentence == "Spacing works too (Smith et al., 2020; Lee 2018)."
    # The reporting frame "Smith (2020) showed that" goes: the claim is what is asserted.
    assert citations["Smith (2020)"].claim == "sleep matters."
    assert citations["Müller, 2019"].claim == "Retrieval practice helps."


def test_the_last_reference_heading_wins_over_a_table_of_contents():
    body, section = find_reference_section(AUTHOR_YEAR_THESIS)
    assert "Retrieval practice helps" in body
    assert section.lstrip().startswith("Berg, A. van der")


def test_author_year_reference_list_fields():
    _, section = find_reference_section(AUTHOR_YEAR_THESIS)
    refs = parse_references(section)
    # Given wrapped lines, entries are still six, and keys stay unique
    assert len(refs) == 6
    assert len({r.key for r in refs}) == 6
    mueller = refs[2]
    assert (mueller.first_author, mueller.year, mueller.doi) == ("Müller", "2019", "10.1234/zfl.2019.4")
    assert mueller.title == "Retrieval practice in German schools"
    assert "Zeitschrift für Lernen, 4, 22–30" in mueller.raw


def test_numeric_markers_expand_ranges_with_hyphen_and_en_dash():
    citations = extract_citations(NUMERIC_THESIS)
    assert [c.marker for c in citations] == ["[1]", "[2]", "[3]", "[1]", "[4]", "[5]", "[6]", "[2019]", "[1]"]
    many = [c for c in citations if c.claim == "Many agree."]
    assert [c.cited_number for c in many] == [1, 4, 5, 6]
    # [2019] resolves to nothing; [1-900] is too wide a range to be meant, so only [1] counts
    assert _by_marker(citations)["[2019]"].reference is None
    assert citations[-1].reference.number == 1


def test_numeric_reference_list_ieee_and_apa_entries():
    refs = {r.number: r for r in parse_references(find_reference_section(NUMERIC_THESIS)[1])}
    assert refs[1].authors == ["Castillo", "Feld"]
    assert refs[1].title == "Surface temperatures of green roofs"
    assert (refs[1].year, refs[1].doi) == ("2018", "10.5555/gr.2018.77")
    assert refs[2].first_author == "Nakamura"
    assert refs[2].title == "Heat waves and excess mortality"
    assert refs[1].key == "[1]"


def test_numeric_markers_are_ignored_when_the_list_is_author_year():
    text = "A claim [3] here (Lee, 2018).\n\nReferences\nLee, K. (2018). Sleep. J, 1.\n"
    assert [c.marker for c in extract_citations(text)] == ["Lee, 2018"]


@pytest.mark.parametrize(
    ("doi", "valid"),
    [
        ("10.1000/182", True),
        ("10.5555/citeq.2019.0142", True),
        ("10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-O", True),
        ("10.123/abc", False),  # registrant too short
        ("11.1000/182", False),
        ("10.1000/", False),
        ("10.1000/ has space", False),
        ("doi:10.1000/182", False),
        ("", False),
    ],
)
def test_doi_shape(doi, valid):
    assert is_valid_doi(doi) is valid


def test_citations_in_a_real_thesis_pdf_have_pages_and_references():
    # Given the pages of a generated author–year thesis
    pages = extract_pages((SAMPLES / "thesis_retrieval_practice.pdf").read_bytes(), "t.pdf")
    # When citations are extracted
    citations = extract_citations(pages)
    # Then all eight planted citations are found, with pages, all resolved
    assert len(citations) == 8
    assert all(c.reference is not None for c in citations)
    assert [c.page for c in citations] == [1, 1, 1, 1, 1, 2, 2, 2]
    brandt = _by_marker(citations)["Brandt et al., 2017"]
    assert brandt.reference.doi == "10.5555/citeq.2017.0419"


def _sample_sources() -> list[SourceInfo]:
    infos = []
    for path in sorted(SAMPLES.iterdir()):
        if path.name.startswith("thesis") or path.suffix not in {".pdf", ".txt"}:
            continue
        first = extract_pages(path.read_bytes(), path.name)[0]
        infos.append(SourceInfo(id=path.stem, filename=path.name, text=first.text))
    return infos


def test_sources_match_by_doi_then_author_and_year():
    pages = extract_pages((SAMPLES / "thesis_retrieval_practice.pdf").read_bytes(), "t.pdf")
    citations = extract_citations(pages)
    matched = match_sources(citations, _sample_sources())
    by_marker = {c.marker: matched[c.ordinal] for c in citations}
    assert by_marker["Hartmann et al., 2020"] == "hartmann_2020_feedback"  # DOI on the first page
    assert by_marker["Müller, 2021"] == "mueller_2021_spaced_homework"  # no DOI: name and year
    assert by_marker["Brandt et al., 2017"] is None  # listed, but never uploaded
    assert set(matched) == {c.ordinal for c in citations}


def test_sources_match_by_title_when_name_and_year_are_absent():
    # Given a reference whose source shows only its title on the first page
    citations = extract_citations(NUMERIC_THESIS)
    untitled = SourceInfo(id="a", filename="scan01.pdf", text="Unrelated notes about bridges and 2020 budgets.")
    titled = SourceInfo(id="b", filename="scan02.pdf", text="HEAT WAVES AND EXCESS MORTALITY\nworking notes")
    # When matched
    matched = match_sources(citations, [untitled, titled])
    # Then [2] finds the source by its title, and [4] (no such source) finds none
    assert matched[citations[1].ordinal] == "b"
    assert matched[citations[4].ordinal] is None


def test_doi_in_metadata_matches_and_spelling_variants_of_names_match():
    text = "Claim one (Müller, 2019). Claim two (Lee, 2018).\n\nReferences\n" \
        "Müller, A. (2019). Title one here. J, 1. https://doi.org/10.1234/ABC.9\n" \
        "Lee, K. (2018). Sleep and memory in adolescents. J, 2.\n"
    citations = extract_citations(text)
    sources = [
        SourceInfo(id="m", filename="m.pdf", text="no identifiers here", metadata={"doi": "10.1234/abc.9"}),
        SourceInfo(id="l", filename="lee.pdf", text="K. LEE\nSleep and memory\n(2018)"),
    ]
    assert match_sources(citations, sources) == {0: "m", 1: "l"}
    mueller_source = SourceInfo(id="x", filename="x.txt", text="Anna Mueller, 2019: Title one here")
    assert match_sources(citations[:1], [mueller_source]) == {0: "x"}
