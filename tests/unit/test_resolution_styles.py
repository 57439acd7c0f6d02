"""Resolution across the bibliography styles real theses use: the entry's publication
year, authors and title in every style; undated works; corporate authors; footnotes that
hold a full reference or a short title; sources known only by metadata or a title line."""

from __future__ import annotations

import pytest

from analysis.pipeline.citations import SourceInfo, extract_citations, parse_references, resolve_sources
from analysis.pipeline.documents.readers import extract_document


def _one(entry: str):
    (ref,) = parse_references(entry)
    return ref


# -- 1. the publication year is the one after the place, not the one in the title -------------


@pytest.mark.parametrize(("entry", "authors", "year", "title_start"), [
    ("Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918–1933. Eine Rechtsgeschichte, Leipzig 2015.",
     ["Hartung"], "2015", "Mieterschutz in der Weimarer Republik 1918–1933"),
    ("Brandt, Ilse (Hg.): Wohnungsnot und Inflation 1923, Frankfurt am Main: Campus 2009, S. 1–20.",
     ["Brandt"], "2009", "Wohnungsnot und Inflation 1923"),
    ("Seidel, Otto/Winter, Paula: Die Stadt im Krieg 1914-1918, München 1998.",
     ["Seidel", "Winter"], "1998", "Die Stadt im Krieg 1914-1918"),
    ("Keller, Ruth: Bauen nach 1945, in: Brandt, Ilse (Hg.): Wohnungsnot, Berlin 2011, S. 33–58.",
     ["Keller"], "2011", "Bauen nach 1945"),
    ("Vogt, Hanna. 2016. Arbeiterviertel 1890–1914. Hamburg: Junius.",
     ["Vogt"], "2016", "Arbeiterviertel 1890–1914"),
])
def test_german_humanities_entries_take_the_year_after_the_place(entry, authors, year, title_start):
    ref = _one(entry)
    assert ref.authors == authors
    assert ref.year == year
    assert ref.title.startswith(title_start)


def test_a_footnote_citing_the_publication_year_resolves_despite_years_in_the_title():
    thesis = ("# Einleitung\n\nDer Mieterschutz wurde 1923 verschärft.[^1] Die Wohnungsnot blieb.[^2]\n\n"
              "# Literaturverzeichnis\n\n"
              "Brandt, Ilse (Hg.): Wohnungsnot und Inflation 1923, Frankfurt am Main: Campus 2009.\n\n"
              "Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918–1933, Leipzig 2015.\n\n"
              "[^1]: Vgl. Hartung 2015, S. 112.\n[^2]: Brandt 2009, S. 4.\n")
    citations = extract_citations(extract_document(thesis.encode(), "t.md"))
    assert [c.reference.key if c.reference else c.unresolved_reason for c in citations] == [
        "hartung2015", "brandt2009"]
    # A year the entry does not carry as its publication year is no match
    other = thesis.replace("Hartung 2015", "Hartung 1918")
    citations = extract_citations(extract_document(other.encode(), "t.md"))
    assert citations[0].reference is None
    assert citations[0].unresolved_reason == "no reference entry for 'Hartung 1918'"


# -- 5. every entry style gives author, year, title and DOI -----------------------------------


