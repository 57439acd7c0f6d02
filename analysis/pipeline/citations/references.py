"""The reference list: entries (numeric or author-year), their authors, year, title and DOI.
"""

from __future__ import annotations


import re

from analysis.pipeline.citations.models import Reference, find_doi
from analysis.pipeline.citations.names import name_key, squash, strip_particles
from analysis.pipeline.citations.patterns import (AUTHOR_YEAR_START, DOI_IN_TEXT, INITIALS_SURNAME, IN_PRESS,
    LONG_NAME, NAME, NO_DATE, SURNAME_INITIALS, VANCOUVER, VANCOUVER_NAME, WORD, YEAR, YEAR_IN_TEXT)

# An entry by the authors of the entry before: "———. 2019. Title." (Chicago), "Ders.: Titel" (German).
SAME_AUTHORS_ENTRY = re.compile(r"^\s*(?:[—–_-]\s*){2,}\.?,?\s*|^\s*(?:Ders|Dies|Dieselbe|Derselbe|Dieselben)\.\s*")


def same_authors(refs: list[Reference]) -> list[Reference]:
    out: list[Reference] = []
    for ref in refs:
        if out and SAME_AUTHORS_ENTRY.match(ref.raw) and out[-1].authors:
            before = out[-1]
            ref = ref.model_copy(update={"authors": before.authors, "aliases": before.aliases,
                                         "key": f"{name_key(before.authors[0])}{ref.year or ''}"})
        out.append(ref)
    return out


def numeric_references(section: str, pattern: re.Pattern) -> list[Reference]:
    parts = pattern.split(section)
    refs = []
    for number, body in zip(parts[1::2], parts[2::2]):
        entry = squash(body)
        ref = parse_entry(entry)
        refs.append(ref.model_copy(update={"key": f"[{int(number)}]", "number": int(number)}))
    return refs


def unique_keys(refs: list[Reference]) -> list[Reference]:
    """Two "Smith 2020" entries get keys smith2020 and smith2020#2."""
    seen: dict[str, int] = {}
    out = []
    for ref in refs:
        seen[ref.key] = seen.get(ref.key, 0) + 1
        out.append(ref if seen[ref.key] == 1 else ref.model_copy(update={"key": f"{ref.key}#{seen[ref.key]}"}))
    return out


