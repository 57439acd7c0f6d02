"""One test per citation form, per reference-list heading form, per claim rule and per
resolution rule (issue 10). Theses are small texts read by the text or Markdown reader."""

from __future__ import annotations

import pytest

from analysis.pipeline.citations import SourceInfo, extract_citations, normalize_doi, resolve_sources
from analysis.pipeline.documents.headings import is_reference_heading
from analysis.pipeline.documents.readers import extract_document

REFERENCES = """
References

Abel, A. (2020). Roofs and heat in cities. Journal of Heat, 1, 1-9.
Baker, B., & Cole, C. (2019). Streets at night. Urban Notes, 2, 3-4.
Dunn, D., Eck, E., & Fox, F. (2018). Trees and shade. Forest Letters, 5, 6-7.
Lee, K. (2020a). Sleep and memory in adolescents. Sleep Journal, 3, 1-10.
Lee, K. (2020b). Exercise and attention in adolescents. Sport Journal, 4, 2-20.
Müller, H. (o. J.). Hitze in der Stadt. Arbeitspapier.
Smith, J. (n.d.). Undated notes on cooling. Report.
Fox, F. (in press). Shade in streets. Forest Letters.
Weber, M., Roth, L., & Vogel, P. (2017). Grüne Dächer in Berlin. Zeitschrift, 9, 1-5.
"""


def cite(body: str, references: str = REFERENCES):
    return extract_citations(body + "\n\n" + references)


def one(body: str, references: str = REFERENCES):
    (citation,) = cite(body, references)
    return citation


@pytest.mark.parametrize(("body", "marker", "key"), [
    ("Roofs cool cities (Abel, 2020).", "Abel, 2020", "abel2020"),  # APA parenthetical
    ("Roofs cool cities (Abel 2020).", "Abel 2020", "abel2020"),  # Harvard, no comma
    ("Streets stay warm (Baker & Cole, 2019).", "Baker & Cole, 2019", "baker2019"),
    ("Streets stay warm (Baker and Cole 2019).", "Baker and Cole 2019", "baker2019"),
    ("Straßen bleiben warm (Baker und Cole, 2019).", "Baker und Cole, 2019", "baker2019"),
    ("Trees shade streets (Dunn et al., 2018).", "Dunn et al., 2018", "dunn2018"),
    ("Bäume spenden Schatten (Weber u. a., 2017).", "Weber u. a., 2017", "weber2017"),
    ("Roofs cool cities (Abel, 2020, p. 4).", "Abel, 2020, p. 4", "abel2020"),
    ("Roofs cool cities (Abel, 2020, pp. 4-6).", "Abel, 2020, pp. 4-6", "abel2020"),
    ("Dächer kühlen (Abel, 2020, S. 4).", "Abel, 2020, S. 4", "abel2020"),
    ("Dächer kühlen (Abel, 2020, Kap. 3).", "Abel, 2020, Kap. 3", "abel2020"),
    ("Roofs cool cities (Abel 2020: 4).", "Abel 2020: 4", "abel2020"),
    ("Es wird heiß (Müller, o. J.).", "Müller, o. J.", "mullern.d."),
    ("Cooling helps (Smith, n.d.).", "Smith, n.d.", "smithn.d."),
    ("Shade helps (Fox, in press).", "Fox, in press", "foxin press"),
    ("Sleep matters (Lee, 2020a).", "Lee, 2020a", "lee2020a"),
    ("Exercise matters (Lee, 2020b).", "Lee, 2020b", "lee2020b"),
    ("Streets stay warm (Baker 2019, 14).", "Baker 2019, 14", "baker2019"),  # Harvard page
    ("Straßen bleiben warm (Baker/Cole 2019).", "Baker/Cole 2019", "baker2019"),  # German slash
    ("Roofs cool cities (see Abel, 2020, for a review).", "Abel, 2020", "abel2020"),
    ("Heat kills (Smith, 2019, as cited in Abel, 2020).", "Abel, 2020", "abel2020"),  # secondary citation
])
def test_parenthetical_author_year_forms(body, marker, key):
    citation = one(body)
    assert (citation.marker, citation.kind, citation.reference.key) == (marker, "parenthetical", key)
    assert "(" not in citation.claim


@pytest.mark.parametrize("prefix", ["see", "see also", "cf.", "e.g.,", "vgl.", "vgl. auch", "siehe", "z. B."])
def test_prefixes_are_not_part_of_the_marker(prefix):
    citation = one(f"Roofs cool cities ({prefix} Abel, 2020).")
    assert citation.marker == "Abel, 2020" and citation.reference.key == "abel2020"
    assert citation.claim == "Roofs cool cities."