@pytest.mark.parametrize(("entry", "authors", "year", "title", "doi"), [
    ("Smith, J., & Lee, K. (2019). Feedback timing in large lectures. Journal of Teaching, 12(3), 45–67. "
     "https://doi.org/10.1234/jot.2019.045", ["Smith", "Lee"], "2019", "Feedback timing in large lectures",
     "10.1234/jot.2019.045"),  # APA 7
    ("Smith, J. (2019) Feedback timing in large lectures. Journal of Teaching, 12(3), pp. 45–67.",
     ["Smith"], "2019", "Feedback timing in large lectures", None),  # Harvard
    ('Smith, John, and Kim Lee. "Feedback Timing in Large Lectures." Journal of Teaching 12.3 (2019): 45–67.',
     ["Smith", "Lee"], "2019", "Feedback Timing in Large Lectures", None),  # MLA
    ('Smith, John, and Kim Lee. 2019. "Feedback Timing in Large Lectures." Journal of Teaching 12 (3): 45–67. '
     "doi:10.1234/jot.2019.045.", ["Smith", "Lee"], "2019", "Feedback Timing in Large Lectures",
     "10.1234/jot.2019.045"),  # Chicago author-date
    ("Smith, John. Feedback in the Lecture Hall, 1950–2000. Chicago: University of Chicago Press, 2019.",
     ["Smith"], "2019", "Feedback in the Lecture Hall, 1950–2000", None),  # Chicago notes-bibliography
    ("Smith J, Lee K. Feedback timing in large lectures. J Teach. 2019;12(3):45-67. doi:10.1234/jot.2019.045",
     ["Smith", "Lee"], "2019", "Feedback timing in large lectures", "10.1234/jot.2019.045"),  # Vancouver
    ('J. Smith and K. Lee, "Feedback timing in large lectures," J. Teach., vol. 12, no. 3, pp. 45–67, 2019.',
     ["Smith", "Lee"], "2019", "Feedback timing in large lectures", None),  # IEEE
    ('Smith, John. "Grading in 1968." Education Review 4, no. 2 (2001): 10–19. Accessed March 3, 2021.',
     ["Smith"], "2001", "Grading in 1968", None),  # access date is no publication year
    ('Smith, John. "Grading Online." Teaching Today, 12 May 2019, www.example.org/grading. Accessed 3 Mar. 2021.',
     ["Smith"], "2019", "Grading Online", None),  # MLA web page
    ("Keller, Ruth: Der Stand der Forschung, Berlin 2015 (Stand: 3. März 2020).",
     ["Keller"], "2015", "Der Stand der Forschung", None),
])
def test_entry_styles_give_author_year_title_and_doi(entry, authors, year, title, doi):
    ref = _one(entry)
    assert (ref.authors, ref.year, ref.title, ref.doi) == (authors, year, title, doi)


@pytest.mark.parametrize("numbering", ["{n}. ", "[{n}] ", "{n}) "])
def test_numbered_entries_in_every_numbering(numbering):
    entries = ["Smith J, Lee K. Feedback timing in large lectures. J Teach. 2019;12(3):45-67.",
               "Okafor C. Peer review in seminars. High Educ. 2021;8:1-9."]
    section = "\n".join(numbering.format(n=i + 1) + e for i, e in enumerate(entries))
    refs = parse_references(section)
    assert [(r.number, r.first_author, r.year) for r in refs] == [(1, "Smith", "2019"), (2, "Okafor", "2021")]


def test_entries_wrapped_over_lines_with_hanging_indents_stay_one_entry():
    section = (""
               "Smith, J., & Lee, K. (2019). Feedback timing in large lectures: A field study\n"
               "    Berlin, Germany: Lecture Press.\n"
               "Okafor, C. (2021). Peer review in seminars. Higher Education,\n"
               "    8, 1–9.\n")
    refs = parse_references(section)
    assert [(r.first_author, r.year) for r in refs] == [("Smith", "2019"), ("Okafor", "2021")]


def test_wrapped_din_entries_split_where_the_next_author_starts():
    section = (""
               "Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918–1933. Eine\n"
               "Rechtsgeschichte, Leipzig 2015.\n"
               "Lorenz, Karl: Die Mietskaserne, Berlin o. J.\n"
               "Brandt, Ilse (Hg.): Wohnungsnot und Inflation 1923,\n"
               "Frankfurt am Main: Campus 2009.\n"
               "Statistisches Bundesamt (Hg.): Wohnen in Deutschland, Wiesbaden\n"
               "2021.\n"
               "Vogt, Hanna: Arbeiterviertel, Hamburg 2016.\n")
    refs = parse_references(section)
    assert [(r.first_author, r.year) for r in refs] == [
        ("Hartung", "2015"), ("Lorenz", "n.d."), ("Brandt", "2009"), ("Statistisches Bundesamt", "2021"),
        ("Vogt", "2016")]


# -- 2. works without a year ----------------------------------------------------------------

UNDATED = ("\n\nLiteratur\n\nLorenz, Karl: Die Mietskaserne als Bauform, Berlin o. J.\n"
           "Pratt, A. (n.d.). Community gardens and urban heat. City Notes.\n"
           "Weiß, Eva: Hofgärten in Berlin, Berlin ohne Jahr.\n")


