"""Find cited claims in a thesis and resolve them to references and sources.

Three steps, each pure, working from a reader's `Document` (analysis/pipeline/documents/document.py):

1. The reference list is what follows the last heading that names one, in English or
   German and in any heading syntax: References, Bibliography, Works Cited, Literature,
   Reference List, Sources, Literaturverzeichnis, Literatur, Quellenverzeichnis, Quellen
   (``## References``, ``7 References``, ``7. Literatur``, ``REFERENCES:``). Its entries
   are numeric (``[n] ...`` or ``n. ...``) or author–year; they never become citations.
2. `extract_citations` finds every citation in the body paragraphs (headings are never
   part of a claim):

   * author–year (APA 7, Harvard), parenthetical ``(Müller, 2019)`` and narrative
     ``Smith (2020)``; several works in one parenthesis ``(Smith et al., 2020; Lee 2018)``;
     several years ``(Lee, 2018, 2019a)``; locators ``p.``/``pp.``/``S.``/``Kap.`` and
     ``: 12``; ``et al.``/``u. a.``; ``&``/``and``/``und``; year suffixes ``2020a``;
     ``n.d.``/``o. J.``; prefixes ``see``, ``see also``, ``cf.``, ``e.g.``, ``vgl.``,
     ``siehe``, ``z. B.``; ``ebd.``/``ibid.`` (with or without a locator), which cite the
     work of the citation before;
   * numeric (IEEE, Vancouver): ``[1]``, ``[1, 3]``, ``[2–5]``, ``[2-5]``;
   * footnotes: the sentence carrying the mark ``[^n]`` is the claim, and the footnote
     holds an author–year (``Vgl. Müller 2019, S. 12.``), a full reference, or ``Ebd.``.

   The claim is the clause the citation supports with every marker removed. A sentence
   whose citations support different clauses ("X rose (A, 2020), whereas Y fell (B,
   2019)") gives each citation its own clause. A narrative citation's reporting frame is
   dropped when it only frames the content ("According to Castillo (2018), …",
   "Castillo (2018) found that …", "Laut Müller (2019) …", "Müller (2019) zeigt, dass
   …"); otherwise the name stays and only the year goes ("Castillo measured …").
3. `resolve_sources` ties references to uploaded sources: by DOI; by first author and
   year on the source's first pages; by title where two works of one author and year
   (2020a/2020b) both fit; by the source's own metadata (PDF /Author, /Title); by title
   similarity. Ambiguity is never guessed: the citation stays unresolved with the reason.

One module per step: ``patterns`` (the shared vocabulary of citation forms), ``models``,
``references`` (the reference list), ``markers`` (citations in the body), ``claims``,
``resolution`` (markers to references), ``matching`` (references to uploaded sources),
``names``, and ``extract`` (the entry points). This package is their public face.
"""

from analysis.pipeline.citations.extract import extract_citations, find_reference_section, parse_references
from analysis.pipeline.citations.patterns import MAX_RANGE
from analysis.pipeline.citations.models import (Citation, Reference, SourceInfo, SourceMatch, find_doi,
                                                is_valid_doi, normalize_doi)
from analysis.pipeline.citations.resolution import match_sources, resolve_sources

__all__ = [
    "MAX_RANGE", "Citation", "Reference", "SourceInfo", "SourceMatch", "extract_citations", "find_doi",
    "find_reference_section", "is_valid_doi", "match_sources", "normalize_doi", "parse_references",
    "resolve_sources",
]