def test_several_works_in_one_parenthesis_share_the_claim():
    citations = cite("Cities warm up (Abel, 2020; Baker & Cole, 2019; see Dunn et al., 2018, p. 3).")
    assert [c.marker for c in citations] == ["Abel, 2020", "Baker & Cole, 2019", "Dunn et al., 2018, p. 3"]
    assert {c.claim for c in citations} == {"Cities warm up."}
    assert [c.locator for c in citations] == [None, None, "p. 3"]


@pytest.mark.parametrize("years", ["2020a, 2020b", "2020a, b"])
def test_several_years_of_one_author_are_two_citations(years):
    citations = cite(f"Adolescents need sleep and exercise (Lee, {years}).")
    assert [c.reference.key for c in citations] == ["lee2020a", "lee2020b"]


@pytest.mark.parametrize(("body", "marker", "claim"), [
    ("Abel (2020) measured roof temperatures in July.", "Abel (2020)", "Abel measured roof temperatures in July."),
    ("According to Abel (2020), roofs cool the top floor.", "Abel (2020)", "roofs cool the top floor."),
    ("Abel (2020) found that roofs cool the top floor.", "Abel (2020)", "roofs cool the top floor."),
    ("Abel (2020) also reported that roofs cool.", "Abel (2020)", "roofs cool."),
    ("Baker and Cole (2019) showed that streets stay warm.", "Baker and Cole (2019)", "streets stay warm."),
    ("Dunn et al. (2018) argue that trees shade streets.", "Dunn et al. (2018)", "trees shade streets."),
    ("Laut Müller (o. J.) wird es heißer.", "Müller (o. J.)", "wird es heißer."),
    ("Müller (o. J.) zeigt, dass es heißer wird.", "Müller (o. J.)", "es heißer wird."),
    ("Weber u. a. (2017) berichten, dass Dächer kühlen.", "Weber u. a. (2017)", "Dächer kühlen."),
    ("Abel (2020, p. 4) measured roofs.", "Abel (2020, p. 4)", "Abel measured roofs."),
])
def test_narrative_citations_keep_a_readable_claim(body, marker, claim):
    citation = one(body)
    assert (citation.marker, citation.kind, citation.claim) == (marker, "narrative", claim)
    assert citation.reference is not None


def test_ibid_and_ebd_cite_the_work_before_with_their_own_locator():
    citations = cite("Roofs cool (Abel, 2020, p. 3). They also save energy (ibid., p. 5). "
                     "Dächer sparen Strom (Baker & Cole, 2019). Sie halten lange (Ebd.). Und länger (ebd., S. 9).")
    assert [(c.marker, c.kind) for c in citations][1::2] == [("ibid., p. 5", "ibid"), ("Ebd.", "ibid")]
    assert [c.reference.key for c in citations] == ["abel2020", "abel2020", "baker2019", "baker2019", "baker2019"]
    assert citations[4].locator == "S. 9" and citations[1].claim == "They also save energy."


def test_ibid_with_nothing_before_is_unresolved_with_its_reason():
    citation = one("Roofs cool (ibid.).")
    assert citation.reference is None and "ibid" in citation.unresolved_reason


NUMERIC_REFS = """
Literaturverzeichnis

[1] R. Castillo, "Surface temperatures of green roofs," Urban Climate, vol. 6, 2018.
[2] Y. Nakamura, "Heat waves and mortality," Notes, 2020.
[3] A. Author, "Three," J, 2001.
[4] B. Author, "Four," J, 2002.
[5] C. Author, "Five," J, 2003.
"""


@pytest.mark.parametrize(("body", "numbers"), [
    ("Roofs cool [1].", [1]),
    ("Roofs cool [1, 3].", [1, 3]),
    ("Roofs cool [2–5].", [2, 3, 4, 5]),
    ("Roofs cool [2-5].", [2, 3, 4, 5]),
    ("Roofs cool [1; 4].", [1, 4]),
    ("Roofs cool [3, p. 7].", [3]),
    ("Roofs cool [1]–[3].", [1, 2, 3]),
])
def test_numeric_forms(body, numbers):
    citations = cite(body, NUMERIC_REFS)
    assert [c.cited_number for c in citations] == numbers
    assert all(c.reference.number == n and c.kind == "numeric" for c, n in zip(citations, numbers))
    assert {c.claim for c in citations} == {"Roofs cool."}


def test_vancouver_numbered_list_with_dots_resolves_numeric_markers():
    refs = "\nReferences\n\n1. Castillo R. Surface temperatures of green roofs. Urban Clim. 2018;6:12-29.\n" \
           "2. Nakamura Y. Heat waves and mortality. Notes. 2020.\n"
    citations = cite("Roofs cool [1] and people die [2].", refs)
    assert [c.reference.number for c in citations] == [1, 2]
    assert citations[0].reference.first_author == "Castillo"