def test_undated_works_resolve_in_every_spelling():
    body = ("Die Mietskaserne prägte Berlin (Lorenz o. J.). Gardens cool streets (Pratt, n.d.). "
            "Lorenz (o. J.) beschreibt Hinterhöfe. Höfe wurden begrünt (Weiß, ohne Jahr).")
    citations = extract_citations(body + UNDATED)
    assert [c.reference.key if c.reference else c.unresolved_reason for c in citations] == [
        "lorenzn.d.", "prattn.d.", "lorenzn.d.", "weissn.d."]


def test_an_undated_entry_resolves_to_a_source_by_author_and_title():
    citations = extract_citations("Die Mietskaserne prägte Berlin (Lorenz o. J.)." + UNDATED)
    sources = [SourceInfo(id="l", filename="scan.pdf",
                          text="Karl Lorenz\nDie Mietskaserne als Bauform\nVerlag der Bauwelt, Berlin\n..."),
               SourceInfo(id="other", filename="x.pdf", text="Karl Lorenz\nBriefe aus Rom\n1931")]
    resolved = resolve_sources(citations, sources)
    assert (resolved[0].source_id, resolved[0].method) == ("l", "title")


# -- 3. corporate authors ------------------------------------------------------------------

CORPORATE = ("\n\nReferences\n\n"
             "World Health Organization (WHO). (2019). Guidelines on physical activity. WHO Press.\n"
             "Organisation for Economic Co-operation and Development. (2020). Education at a glance 2020. "
             "OECD Publishing.\n"
             "Deutsches Institut für Wirtschaftsforschung [DIW]. (2018). Wochenbericht Mieten. DIW.\n"
             "Statistisches Bundesamt (2021). Wohnen in Deutschland. Wiesbaden.\n"
             "United Nations Environment Programme. 2017. Cooling cities. Nairobi: UNEP.\n")


@pytest.mark.parametrize(("body", "key"), [
    ("Activity helps (WHO, 2019).", "world health organization2019"),
    ("Activity helps (World Health Organization, 2019).", "world health organization2019"),
    ("Activity helps (World Health Organization [WHO], 2019).", "world health organization2019"),
    ("Schools differ (OECD, 2020).", "organisation for economic co-operation and development2020"),
    ("Mieten steigen (DIW, 2018).", "deutsches institut fur wirtschaftsforschung2018"),
    ("Mieten steigen (Deutsches Institut für Wirtschaftsforschung, 2018).",
     "deutsches institut fur wirtschaftsforschung2018"),
    ("Wohnraum ist knapp (Statistisches Bundesamt, 2021).", "statistisches bundesamt2021"),
    ("Cities can be cooled (United Nations Environment Programme, 2017).", "united nations environment programme2017"),
])
def test_corporate_authors_resolve_by_name_and_abbreviation(body, key):
    (citation,) = extract_citations(body + CORPORATE)
    assert citation.reference is not None, citation.unresolved_reason
    assert citation.reference.key == key


def test_a_corporate_author_resolves_to_a_source_naming_it_or_its_abbreviation():
    citations = extract_citations("Activity helps (WHO, 2019). Schools differ (OECD, 2020)." + CORPORATE)
    sources = [SourceInfo(id="who", filename="guidelines.pdf",
                          text="WHO guidelines on physical activity and sedentary behaviour\n"
                               "World Health\nOrganization\nGeneva, 2019"),
               SourceInfo(id="oecd", filename="eag.pdf", text="Education at a Glance 2020\nOECD INDICATORS\n"
                                                             "OECD Publishing, Paris, 2020")]
    resolved = resolve_sources(citations, sources)
    assert [resolved[c.ordinal].source_id for c in citations] == ["who", "oecd"]


# -- 4. footnotes with a full reference, a short title, and ebd. after them --------------------