def author_year_entries(section: str) -> list[str]:
    """Group wrapped lines into entries: a new entry starts with "Surname, X." once the
    entry before is complete (it carries its publication year); a line holding a whole
    entry (one paragraph) is one. A line indented deeper than its entry's first line (a
    hanging indent) continues that entry."""
    entries: list[str] = []
    indent = 0
    lines = [line for line in section.splitlines() if line.strip() and not _PAGE_NUMBER_LINE.match(line)]
    # A list whose entries mostly put the year right after the names (APA, Harvard): there
    # a line starting "Berlin, Springer." continues an entry; only a line with names and
    # year, or with names alone (a long author list wrapped), starts one.
    year_first = sum(looks_whole(line) for line in lines) >= max(2, len(lines) // 4)
    for line in lines:
        depth = len(line) - len(line.lstrip())
        complete = not entries or _complete(entries[-1])
        starts_entry = depth <= indent or not entries
        starts_entry = starts_entry and (bool(AUTHOR_YEAR_START.match(line) or SAME_AUTHORS_ENTRY.match(line))
                                         or corporate_start(line) or (complete and _undated_whole(line)) or (
            bool(YEAR_IN_TEXT.search(line)) and len(line.split()) >= 6 and bool(re.match(r"\s*[A-ZÄÖÜ]", line))
            and complete and looks_whole(line)))
        if starts_entry and year_first and not (looks_whole(line) or SAME_AUTHORS_ENTRY.match(line)
                                                or NAMES_COLON_START.match(line) or corporate_start(line)
                                                or (complete and _FULL_NAME_START.match(line)
                                                    and YEAR_IN_TEXT.search(line))):
            starts_entry = (not YEAR_IN_TEXT.search(line) and re.search(r"(?:[,&]|\b(?:and|und))\s*$", line)
                            is not None and _names_only(line))
        if starts_entry and complete:
            entries.append(line.strip())
            indent = depth
        elif entries:
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
            indent = depth
    return [squash(e) for e in entries]


# "Lafleur, Marianne. \"Title.\" Journal, 2020": an MLA or Chicago entry (a given name written
# out, a full stop) among APA ones, its year at the end.
_FULL_NAME_START = re.compile(r"^\s*[A-ZÄÖÜ][\w'’-]+(?:[\s-][A-ZÄÖÜ][\w'’-]+)?,\s+[A-ZÄÖÜ][a-zäöüß]{2,}"
                              r"(?:\s+[A-ZÄÖÜ]\.)?(?:,?\s+(?:and|und)\s+[^.]{3,60})?\.\s+\S")

# "Hartung, Klaus: Titel …", "Brandt, Ilse (Hg.): …" — German entries, the year at the end.
NAMES_COLON_START = re.compile(
    r"^\s*[A-ZÄÖÜ][\w'’-]+(?:\s+[A-ZÄÖÜ][\w'’-]+)?,\s+(?:[A-ZÄÖÜ][\w'’-]+|[A-ZÄÖÜ]\.)(?:[\s-]+(?:[A-ZÄÖÜ][\w'’-]+|[A-ZÄÖÜ]\.))*"
    r"(?:\s*(?:/|;|u\.|und)\s*[A-ZÄÖÜ][^:]{0,80})?(?:\s*\((?:Hg|Hrsg|Ed|Eds)\.\))?:\s")


def _complete(entry: str) -> bool:
    """An entry carries its publication year (a year of a range in a title does not count)
    and ends like one: a full stop, a bracket, a number, a DOI or a link (not "Inflation 1923,")."""
    if not re.search(r"(?:[.)\]]|\d|https?://\S+|doi:\s*\S+)\s*$", entry):
        return False
    plain = re.sub(r"(?i)(?:https?://|doi:\s*)\S+", " ", entry)
    return publication_year(plain)[0] is not None


def corporate_start(line: str) -> bool:
    """"World Health Organization (WHO): Guidelines …", "Statistisches Bundesamt (Hg.): …":
    a body's name, a colon and a title (a place and its publisher, "Frankfurt am Main:
    Campus 2009.", is too short to be one)."""
    head, colon, rest = line.strip().partition(": ")
    if not colon and line.rstrip().endswith(":"):
        # the title wrapped to the next line: "LAWINENWARNDIENST ALPENLAND (Hrsg.):" — a body
        # named as editor, or in DIN's capitals, is no place
        head = line.strip()[:-1]
        return len(head) < 120 and (re.search(r"\((?:Hrsg|Hg|Ed|Eds)\.\)\s*$", head) is not None
                                    or (head.isupper() and len(head.split()) >= 2)) and _names_only(head)
    return bool(colon) and len(head) < 120 and re.match(r"[A-ZÄÖÜ]", head) is not None\
        and (len(head.split()) >= 2 or re.search(r"[\[(]", head) is not None)\
        and len(rest.split()) >= 4 and _names_only(head)


_PAGE_NUMBER_LINE = re.compile(r"^\s*\d{1,4}\s*$")
_UNDATED_END = re.compile(r"(?:\bo\.\s?J\.|\bn\.\s?d\.|\bohne\s+Jahr)\s*\.?\s*$", re.I)


def _undated_whole(line: str) -> bool:
    """An undated entry on one line whose author is a body ("Stadtbibliothek Lindenau.
    Jahresbericht 2022. Lindenau, o. J."): names, a full stop, and an undated end."""
    head = line.strip().split(". ", 1)[0]
    return bool(_UNDATED_END.search(line)) and re.match(r"[A-ZÄÖÜ]", head) is not None\
        and len(head.split()) <= 8 and _names_only(head)


def looks_whole(line: str) -> bool:
    """A corporate-author entry on one line: "World Health Organization (WHO). (2020). Title. …"."""
    if not re.match(r"\s*[A-ZÄÖÜ]", line):
        return False
    year, after_names = publication_year(line)
    return after_names and year is not None and year.start() < 200


def parse_entry(entry: str) -> Reference:
    """Author(s), publication year, title and DOI of one entry, in any common style.

    The publication year is the one right after the names (APA, Harvard, author-date:
    ``Smith, J. (2019).``, ``Smith, John. 2019.``); otherwise the last year of the entry
    (after the place in German humanities entries, ``Leipzig 2015``; at the end in IEEE,
    MLA and notes-bibliography entries), never a year of a range (``1918–1933``), a year
    inside a quoted title, a page or volume number, or an access date.
    """
    doi = find_doi(entry)
    plain = DOI_IN_TEXT.sub(" ", re.sub(r"(?i)(?:https?://|doi:\s*)\S+", " ", entry))
    year_match, author_date = publication_year(plain)
    year = year_of(year_match.group(1)) if year_match else None
    segment = plain[: year_match.start()] if author_date else plain[: _author_end(plain, year_match)]
    authors = _surnames(segment)
    key = f"{name_key(authors[0]) if authors else 'anon'}{year or ''}"
    return Reference(key=key, authors=authors, aliases=_aliases(segment, authors), year=year,
                     title=_title(plain, year_match, author_date), doi=doi, raw=entry)


_PUB_YEAR = re.compile(rf"(?<![\w./–—-])\(?({YEAR})(?![\w/]|\s*[–—-]\s*\d)\)?")
# A page, volume or issue number, or an access date, is no publication year. ("S." and
# "p." are left out: before a year they are far more often initials than pages.)
_NOT_PUB_BEFORE = re.compile(
    r"(?:\b(?:pp|[Vv]ol|Bd|Nr|[Nn]o|Heft|Jg|Jahrg|ISBN|ISSN)\.?\s*"
    r"|(?i:\b(?:accessed|retrieved|cited|viewed|zugriff|zugegriffen|abgerufen|aufgerufen|zuletzt"
    r"|stand\s*(?::|vom\b|am\b)))[^;]{0,30})$")
_ABBREVIATIONS = frozenset("al hg hrsg ed eds jr sr co inc ltd red bearb mitarb übers trans dr prof st".split())
_NAME_WORDS = frozenset("""and und & et al of for the für de da di du la le van von der den zu ten ter y e on in
    u a hg hrsg ed eds""".split())


def publication_year(plain: str) -> tuple[re.Match | None, bool]:
    """(the publication year's match, whether it stands right after the names)."""
    quoted = [m.span() for m in re.finditer(r"[\"“„][^\"“”„]{3,300}[\"”“]", plain)]
    candidates = [m for m in _PUB_YEAR.finditer(plain)
                  if not any(a <= m.start() < b for a, b in quoted)
                  and not _NOT_PUB_BEFORE.search(plain[max(0, m.start() - 40):m.start()])]
    if not candidates:
        return None, False
    if _only_names_before(plain, candidates[0]):
        return candidates[0], True
    return candidates[-1], False


def _only_names_before(plain: str, year: re.Match) -> bool:
    """True if only author names stand before `year` ("Smith, J., & Lee, K. (2019)",
    "World Health Organization (WHO). 2019."), not a title or a place."""
    before = plain[: year.start()]
    paren = year.group(0).startswith("(")
    core = before.rstrip()
    separated = paren or core.endswith((".", ",", ")", "]"))
    colon_after = plain[year.end():year.end() + 2].lstrip().startswith(":")
    if not separated and not colon_after and ("," in core.rstrip(".,") or len(core.split()) > 6):
        return False
    return _names_only(core)


def _names_only(text: str) -> bool:
    """True if `text` holds author names and nothing else: no title, place or publisher."""
    core = text.strip().rstrip(".,&").strip()
    if not core or len(core) > 250 or re.search(r"[:\"“„”?!]", core):
        return False
    for word in re.finditer(r"([\w'’-]+)\.\s", core + " "):
        if len(word.group(1)) >= 2 and word.group(1).casefold() not in _ABBREVIATIONS:
            return False  # "Hartung, Klaus. Die Krise 1923" — a title after the names
    lower = [w for w in re.findall(r"[\w'’-]+", core) if w[0].islower() and w.casefold() not in _NAME_WORDS]
    return len(lower) <= 2


def _author_end(plain: str, year_match: re.Match | None) -> int:
    """Where the names of an entry end when the year does not follow them: at a quoted
    title (IEEE, MLA), a colon (German ``Hartung, Klaus: Titel``), or the first full stop
    after a name that is no initial (``Smith, John. Title.``)."""
    ends = [year_match.start()] if year_match else [min(len(plain), 120)]
    quote = re.search(r"[\"“„]", plain)
    if quote:
        ends.append(quote.start())
    colon = re.search(r":\s", plain)
    if colon:
        ends.append(colon.start())
    for stop in re.finditer(r"([\w'’-]+)\.(?=\s)", plain):
        word = stop.group(1)
        if len(word) >= 2 and word.casefold() not in _ABBREVIATIONS and not word.isupper():
            ends.append(stop.start(1) + len(word))
            break
    return min(ends)


def year_of(text: str) -> str:
    """"2019a" stays; every spelling of "no date" (n.d., o. J.) is "n.d."."""
    text = text.strip("() ")
    if re.fullmatch(IN_PRESS, text):
        return "in press"
    return "n.d." if re.fullmatch(NO_DATE, text) else text


_GIVEN = re.compile(r"(?:[A-ZÄÖÜ][\w'’-]+|[A-ZÄÖÜ]\.(?:-[A-ZÄÖÜ]\.)?)"
                    r"(?:\s+(?:[A-ZÄÖÜ][\w'’-]+|[A-ZÄÖÜ]\.(?:-[A-ZÄÖÜ]\.)?|van|von|de|der|den|da|di|du|le|la|zu|ten|ter))*")
_EDITOR = re.compile(r"\((?:Hg|Hrsg|eds?|Eds?|Red)\.?\)|,?\s*\b(?:Hg|Hrsg|eds?|Eds?)\.(?=\s|$|[,:;])")


def _surnames(segment: str) -> list[str]:
    names = [m.group(1) for m in SURNAME_INITIALS.finditer(segment)]
    if not names:
        names = _vancouver_names(segment)
    if not names:
        names = [m.group(1) for m in INITIALS_SURNAME.finditer(segment)]
    if not names:
        names = _full_names(segment)
    if not names:
        names = _corporate_name(segment)
    return [strip_particles(n) for n in names]


def _full_names(segment: str) -> list[str]:
    """Given names written out: "Smith, John, and Kim Lee" (MLA, Chicago), "Seidel,
    Otto/Winter, Paula" or "Hartung, Klaus (Hg.)" (German)."""
    cleaned = _EDITOR.sub(" ", segment)
    cleaned = re.sub(r"\s+(?:et\s+al\.?|u\.\s?a\.)", " ", cleaned)
    parts = [p.strip(" .") for p in re.split(r"\s*[,;/]\s*(?:(?:and|und|&)\s+)?|\s+(?:and|und|&)\s+", cleaned)]
    parts = [p for p in parts if p]
    if len(parts) < 2 or not re.fullmatch(NAME, parts[0]) or not _GIVEN.fullmatch(parts[1]):
        return []
    names, i = [parts[0]], 2
    while i < len(parts):
        part = parts[i]
        if re.fullmatch(NAME, part) and i + 1 < len(parts) and _GIVEN.fullmatch(parts[i + 1])\
                and len(parts[i + 1].split()) == 1:
            names.append(part)  # "Winter, Paula"
            i += 2
        elif _GIVEN.fullmatch(part) and len(part.split()) >= 2:
            names.append(part.split()[-1])  # "Kim Lee"
            i += 1
        else:
            break
    return names


def _corporate_name(segment: str) -> list[str]:
    """A body as author: "World Health Organization (WHO)", "Deutsches Institut für
    Wirtschaftsforschung [DIW]", "OECD" — the whole name, without its abbreviation."""
    text = re.sub(r"\s*[\[(][^\])]{1,20}[\])]", " ", segment).strip(" .,(")
    whole = re.fullmatch(rf"{NAME}(?:\s+(?:{WORD}|of|for|and|on|the|für|und|des|der|die|de|du|la))*", squash(text))
    if whole and len(whole.group(0).split()) <= 10:
        return [whole.group(0)]
    first = re.search(LONG_NAME + r"(?=[\s.,(]|$)", segment.strip(" .,("))
    return [first.group(0)] if first else []


def _aliases(segment: str, authors: list[str]) -> list[str]:
    """Other names of a corporate first author: its abbreviation as written ("(WHO)",
    "[DIW]") and the one its capitals spell ("Organisation for Economic Co-operation and
    Development" → "OECD")."""
    if not authors or len(authors[0].split()) < 2:
        return []
    out = [m.group(1) for m in re.finditer(r"[\[(]([A-ZÄÖÜ][\wÄÖÜäöü&-]{1,15})[\])]", segment)
           if not re.fullmatch(r"(?:Hg|Hrsg|Eds?|Red)", m.group(1))]
    acronym = acronym_of(authors[0])
    if acronym and acronym not in out:
        out.append(acronym)
    return out


def acronym_of(name: str) -> str | None:
    """The capitals of a name of several words: "World Health Organization" → "WHO"."""
    words = name.split()
    if len(words) < 2:
        return None
    letters = "".join(piece[0] for w in words for piece in w.split("-") if piece and piece[0].isupper())
    return letters if len(letters) >= 2 else None


def _vancouver_names(segment: str) -> list[str]:
    """Vancouver: "Castillo R, Feld AB, Moreau J. Title. …" (initials without dots)."""
    head = segment.split(". ")[0]
    if not VANCOUVER.match(head):
        return []
    return [m.group(1) for m in VANCOUVER_NAME.finditer(head)]


def _title(entry: str, year_match: re.Match | None, author_date: bool) -> str | None:
    quoted = re.search(r"[\"“„](.{6,300}?)[,.]?[\"”“]", entry)
    if quoted:
        return quoted.group(1).strip(" ,.")
    # Harvard's single quotes: "(2021) 'Title', Journal"; an apostrophe inside a word
    # ("Children's") is followed by a letter, so it ends no title.
    quoted = re.search(r"(?:^|(?<=[\s(]))['‘](?=\S)(.{6,300}?)[,.]?['’](?=[,.;:]?(?:\s|$))", entry)
    if quoted:
        return quoted.group(1).strip(" ,.")
    if VANCOUVER.match(entry.split(". ")[0]) and entry.count(". ") >= 1:
        return entry.split(". ")[1].strip(" .") or None
    if author_date and year_match is not None:
        after = entry[year_match.end():]
        if year_match.group(0).startswith("(") and not year_match.group(0).endswith(")"):
            after = after[after.find(")") + 1:] if ")" in after[:40] else after  # "(2019, March 3)"
        after = _TITLE_TAIL.split(after.lstrip(" ).,:"))[0]
        # The title runs to the first full stop that is followed by a capital (the venue).
        end = re.search(r"[.?!](?=\s+[A-ZÄÖÜ]|\s*$)", after)
        return after[: end.start() if end else len(after)].strip() or None
    start = _author_end(entry, year_match)
    if year_match is not None and year_match.start() <= start:
        return None
    region = entry[start:year_match.start() if year_match else len(entry)].lstrip(" .:,")
    region = _TITLE_TAIL.split(region)[0]
    end = re.search(r"[.?!](?=\s+[A-ZÄÖÜ])", region)
    if end:
        title = region[: end.start()]
    elif year_match is not None and "," in region:
        title = region[: region.rfind(",")]  # "Titel, Leipzig 2015", "Titel, Frankfurt: Campus 2009"
    else:
        title = region
    title = title.strip(" .,:")
    return title or None


# What follows a title: a collection it appears in ("Titel, in: Sammelband"), its editor
# or translator ("hg. v.", "edited by"), its edition ("5. Aufl.", "2nd ed.").
_TITLE_TAIL = re.compile(
    r"[,.]\s+(?:in|In)\s*:\s|[,.]\s+(?:hg\.|hrsg\.|Hg\.|Hrsg\.|ed\.\s+by|edited\s+by|übers\.|trans\.|translated\s+by)\s"
    r"|[,.]?\s*\d+\.?\s*(?:(?:überarb|erw|aktual|neu\s+bearb)\.?\s*(?:und\s+)?)*(?:Aufl(?:age)?\.?|Ed\.|ed\.|edn\.?)(?=\s|,|$)"
    r"|[,.]?\s*\d+(?:st|nd|rd|th)\s+(?:ed|edn|edition)\b")