def test_footnote_citations_in_markdown_author_year_full_reference_and_ebd():
    thesis = ("# Thesis\n\nRoofs cool the top floor.[^1] Streets stay warm at night[^2]. "
              "Trees shade the pavement.[^3] Cooling centres save lives.[^4]\n\n"
              "## Literatur\n\n" + "\n\n".join(REFERENCES.strip().splitlines()[2:]) + "\n\n"
              "[^1]: Vgl. Abel 2020, S. 12.\n"
              "[^2]: Baker, B., & Cole, C. (2019). Streets at night. Urban Notes, 2, 3-4.\n"
              "[^3]: Ebd., S. 4.\n"
              "[^4]: Ghost, G. (2015). Centres and lives. Journal of Nothing, 1, 1-2.\n")
    citations = extract_citations(extract_document(thesis.encode(), "t.md"))
    assert [(c.kind, c.marker) for c in citations] == [
        ("footnote", "Abel 2020, S. 12"), ("footnote", "Baker 2019"), ("ibid", "Ebd., S. 4"),
        ("footnote", "Ghost 2015")]
    assert [c.claim for c in citations] == ["Roofs cool the top floor.", "Streets stay warm at night.",
                                            "Trees shade the pavement.", "Cooling centres save lives."]
    assert [c.reference.key if c.reference else None for c in citations][:3] == ["abel2020", "baker2019",
                                                                                  "baker2019"]
    # A full reference in a footnote that the list lacks is still a reference (its title can match)
    assert citations[3].reference.title == "Centres and lives"


@pytest.mark.parametrize("heading", [
    "References", "REFERENCES", "References:", "# References", "## References", "### Bibliography",
    "7 References", "7. Literatur", "7.1 Literaturverzeichnis", "Works Cited", "Literature", "Reference List",
    "Sources", "Quellenverzeichnis", "Quellen", "LITERATURVERZEICHNIS", "VII. Bibliography",
])
def test_reference_list_headings_in_any_syntax(heading):
    assert is_reference_heading(heading)
    thesis = f"Intro\n\nRoofs cool (Abel, 2020).\n\n{heading}\n\nAbel, A. (2020). Roofs and heat. J, 1.\n"
    (citation,) = extract_citations(thesis)
    assert citation.reference is not None and citation.reference.key == "abel2020"


@pytest.mark.parametrize("heading", ["Setext References\n=================", "References\n----------"])
def test_setext_reference_headings_in_markdown(heading):
    thesis = f"Roofs cool (Abel, 2020).\n\nReferences\n==========\n\nAbel, A. (2020). Roofs and heat. J, 1.\n"
    doc = extract_document(thesis.encode(), "t.md")
    assert [h.text for h in doc.headings] == ["References"]
    assert extract_citations(doc)[0].reference.key == "abel2020"


@pytest.mark.parametrize("text", ["Reference to the past", "Sources of heat in cities", "References were checked."])
def test_sentences_that_mention_references_are_not_headings(text):
    assert not is_reference_heading(text)


def test_reference_list_entries_never_become_citations():
    citations = cite("Roofs cool (Abel, 2020). Abel (2020) measured roofs.")
    assert len(citations) == 2


def test_no_section_heading_is_glued_to_a_claim():
    thesis = "# Thesis\n\n## Sleep and learning\nAdolescents who sleep learn more (Lee, 2020a).\n\n" + REFERENCES
    (citation,) = extract_citations(extract_document(thesis.encode(), "t.md"))
    assert citation.claim == "Adolescents who sleep learn more."


def test_two_citations_for_two_clauses_get_a_clause_each():
    citations = cite("Roof temperatures rose (Abel, 2020), whereas street temperatures fell (Baker & Cole, 2019).")
    assert [c.claim for c in citations] == ["Roof temperatures rose.", "street temperatures fell."]
    citations = cite("Abel (2020) found that roofs warmed, while Baker and Cole (2019) reported that streets cooled.")
    assert [c.claim for c in citations] == ["roofs warmed.", "streets cooled."]
    citations = cite("Dächer wurden wärmer (Abel, 2020); Straßen kühlten ab (Baker & Cole, 2019).")
    assert [c.claim for c in citations] == ["Dächer wurden wärmer.", "Straßen kühlten ab."]


def test_an_ambiguous_citation_stays_unresolved_with_the_reason():
    refs = "\nReferences\n\nLee, K. (2020a). Sleep and memory. J, 1.\nLee, K. (2020b). Exercise and attention. J, 2.\n"
    citation = one("Adolescents learn (Lee, 2020).", refs)
    assert citation.reference is None
    assert citation.unresolved_reason == "ambiguous: 2 reference entries match 'Lee 2020'"


# -- resolution ----------------------------------------------------------------------------


def _resolve(body: str, sources: list[SourceInfo], refs: str = REFERENCES):
    citations = cite(body, refs)
    return citations, resolve_sources(citations, sources)