def test_footnotes_with_full_reference_short_title_and_ebd():
    thesis = ("# Einleitung\n\nDas Gesetz schützte Mieter.[^1] Es galt bis 1933.[^2] Kündigungen blieben selten.[^3] "
              "The lease was renewed.[^4] Rents fell.[^5] Courts agreed.[^6]\n\n"
              "# Literaturverzeichnis\n\n"
              "Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918–1933, Leipzig 2015.\n\n"
              "Hartung, Klaus: Kündigungsschutz im Kaiserreich, Leipzig 2010.\n\n"
              "Miller, Sarah. Tenants and Courts in Weimar Germany. Oxford: Clarendon, 2012.\n\n"
              "[^1]: Vgl. Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918–1933, Leipzig 2015, S. 112.\n"
              "[^2]: Ebd., S. 114.\n"
              "[^3]: Hartung, Mieterschutz, S. 118.\n"
              "[^4]: Sarah Miller, Tenants and Courts in Weimar Germany (Oxford: Clarendon, 2012), 45.\n"
              "[^5]: Ibid., 47.\n"
              "[^6]: Miller, Tenants and Courts, 50.\n")
    citations = extract_citations(extract_document(thesis.encode(), "t.md"))
    assert [c.reference.key if c.reference else c.unresolved_reason for c in citations] == [
        "hartung2015", "hartung2015", "hartung2015", "miller2012", "miller2012", "miller2012"]
    assert [c.kind for c in citations] == ["footnote", "ibid", "footnote", "footnote", "ibid", "footnote"]
    assert citations[0].locator == "S. 112"


def test_a_short_title_that_fits_two_entries_stays_unresolved():
    thesis = ("# Text\n\nDas Gesetz schützte Mieter.[^1]\n\n# Literatur\n\n"
              "Hartung, Klaus: Mieterschutz in Leipzig, Leipzig 2015.\n\n"
              "Hartung, Klaus: Mieterschutz in Dresden, Leipzig 2010.\n\n"
              "[^1]: Hartung, Mieterschutz, S. 118.\n")
    (citation,) = extract_citations(extract_document(thesis.encode(), "t.md"))
    assert citation.reference is None
    assert citation.unresolved_reason.startswith("ambiguous: 2 reference entries")


# -- 6. sources known by metadata or a title line --------------------------------------------

REFS_6 = ("\n\nReferences\n\nOkafor, C. (2021). Peer review in undergraduate seminars. Higher Education, 8, 1–9.\n"
          "Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918–1933, Leipzig 2015.\n")


def test_a_source_known_only_by_docx_core_properties_resolves_by_metadata():
    citations = extract_citations("Peers help (Okafor, 2021)." + REFS_6)
    source = SourceInfo(id="d", filename="manuscript.docx", text="Introduction\nSeminars are small.",
                        metadata={"author": "Chidi Okafor", "title": "Peer review in undergraduate seminars",
                                  "created_year": "2023"})
    assert resolve_sources(citations, [source])[0].source_id == "d"


def test_a_german_source_known_by_its_title_line_resolves():
    citations = extract_citations("Der Schutz wuchs (Hartung 2015)." + REFS_6)
    source = SourceInfo(id="h", filename="scan.pdf",
                        text="MIETERSCHUTZ IN DER WEIMARER REPUBLIK 1918–1933\nEinleitung\nDas Gesetz von 1923 ...")
    resolved = resolve_sources(citations, [source])
    assert (resolved[0].source_id, resolved[0].method) == ("h", "title")


def test_a_source_that_cites_the_work_is_not_the_work():
    citations = extract_citations("Peers help (Okafor, 2021)." + REFS_6)
    citing = SourceInfo(id="c", filename="review.pdf",
                        text="A review of peer assessment\nB. Ndlovu\n2022\nPrior work (Okafor, 2021) found gains.")
    resolved = resolve_sources(citations, [citing])
    assert resolved[0].source_id is None


def test_footnotes_with_lead_in_words_several_sentences_ders_and_wie_anm():
    thesis = ("# Text\n\nDie Mieten stiegen.[^1] Der Schutz wuchs.[^2] Kündigungen waren selten.[^3] "
              "Courts ruled for tenants.[^4]\n\n# Literatur\n\n"
              "Brandt, Ilse (Hg.): Wohnungsnot und Inflation 1923, Frankfurt am Main: Campus 2009.\n\n"
              "Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918–1933, Leipzig 2015.\n\n"
              "Hartung, Klaus: Kündigungsschutz im Kaiserreich, Leipzig 2010.\n\n"
              "Miller, Sarah. Tenants and Courts in Weimar Germany. Oxford: Clarendon, 2012.\n\n"
              "[^1]: Vgl. hierzu ausführlich Brandt 2009, S. 4. Anders Hartung 2015, S. 112.\n"
              "[^2]: Ders., Kündigungsschutz, S. 7.\n"
              "[^3]: Hartung, Mieterschutz (wie Anm. 1), S. 118.\n"
              "[^4]: See, e.g., Miller, 50.\n")
    citations = extract_citations(extract_document(thesis.encode(), "t.md"))
    assert [c.reference.key if c.reference else c.unresolved_reason for c in citations] == [
        "brandt2009", "hartung2015", "hartung2010", "hartung2015", "miller2012"]


