"""Words, languages and stems: stop words, tokenising, language guess, Snowball stems.
"""

from __future__ import annotations


import re
import threading
from functools import lru_cache

import snowballstemmer

# -- language, stop words, stems ----------------------------------------------------------

STOPWORDS_EN = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either et al
    etc few for from further had has have having he her here hers him his how however i if in
    into is it its itself just me more most my no nor not of off on once only or other our ours
    out over own same she should so some such than that the their theirs them then there these
    they this those through thus to too under until up upon us very was we were what when where
    whether which while who whom why will with within without would you your yours one two
    may might must shall also whose via per among amongst its been regarding concerning""".split()
)
STOPWORDS_DE = frozenset(
    """aber alle allem allen aller alles als also am an andere anderen auch auf aus bei beim
    bereits bis bzw da dabei dadurch daher damit dann darauf darin das dass daß dem den denen
    denn der deren des dessen die dies diese diesem diesen dieser dieses doch dort durch ein
    eine einem einen einer eines einige einigen er es etwa euch für gegen gegenüber hat hatte
    hatten hier ihm ihn ihnen ihr ihre ihrem ihren ihrer im in indem ins ist jedoch jene jenem
    jenen jener kann können könnte man mit nach nachdem neben nicht noch nun nur ob oder ohne
    seine seinem seinen seiner seit sich sie sind so sodass solche soll sollte sondern sowie
    über um und uns unter vom von vor war waren was weil welche welchem welchen welcher wenn
    wer werden wie wieder wir wird wo wurde wurden zu zum zur zwar zwischen sowohl u a vgl
    hinsichtlich bezüglich bzgl betreffend""".split()
)
#: Words that frame a claim rather than state it ("Smith (2020) showed that …", "laut der Studie").
REPORTING = frozenset(
    """according report reports reported reporting show shows showed shown find finds found finding findings
    demonstrate demonstrates demonstrated argue argues argued state states stated note notes noted observe
    observes observed conclude concludes concluded claim claims claimed study studies research researchers
    author authors result results data evidence analysis paper article review survey investigation
    laut zufolge zeigen zeigt zeigte zeigten gezeigt berichten berichtet berichtete berichteten fanden
    festgestellt stellten stellt fest belegen belegt belegte kommen kommt kam schluss studie studien
    autoren autorinnen ergebnis ergebnisse befund befunde daten untersuchung untersuchungen analyse
    consider considers considered regard regarded perceive perceived rate rated view viewed
    beurteilen beurteilten beurteilt bewerten bewerteten bewertet empfanden empfinden angaben nannten
    feststellen feststellbar festzustellen""".split()
)
#: Unit words a figure is written with ("2.1 per cent" for "2.1 %") and light verbs ("went up",
#: "lag bei"): read with the figure or the direction, no content of their own.
FILLERS = frozenset(
    """percent cent percentage prozent prozentpunkt prozentpunkte prozentpunkten went goes going gone got get gets
    became become becomes lag lagen liegt liegen gab gibt pro binnen anders besonders kaum number numbers zahl anzahl
    led lead leads""".split()
)
#: Degree words and light verbs that carry no content of their own in a paraphrase ("many",
#: "still", "took up", "kam", "gut ein Drittel", "etwas länger"). Verbs that often do carry it
#: ("kept their jobs", "a set of", "put into practice") are left out.
LIGHT = frozenset(
    """many much even still yet already just quite rather really simply around nearly roughly almost
    made make makes making given give gives gave took take takes taken came come comes saw see seen
    began begin begun
    gut etwas viel viele vielen vieler vielem eher wirklich einmal desto je dafür dazu darüber kam kamen
    ging gingen trat traten lief liefen lässt lassen ließ ließen gab gaben bekam bekamen machte machten
    macht machen sprechen spricht sprach sprachen""".split()
)
STOPWORDS = STOPWORDS_EN | STOPWORDS_DE | REPORTING | FILLERS | LIGHT

WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)
_LANGUAGES = {"en": "english", "de": "german"}
# A Snowball stemmer keeps its word in instance state: one per thread, or the judge threads of a
# worker stem each other's words.
_local = threading.local()


def _stemmer(lang: str):
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {code: snowballstemmer.stemmer(name) for code, name in _LANGUAGES.items()}
    return stemmers[lang]


def language(text: str) -> str:
    """``de`` or ``en``: whichever language's stop words the text uses more (English on a tie)."""
    words = [w.lower() for w in WORD.findall(text)]
    de = sum(w in STOPWORDS_DE and w not in STOPWORDS_EN for w in words)
    en = sum(w in STOPWORDS_EN and w not in STOPWORDS_DE for w in words)
    if any(ch in text for ch in "äöüßÄÖÜ"):
        de += 1
    return "de" if de > en else "en"


@lru_cache(maxsize=65536)
def stem(word: str, lang: str) -> str:
    """The Snowball stem of a lower-case word (umlauts folded, so "höher" meets "hoh")."""
    return _stemmer(lang).stemWord(word)


def words(text: str) -> list[str]:
    """Lower-case words (letters only; hyphenated words split into their parts too)."""
    out = []
    for w in WORD.findall(text.lower()):
        w = w.replace("’", "'")
        parts = [p for p in re.split(r"['-]", w) if p]
        out.extend(parts)
    return out


def word_spans(text: str) -> list[tuple[int, str]]:
    """Each word of the text (as `words` finds them, case kept) with where it starts."""
    return [(m.start(), m.group(0)) for m in WORD.finditer(text)]