@pytest.mark.parametrize("written", ["https://doi.org/10.5555/ABC.1", "http://dx.doi.org/10.5555/abc.1",
                                     "doi:10.5555/abc.1", "DOI: 10.5555/Abc.1."])
def test_doi_in_any_spelling_resolves(written):
    refs = f"\nReferences\n\nAbel, A. (2020). Roofs and heat. J, 1. {written}\n"
    source = SourceInfo(id="s", filename="x.pdf", text=f"A paper\n{written.lower()}\nBody.")
    _, resolved = _resolve("Roofs cool (Abel, 2020).", [source], refs)
    assert (resolved[0].source_id, resolved[0].method) == ("s", "doi")
    assert normalize_doi(written) == "10.5555/abc.1"


def test_author_and_year_on_the_first_pages_resolve():
    source = SourceInfo(id="a", filename="paper.pdf", text="Roofs and heat\nAnna Abel\nJournal of Heat, 2020")
    _, resolved = _resolve("Roofs cool (Abel, 2020).", [source])
    assert (resolved[0].source_id, resolved[0].method) == ("a", "author_year")


def test_same_author_and_year_works_resolve_by_title():
    sources = [SourceInfo(id="sleep", filename="1.pdf", text="Sleep and memory in adolescents\nK. Lee, 2020"),
               SourceInfo(id="sport", filename="2.pdf", text="Exercise and attention in adolescents\nK. Lee, 2020")]
    citations, resolved = _resolve("Sleep helps (Lee, 2020a). Exercise helps (Lee, 2020b).", sources)
    assert [(resolved[c.ordinal].source_id, resolved[c.ordinal].method) for c in citations] == [
        ("sleep", "title"), ("sport", "title")]


def test_two_sources_that_fit_equally_leave_the_citation_unresolved():
    sources = [SourceInfo(id="x", filename="1.pdf", text="Anna Abel 2020 first copy"),
               SourceInfo(id="y", filename="2.pdf", text="Anna Abel 2020 second copy")]
    _, resolved = _resolve("Roofs cool (Abel, 2020).", sources)
    assert resolved[0].source_id is None
    assert resolved[0].reason == "ambiguous: 2 sources match 'Abel 2020'"


def test_pdf_metadata_resolves_when_the_page_says_nothing():
    source = SourceInfo(id="m", filename="scan.pdf", text="(no text layer worth reading)",
                        metadata={"author": "Anna Abel", "title": "Roofs and Heat in Cities"})
    _, resolved = _resolve("Roofs cool (Abel, 2020).", [source])
    assert (resolved[0].source_id, resolved[0].method) == ("m", "metadata")


def test_title_similarity_resolves_a_source_without_names():
    source = SourceInfo(id="t", filename="download.pdf", text="ROOFS AND HEAT IN CITIES\nsome body text")
    _, resolved = _resolve("Roofs cool (Abel, 2020).", [source])
    assert (resolved[0].source_id, resolved[0].method) == ("t", "title")
    # A title of two content words is too short to trust
    source = SourceInfo(id="t", filename="download.pdf", text="TREES AND SHADE\nsome body text")
    _, resolved = _resolve("Trees shade (Dunn et al., 2018).", [source])
    assert resolved[0].source_id is None


def test_unresolved_reasons_name_what_is_missing():
    citations, resolved = _resolve("Roofs cool (Ghost, 2001). Trees shade (Dunn et al., 2018).", [])
    assert resolved[0].reason == "no reference entry for 'Ghost 2001'"
    assert resolved[1].reason == "reference found but no uploaded source matches 'Dunn et al. 2018'"


def test_a_source_that_only_mentions_the_author_further_down_gives_way_to_the_byline():
    filler = "Body text about roofs and streets in summer. " * 30
    sources = [SourceInfo(id="own", filename="1.pdf", text="A study\nAnna Abel\n2020\n" + filler),
               SourceInfo(id="citing", filename="2.pdf", text="Another study\nB. Other, 2020\n" + filler +
                          "As Abel (2020) showed, roofs cool.")]
    _, resolved = _resolve("Roofs cool (Abel, 2020).", sources, "\nReferences\n\nAbel, A. (2020). X. J, 1.\n")
    assert (resolved[0].source_id, resolved[0].method) == ("own", "author_year")


def test_the_same_file_uploaded_twice_is_no_ambiguity():
    text = "A study\nAnna Abel\n2020\nBody."
    sources = [SourceInfo(id="1", filename="a.pdf", text=text), SourceInfo(id="2", filename="a copy.pdf", text=text)]
    _, resolved = _resolve("Roofs cool (Abel, 2020).", sources)
    assert (resolved[0].source_id, resolved[0].method) == ("1", "author_year")