def test_a_remark_in_a_footnote_that_names_no_listed_author_is_no_citation():
    thesis = ("# Text\n\nDie Mieten stiegen.[^1]\n\n# Literatur\n\n"
              "Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918–1933, Leipzig 2015.\n\n"
              "[^1]: Gemeint ist hier Berlin, nicht Hamburg.\n")
    assert extract_citations(extract_document(thesis.encode(), "t.md")) == []


# -- real files: a German PDF thesis with footnotes and wrapped DIN entries; sources known
#    only by their PDF /Author and /Title or DOCX core properties ---------------------------


def _pdf_thesis() -> bytes:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.text(25, 40, "Der Mieterschutz wurde 1923 verschärft.\u00b9 Die Wohnungsnot blieb gross.\u00b2")
    pdf.text(25, 47, "Kündigungen waren selten.\u00b3")
    pdf.set_font("helvetica", size=14)
    pdf.text(25, 65, "Literaturverzeichnis")
    pdf.set_font("helvetica", size=11)
    lines = ["Brandt, Ilse (Hg.): Wohnungsnot und Inflation 1923. Studien zur Stadtgeschichte,",
             "Frankfurt am Main: Campus 2009.",
             "Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918-1933. Eine",
             "Rechtsgeschichte, Leipzig 2015.",
             "Lorenz, Karl: Die Mietskaserne als Bauform, Berlin o. J."]
    for i, line in enumerate(lines):
        pdf.text(25, 75 + 6 * i, line)
    pdf.set_font("helvetica", size=8)
    pdf.text(25, 265, "\u00b9 Vgl. Hartung 2015, S. 112.")
    pdf.text(25, 270, "\u00b2 Brandt, Wohnungsnot, S. 4.")
    pdf.text(25, 275, "\u00b3 Lorenz o. J., S. 9.")
    return bytes(pdf.output())


def _metadata_pdf(author: str, title: str) -> bytes:
    from tests.documents import PdfLine, make_pdf

    return make_pdf([[PdfLine("1 Einleitung", size=14, bold=True), PdfLine("Der Text beginnt hier ohne Angaben.")]],
                    metadata={"author": author, "title": title})


def _metadata_docx(author: str, title: str) -> bytes:
    import io

    import docx

    document = docx.Document()
    document.add_paragraph("Kapitel 1")
    document.add_paragraph("Der Text beginnt hier ohne Angaben.")
    document.core_properties.author = author
    document.core_properties.title = title
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _source(source_id: str, data: bytes, filename: str) -> SourceInfo:
    doc = extract_document(data, filename)
    return SourceInfo(id=source_id, filename=filename, text=doc.pages[0].text,
                      metadata={k: v for k, v in doc.metadata.items() if k in ("author", "title", "created_year")})


def test_a_german_pdf_thesis_resolves_to_sources_known_by_their_metadata():
    citations = extract_citations(extract_document(_pdf_thesis(), "arbeit.pdf"))
    assert [c.reference.key if c.reference else c.unresolved_reason for c in citations] == [
        "hartung2015", "brandt2009", "lorenzn.d."]
    sources = [_source("h", _metadata_pdf("Klaus Hartung", "Mieterschutz in der Weimarer Republik 1918-1933"),
                       "scan1.pdf"),
               _source("b", _metadata_docx("Ilse Brandt", "Wohnungsnot und Inflation 1923"), "kapitel.docx"),
               _source("l", _metadata_pdf("Karl Lorenz", "Die Mietskaserne als Bauform"), "scan2.pdf")]
    resolved = resolve_sources(citations, sources)
    assert [resolved[c.ordinal].source_id for c in citations] == ["h", "b", "l"]


