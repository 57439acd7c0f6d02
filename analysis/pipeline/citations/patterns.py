"""The vocabulary of citation forms: names, years, locators, prefixes, markers and frames.
"""

from __future__ import annotations


import re

# Ranges like [1-9999] are typos or not citations; cap what one group expands to.
MAX_RANGE = 50

PARTICLE = r"(?:(?:van|von|de|der|den|da|di|du|le|la|zu|ten|ter)\s+)"
WORD = r"[A-ZÄÖÜ](?:[\w-]|['’](?!s\b))+"  # "O'Brien", not "Castillo's"
NAME = PARTICLE + rf"*{WORD}"
# "World Health Organization"; "Verband urbaner Lieferdienste" (a German adjective before a capitalised word)
LONG_NAME = NAME + (rf"(?:\s+(?:{WORD}|of|for|and|on|in|the|für|und|der|des|zur|zum"
                      rf"|[a-zäöüß]{{2,}}(?:er|en|es|e)(?=\s+[A-ZÄÖÜ]))){{0,6}}?")
NO_DATE = r"n\.\s?d\.|o\.\s?J\.|o\.\s?D\.|ohne\s+Jahr"
IN_PRESS = r"in\s+press|im\s+Druck"
YEAR = rf"(?:(?:19|20)\d{{2}}[a-z]?|{NO_DATE}|{IN_PRESS})"
ET_AL = r"(?:\s+(?:et\s+al\.?|u\.\s?a\.))"
LOCATOR = (r"(?:(?:p|pp|S|Kap|ch|chap|para|Abs|Rn|Tab|Fig)\.\s*\d+(?:\s*[–-]\s*\d+)?(?:\s*ff?\.)?"
            r"|:\s*\d+(?:\s*[–-]\s*\d+)?|\d{1,3}(?:\s*[–-]\s*\d{1,3})?(?![\d.]))")
PREFIX = r"(?:(?:see\s+also|see|cf\.|e\.\s?g\.,?|i\.\s?e\.,?|vgl\.(?:\s+auch)?|siehe(?:\s+auch)?|z\.\s?B\.)\s+)"
AUTHORS = (
    rf"{LONG_NAME}(?:\s*\[[A-ZÄÖÜ][\w&-]{{1,15}}\])?{ET_AL}?"  # "World Health Organization [WHO]"
    rf"|{NAME}(?:,\s*{NAME})*,?\s+(?:&|and|und)\s+{NAME}{ET_AL}?"
    rf"|{NAME}(?:\s*/\s*{NAME})+"
)
# "2019a, b": the letters after the first year name more works of that year.
# "Sennhauser (a. a. O.: 47)", "(Mayer, op. cit., p. 3)": the author's work cited before, no year
SAME_WORK = r"(?:a\.\s?a\.\s?O\.|op\.\s?cit\.|loc\.\s?cit\.)"
YEARS = rf"(?:{YEAR}(?:,\s*(?:{YEAR}|[a-z](?![\w.])))*|{SAME_WORK})"
# A remark after the citation: "(see Smith, 2020, for a review)".
_REMARK = r"(?:,?\s+(?:for|on|esp\.|especially|insbesondere|zur|zum|für|mit)\b[^;()]{0,80})?"
PAREN_ITEM = re.compile(
    rf"(?i:{PREFIX})?"
    rf"(?P<marker>(?P<authors>{AUTHORS}),?\s+(?P<years>{YEARS})(?:,?\s*(?P<locator>{LOCATOR}))?){_REMARK}"
)
IBID = re.compile(rf"(?P<marker>(?:ebd|ebenda|ibid|ibidem)\.?(?:,?\s*(?P<locator>{LOCATOR}))?)", re.I)
CITED_IN = re.compile(r"(?i),?\s*(?:as\s+cited\s+in|cited\s+in|quoted\s+in|zitiert\s+nach|zit\.\s+nach|"
                       r"nach)\s+(?=[A-ZÄÖÜ])")
PAREN_GROUP = re.compile(r"\(([^()]{3,400})\)")
NARRATIVE = re.compile(
    rf"(?<![\w'’-])(?P<authors>{NAME}{ET_AL}?|{NAME}\s+(?:and|&|und)\s+{NAME}{ET_AL}?"
    rf"|{NAME}(?:\s*/\s*{NAME})+)(?:['’]s?)?"
    rf"\s+\((?P<years>{YEARS})(?:,?\s*(?P<locator>{LOCATOR}))?\)"
)
NUM_ITEM = r"\d{1,4}(?:\s*[–—-]\s*\d{1,4})?"
NUMERIC = re.compile(rf"\[(?P<items>{NUM_ITEM}(?:\s*[,;]\s*{NUM_ITEM})*)"
                      rf"(?:,\s*(?P<locator>(?:p|pp|S|ch|Kap)\.\s*\d+(?:\s*[–-]\s*\d+)?))?\]"
                      rf"(?:\s*[–—-]\s*\[(?P<upto>\d{{1,4}})\])?")
# Capitalised words that can stand before "(2020)" without being an author.
NOT_AUTHORS = frozenset(
    """In The Since During Until From Table Figure Fig Tab Im Seit Bis Nach Laut According See Vgl Cf This These
    Dies Diese Before After As Stand Version Circa Ca Spring Summer Autumn Fall Winter Frühjahr Frühling Sommer
    Herbst January February March April May June July August September October November December Januar Februar
    März Mai Juni Juli Oktober Dezember Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Okt Dez""".split())