def test_entries_by_the_same_authors_as_the_entry_before():
    section = ("Miller, Sarah. 2012. Tenants and Courts. Oxford: Clarendon.\n"
               "———. 2015. Landlords in Court. Oxford: Clarendon.\n"
               "Hartung, Klaus: Mieterschutz in der Weimarer Republik 1918–1933, Leipzig 2015.\n"
               "Ders.: Kündigungsschutz im Kaiserreich, Leipzig 2010.\n"
               "Vogt, Hanna 2016: Berlin 1936. Leipzig: Junius.\n")
    assert [(r.key, r.title) for r in parse_references(section)] == [
        ("miller2012", "Tenants and Courts"), ("miller2015", "Landlords in Court"),
        ("hartung2015", "Mieterschutz in der Weimarer Republik 1918–1933"),
        ("hartung2010", "Kündigungsschutz im Kaiserreich"), ("vogt2016", "Berlin 1936")]


def test_a_corporate_author_cited_narratively_by_its_whole_name():
    (citation,) = extract_citations("The World Health Organization (2019) recommends daily activity." + CORPORATE)
    assert citation.reference.key == "world health organization2019"
    assert citation.marker == "World Health Organization (2019)"
    (citation,) = extract_citations("Laut Statistisches Bundesamt (2021) ist Wohnraum knapp." + CORPORATE)
    assert citation.reference.key == "statistisches bundesamt2021"
    assert citation.claim == "ist Wohnraum knapp."


def test_wrapped_lines_without_indents_in_a_year_first_list():
    section = ("Smith, J. (2019) Feedback in lectures. 2nd edn.\n"
               "London, Routledge.\n"
               "Okafor, C., Lee, K., Roe, A., Doe, B.,\n"
               "Moe, C., & Zoe, E. (2021). Peer review in seminars. Higher Education, 8, 1–9.\n"
               "Vogt, H. (2016). Arbeiterviertel. Hamburg: Junius.\n")
    refs = parse_references(section)
    assert [(r.first_author, r.year, len(r.authors)) for r in refs] == [
        ("Smith", "2019", 1), ("Okafor", "2021", 6), ("Vogt", "2016", 1)]


def test_footnotes_citing_corporate_authors():
    thesis = ("# Text\n\nWohnraum ist knapp.[^1] Activity helps.[^2] Mieten steigen.[^3]\n\n# Literatur\n\n"
              "Statistisches Bundesamt (Hg.): Wohnen in Deutschland, Wiesbaden 2021.\n\n"
              "World Health Organization (WHO): Guidelines on physical activity, Geneva 2019.\n\n"
              "Deutsches Institut für Wirtschaftsforschung [DIW]: Wochenbericht Mieten, Berlin 2018.\n\n"
              "[^1]: Vgl. Statistisches Bundesamt (Hg.): Wohnen in Deutschland, Wiesbaden 2021, S. 4.\n"
              "[^2]: WHO 2019, S. 12.\n"
              "[^3]: Vgl. Deutsches Institut für Wirtschaftsforschung 2018, S. 3.\n")
    citations = extract_citations(extract_document(thesis.encode(), "t.md"))
    assert [c.reference.key if c.reference else c.unresolved_reason for c in citations] == [
        "statistisches bundesamt2021", "world health organization2019", "deutsches institut fur wirtschaftsforschung2018"]


def test_an_entry_cut_by_a_page_break_keeps_the_next_entry_whole():
    thesis = ("Heat kills (Nakamura, 2020). Homes are safe (Lee, 2019).\n\nReferences\n\n"
              "Lee, K. (2019). Where people die in heat waves.\n\n"
              "Public Health Notes, 3, 1-9.\nNakamura, Y. (2020). Heat waves and excess\nmortality. Working notes, 7.\n")
    citations = extract_citations(thesis)
    assert [(c.reference.key, c.reference.title) for c in citations] == [
        ("nakamura2020", "Heat waves and excess mortality"), ("lee2019", "Where people die in heat waves")]


def test_ders_without_a_citation_before_stays_unresolved_with_its_reason():
    thesis = ("# Text\n\nDer Schutz wuchs.[^1]\n\n# Literatur\n\n"
              "Hartung, Klaus: Kündigungsschutz im Kaiserreich, Leipzig 2010.\n\n"
              "[^1]: Ders., Kündigungsschutz, S. 7.\n")
    (citation,) = extract_citations(extract_document(thesis.encode(), "t.md"))
    assert citation.reference is None
    assert citation.unresolved_reason == "no reference entry for 'Ders., Kündigungsschutz'"