NUMERIC_ENTRY = re.compile(r"(?m)^[ \t]*\[(\d{1,4})\][ \t]*")
DOTTED_ENTRY = re.compile(r"(?m)^[ \t]*(\d{1,4})\.[ \t]+(?=\S)")
PAREN_NUMBER_ENTRY = re.compile(r"(?m)^[ \t]*(\d{1,4})\)[ \t]+(?=\S)")
AUTHOR_YEAR_START = re.compile(
    rf"^\s*{NAME}(?:\s[A-ZÄÖÜ][\w'’-]+)?,\s+(?:[A-ZÄÖÜ]\.|[A-ZÄÖÜ][a-zäöüß]+)"
)
DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/[^\s\"<>]+")
YEAR_IN_TEXT = re.compile(rf"(?<![\w.])({YEAR})(?!\w)")
SURNAME_INITIALS = re.compile(rf"({NAME}),\s+(?:[A-ZÄÖÜ]\.[\s-]?)+")
INITIALS_SURNAME = re.compile(rf"(?:[A-ZÄÖÜ]\.\s?)+\s*({NAME})")
VANCOUVER = re.compile(rf"^\s*{NAME}\s+[A-ZÄÖÜ]{{1,3}}(?:,\s*{NAME}\s+[A-ZÄÖÜ]{{1,3}})*(?:,?\s*et\s+al)?\s*$")
VANCOUVER_NAME = re.compile(rf"({NAME})\s+[A-ZÄÖÜ]{{1,3}}\b")
STOP = frozenset(
    """a an the of and or in on for to with by from at as is are was were be this that
    its their der die das und oder in im von zu mit für auf ein eine einer des den""".split()
)
_REPORTING = (
    r"(?:found|find|finds|showed|shows|show|shown|reported|reports|report|demonstrated|demonstrates|demonstrate"
    r"|argued|argues|argue|stated|states|state|noted|notes|note|observed|observes|observe|concluded|concludes"
    r"|conclude|suggested|suggests|suggest|claimed|claims|claim|indicated|indicates|indicate|estimated"
    r"|estimates|estimate|confirmed|confirms|confirm|established|establishes|proposed|proposes|explained"
    r"|explains|pointed\s+out|points\s+out|emphasi[sz]ed|emphasi[sz]es|highlighted|highlights|documented"
    r"|documents|wrote|writes|holds|held|revealed|reveals|determined|determines"
    r"|zeigt|zeigen|zeigte|zeigten|fand|fanden|findet|finden|berichtet|berichten|berichtete|berichteten"
    r"|stellt\s+fest|stellen\s+fest|stellte\s+fest|stellten\s+fest|argumentiert|argumentieren|belegt|belegen"
    r"|belegte|betont|betonen|weist\s+nach|wiesen\s+nach|wies\s+nach|kommt\s+zu\s+dem\s+(?:Schluss|Ergebnis)"
    r"|kam\s+zu\s+dem\s+(?:Schluss|Ergebnis)|schreibt|schreiben|beschreibt|beschreiben|erklärt|erklären"
    r"|schätzt|schätzen|bestätigt|bestätigen)"
)
FRAME_BEFORE = re.compile(
    r"(?i)(?:^|(?<=[\s,;(]))(?:according\s+to|as\s+(?:reported|shown|noted|argued|described|found|"
    r"demonstrated)\s+by|laut|nach|gemäß|zufolge)\s*$")
FRAME_AFTER = re.compile(
    rf"^\s*,?\s*(?:(?:also|further|furthermore|similarly|recently|likewise|auch|zudem|ebenfalls|außerdem"
    rf"|bereits|schon)\s+)?{_REPORTING}\s*(?:,\s*)?(?:that|dass|daß)\b\s*,?\s*")
FRAME_ZUFOLGE = re.compile(r"^\s*zufolge\s*,?\s*", re.I)
SPLIT_AFTER = re.compile(
    r"^\s*(?:[,;:]|(?:whereas|while|whilst|but|although|though|however|während|wohingegen|aber|jedoch"
    r"|doch|obwohl|sondern)\b)", re.I)
BOUNDARY_BEFORE = re.compile(
    r"(?:[,;:]|\b(?:whereas|while|whilst|but|although|während|wohingegen|aber|jedoch))\s*"
    r"(?:(?:according\s+to|as\s+\w+\s+by|laut|nach|gemäß)\s*)?$", re.I)
BOUNDARY_INSIDE = re.compile(
    r";|,\s*(?=(?:whereas|while|whilst|but|although|though|however|während|wohingegen|aber|jedoch|doch"
    r"|obwohl|sondern)\b)", re.I)
MARK_AFTER_STOP = re.compile(r"([.!?])((?:\[\^[^\]\s]+\])+)")
LEADING_CONNECTOR = re.compile(
    r"^(?:\s|[,;:]|(?:whereas|while|whilst|but|and|or|although|though|however|yet|während|wohingegen|aber"
    r"|und|oder|jedoch|doch|obwohl|sondern|sowie)\b)+", re.I)
