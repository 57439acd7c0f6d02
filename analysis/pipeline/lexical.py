"""Lexical evidence for the offline judge, in English and German.

What a claim and a source sentence can be compared on without understanding them:
their content terms (stemmed, stop words removed, German compounds matched by their
parts), their figures (value and unit), the direction they state (increase/decrease,
improve/worsen), negation, absolute words ("all", "always", "vollständig") and hedges
("may", "some", "teilweise"). Each is a small, explicit word list: the offline judge
rests on these cues and says `uncertain` where none decides.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
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

_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)
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
    words = [w.lower() for w in _WORD.findall(text)]
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
    for w in _WORD.findall(text.lower()):
        w = w.replace("’", "'")
        parts = [p for p in re.split(r"['-]", w) if p]
        out.extend(parts)
    return out


def word_spans(text: str) -> list[tuple[int, str]]:
    """Each word of the text (as `words` finds them, case kept) with where it starts."""
    return [(m.start(), m.group(0)) for m in _WORD.finditer(text)]


def content_terms(text: str, lang: str, exclude: frozenset[str] = frozenset()) -> list[str]:
    """The text's content stems in order: no stop words, no cue words, no number words (a
    figure in words is read by `quantities` and `shares`, as digits are), at least 3 letters."""
    return [stem(w, lang) for w in words(text)
            if len(w) >= 3 and w not in STOPWORDS and w not in exclude and w not in NUMBER_WORDS and not is_cue(w)]


_AUTHOR = r"[A-ZÄÖÜ][\w'’-]+(?:\s+(?:et\s+al\.?|u\.\s*a\.|and|&|und)(?:\s+[A-ZÄÖÜ][\w'’-]+)?)?(?:\s*\(\d{4}[a-z]?\))?"
_FRAMING = re.compile(
    rf"^\s*(?:(?:[Aa]ccording\s+to|[Ll]aut)\s+{_AUTHOR}\s*,?\s*"
    rf"|{_AUTHOR}\s+(?:\w+\s+)?(?:found|finds|showed|shows|reported|reports|argued|argues|demonstrated|"
    rf"demonstrates|observed|observes|noted|notes|concluded|concludes|stated|states|suggested|suggests|"
    rf"zeigte|zeigten|zeigt|fand|fanden|findet|berichtet\w*|stellte\w*\s+fest|argumentiert\w*|"
    rf"beobachtete\w*|kommt|kamen|kam)\b\s*(?:that\b|dass\b|,\s*dass\b)?\s*"
    rf"|{_AUTHOR}\s+zufolge\s*,?\s*)",
)


#: A parenthetical author-year citation inside the claim ("(Visser & de Boer, 2023)", "(Müller u. a. 2021, S. 4)").
_PAREN_CITATION = re.compile(r"\s*\((?:[^()]*?[A-ZÄÖÜ][^()]*?,?\s*(?:\d{4}[a-z]?|n\.\s*d\.|o\.\s*J\.)[^()]*)\)")


def claim_core(claim: str) -> str:
    """The claim without a leading attribution ("Smith et al. (2019) found that", "Laut Müller
    (2021)", "According to Castillo,") and without author-year citations in brackets: author
    names are not what the source's sentence says."""
    return _PAREN_CITATION.sub("", _FRAMING.sub("", claim, count=1))


def term_match(term: str, found: set[str] | frozenset[str], compounds: bool, lang: str | None = None) -> float:
    """Credit for a claim stem in a set of source stems: 1 for the stem itself, 0.75 for a
    German compound that ends in it or starts with it ("dauer" in "schlafdau"), else the best
    `similarity` of the stem to one of them (near-synonyms, derivations, shared compound
    parts; 0 when none is close). `lang` is the stemmer's language, for the synonym list."""
    if term in found:
        return 1.0
    best = 0.0
    if compounds and len(term) >= 3:
        for other in found:
            if len(other) >= len(term) + 3 and (other.endswith(term) or other.startswith(term)):
                return 0.75
            if len(term) >= len(other) + 3 and len(other) >= 4 and (term.endswith(other) or term.startswith(other)):
                return 0.75
    if lang is not None:
        for other in found:
            best = max(best, similarity(term, other, lang, compounds))
    return best


# -- near matches: synonyms, character n-grams, compound parts -------------------------------

#: General academic near-synonyms, English and German (one group a line; stems compared per
#: language, so a word may sit in a group in either spelling). Vocabulary of study reports in
#: general, not of any one topic: a paraphrase says "impact" where its source says "effect".
_SYNONYM_GROUPS = """
effect effects impact impacts influence influences influenced consequence consequences outcome outcomes
  einfluss einflüsse effekt effekte wirkung wirkungen auswirkung auswirkungen folge folgen auswirken wirken wirkte
link links linked association associations associated relationship relationships related correlation correlated
  correlates zusammenhang zusammenhänge zusammenhängen verbunden korrelation korreliert korrelierte assoziiert beziehung
participant participants subject subjects respondent respondents interviewee interviewees sample
  teilnehmer teilnehmende teilnehmenden teilnehmerinnen proband probanden probandinnen befragte befragten stichprobe
student students pupil pupils learner learners schoolchildren
  schüler schülerin schülerinnen lernende lernenden studierende studierenden studenten
child children kid kids kinder kind
adolescent adolescents teenager teenagers youth youths jugendliche jugendlichen heranwachsende
adult adults erwachsene erwachsenen
employee employees worker workers staff personnel workforce
  beschäftigte beschäftigten mitarbeiter mitarbeitende mitarbeitenden arbeitnehmer arbeitnehmende belegschaft
employer employers company companies firm firms business businesses enterprise enterprises
  arbeitgeber unternehmen betrieb betriebe firma firmen
performance achievement achievements attainment competence competences competency proficiency skill skills
  leistung leistungen kompetenz kompetenzen fähigkeit fähigkeiten fertigkeit fertigkeiten
  productivity output produktivität
use usage utilisation utilization uses used using consumption consume consumed
  nutzung benutzung verwendung einsatz gebrauch nutzen nutzten genutzt eingesetzt verwendet verwendeten verbrauch
rate rates share shares proportion proportions percentage fraction quota
  anteil anteile quote quoten rate raten prozentsatz
  frequency frequencies incidence häufigkeit häufigkeiten inzidenz prevalence prävalenz
cost costs expense expenses expenditure spending price prices
  kosten ausgaben aufwand preis preise
risk risks likelihood probability chance chances odds gefahr risiko risiken wahrscheinlichkeit
method methods approach approaches procedure technique techniques
  methode methoden verfahren ansatz ansätze vorgehen technik
intervention interventions programme program programs treatment treatments measure measures
  intervention interventionen programm programme maßnahme maßnahmen behandlung behandlungen förderung
significant significantly substantial substantially considerable considerably marked markedly notable notably
  signifikant signifikante erheblich erhebliche deutlich deutliche beträchtlich nennenswert nennenswerte
  meaningful bedeutsam bedeutsame bedeutsamer bedeutsamen
big large major great groß große großen bedeutend
small minor little slight gering geringe geringen klein kleine
rapid rapidly quick quickly fast schnell schneller rasch
level levels degree extent niveau ausmaß grad
period duration time span dauer zeitraum zeitspanne
job jobs employment occupation occupations work stelle stellen beschäftigung arbeit arbeitsplatz arbeitsplätze
wage wages salary salaries pay earnings income incomes lohn löhne gehalt gehälter einkommen verdienst
health wellbeing well-being gesundheit wohlbefinden
patient patients patientin patientinnen patienten
result results finding findings ergebnis ergebnisse befund befunde
show showed shown demonstrate demonstrated reveal revealed zeigen zeigte zeigten belegen belegte
region regions area areas district districts gebiet gebiete region regionen bezirk bezirke
city cities town towns urban stadt städte städtisch
country countries nation nations land länder staat staaten
household households haushalt haushalte
home homes house houses dwelling housing wohnung wohnungen haus häuser wohnraum
teacher teachers lehrer lehrerin lehrkraft lehrkräfte lehrende
school schools schule schulen
group groups cohort cohorts arm arms gruppe gruppen kohorte kohorten studienarm studienarme studienarmen
balance gleichgewicht
hospital hospitals clinic clinics krankenhaus krankenhäuser klinik kliniken klinikum spital
admission admissions hospitalisation hospitalization hospitalisations hospitalizations
  aufnahme aufnahmen einweisung einweisungen
nurse nurses pflegekraft pflegekräfte pflegepersonal pflegende pflegenden
physician physicians doctor doctors arzt ärzte ärztin ärztinnen mediziner
main principal chief key central primary major wichtigste wichtigsten zentrale zentralen haupt
reason reasons cause causes motive grund gründe ursache ursachen motiv
obstacle obstacles barrier barriers hurdle hurdles impediment hindernis hindernisse hürde hürden barriere barrieren
average mean typical durchschnitt durchschnittlich durchschnittliche mittel mittlere mittleren schnitt
daily everyday täglich tägliche täglichen alltäglich
satisfaction satisfied contentment zufriedenheit zufrieden
difficulty difficulties problem problems issue issues trouble schwierigkeit schwierigkeiten problem probleme
decision decisions choice choices entscheidung entscheidungen wahl
survey surveyed questionnaire befragung befragt befragten umfrage fragebogen
valuable valued useful helpful wertvoll geschätzt nützlich hilfreich
amount quantity volume level menge umfang
finish finished end ended stop stopped quit beenden beendeten abbrechen brachen abgebrochen aufhören
employment jobs beschäftigung arbeitsplätze
remain remained remains stay stayed stays persist persisted bleiben blieb blieben verbleiben fortbestehen
examine examined investigate investigated assess assessed evaluate evaluated inspect inspected
  untersuchen untersuchte analysieren analysierte prüfen prüften bewerten auswerten ausgewertet
acceptance accept accepted uptake adopt adopted adoption annehmen angenommen akzeptanz akzeptiert übernahme
difference differences gap gaps disparity disparities unterschied unterschiede differenz lücke abstand
advantage advantages benefit benefits gain gains edge vorteil vorteile vorsprung gewinn
change changes changed modify modified modification modifications alteration amend amended
  änderung änderungen veränderung veränderungen ändern geändert verändert wandel
start started begin beginning onset launch launched initiate initiated beginn start anfang begonnen
recommend recommended recommendation recommendations advise advised advocate advocated
  empfehlen empfahl empfehlung empfehlungen befürworten befürwortet raten
require required requirement need needed necessary benötigen benötigt brauchen erfordern erfordert nötig notwendig
important importance relevant relevance crucial essential wichtig bedeutend relevanz wesentlich entscheidend
error errors mistake mistakes fault faults fehler irrtum irrtümer
injury injuries verletzung verletzungen
illness disease diseases disorder disorders krankheit krankheiten erkrankung erkrankungen störung störungen
therapy therapies therapie therapien
population bevölkerung einwohner residents inhabitants
elderly seniors senioren ältere älteren
women woman female females frauen frau weiblich weibliche
men man male males männer mann männlich männliche
girls girl mädchen
boys boy jungen
parents parent eltern elternteil
family families familie familien
neighbourhood neighbourhoods neighborhood neighborhoods stadtteil stadtteile quartier quartiere
tax taxes levy levies abgabe abgaben steuer steuern
purchase purchases purchased buy buying bought sale sales kauf käufe kaufen gekauft verkauf verkäufe absatz
vehicle vehicles car cars fahrzeug fahrzeuge auto autos pkw
road roads street streets straße straßen
journey journeys trip trips travel reise reisen fahrt fahrten
speed speeds velocity geschwindigkeit geschwindigkeiten tempo
noise lärm
crop crops harvest yield yields ertrag erträge ernte
soil soils boden böden
forest forests woodland woodlands wald wälder
species arten
knowledge understanding wissen kenntnis kenntnisse verständnis
message messages notification notifications nachricht nachrichten benachrichtigung
reminder reminders remind reminded erinnerung erinnerungen erinnern erinnert
feedback rückmeldung rückmeldungen
training course courses workshop workshops schulung schulungen training kurs kurse fortbildung
test tests exam exams examination examinations prüfung prüfungen klausur klausuren
support supported supporting assist assistance help helped unterstützen unterstützung unterstützt hilfe helfen
offer offered provide provided supply angebot angebote anbieten angeboten bereitstellen bereitgestellt
access availability available zugang verfügbarkeit verfügbar
abolish abolished abolition removal removed abschaffen abschaffung abgeschafft wegfall streichung
introduce introduced introduction implement implemented implementation einführen einführung eingeführt umsetzung
  implementierung
extend extended extension expand expanded expansion ausweiten ausweitung verlängern verlängerung verlängert
replace replaced replacement replacing substitute ersetzen ersetzt ersatz austausch austauschen ausgetauscht
allow allowed enable enabled permit permitted ermöglichen ermöglicht erlauben erlaubt
explain explained explanation erklären erklärt erklärung
concern concerns worry worries fear fears sorge sorgen befürchtung befürchtungen angst ängste
attitude attitudes opinion opinions perception perceptions haltung haltungen meinung meinungen einstellung
  einstellungen wahrnehmung
willing willingness bereit bereitschaft
trust confidence vertrauen
stress strain burden pressure belastung belastungen druck stress
safety security sicherheit
quality qualität
efficiency efficient effizienz effizient
accuracy accurate precision precise genauigkeit genau präzision präzise
success successful erfolg erfolge erfolgreich
failure failures versagen ausfall ausfälle scheitern
delay delays delayed verzögerung verzögerungen verspätung verspätungen verzögert
mortality death deaths sterblichkeit mortalität todesfälle
goal goals aim aims objective objectives target targets ziel ziele
law laws legislation regulation regulations rule rules gesetz gesetze vorschrift vorschriften regelung regelungen
authority authorities agency agencies behörde behörden
municipality municipalities council councils kommune kommunen gemeinde gemeinden
annual annually yearly jährlich jährliche
monthly monatlich monatliche
weekly wöchentlich wöchentliche
nearby adjacent neighbouring neighboring surrounding nahe benachbart benachbarte angrenzend angrenzende umliegend
  umliegende
distance distances entfernung entfernungen distanz distanzen
"""


@lru_cache(maxsize=2)
def _synonyms(lang: str) -> dict[str, int]:
    table: dict[str, int] = {}
    group = -1
    for line in _SYNONYM_GROUPS.strip("\n").splitlines():
        if not line.startswith("  "):
            group += 1
        for word in line.split():
            for part in words(word):
                table.setdefault(stem(part, lang), group)
    return table


def synonymous(a: str, b: str, lang: str) -> bool:
    """Whether two stems (of the stemmer of `lang`) are near-synonyms of the list."""
    table = _synonyms(lang)
    return a in table and table.get(b) == table[a]


@lru_cache(maxsize=65536)
def _compound_parts(word: str, lang: str) -> tuple[tuple[str, str], ...]:
    """The ways a German compound stem splits into a modifier and a head that are both words of
    the synonym list ("klinikeinweis" → ("klinik", "einweis")), a linking s allowed."""
    table = _synonyms(lang)
    out = []
    for i in range(4, len(word) - 3):
        head, tail = word[:i], word[i:]
        if head in table or (head.endswith("s") and head[:-1] in table):
            for t in (tail, tail.lstrip("s")):
                if t in table and len(t) >= 4:
                    out.append((head if head in table else head[:-1], t))
    return tuple(dict.fromkeys(out))


_ROOT_SUFFIXES = {
    "en": sorted("iest ier est er ili li eri ri i ic ism al ment ness iti ity ion ation ative ive ance ence ant ent"
                 .split(), key=len, reverse=True),
    "de": sorted("ungen ung heit keit lich isch ig iert ier ert er et st t en e i".split(), key=len, reverse=True),
}
_DE_PARTICIPLE = re.compile(r"^(ab|an|auf|aus|ein|mit|nach|vor|weg|zu|zuruck|zurück|um|durch|her|hin|fest|dar|"
                            r"bei|los|hoch|heraus|voran)?ge(?=[a-zäöü]{4,})")


@lru_cache(maxsize=65536)
def root(word: str, lang: str) -> str:
    """A stem without its derivational ending, across word classes: "deeper"/"deep",
    "heavili"/"heavi", "recoveri"/"recov"; German participles and nouns of one verb meet
    ("eingefuhrt"/"einfuhr", "gefordert"/"forder", "profitiert"/"profiti"). At least 4 letters
    stay; a word too short to strip is its own root."""
    if lang == "de":
        word = _DE_PARTICIPLE.sub(lambda m: m.group(1) or "", word, count=1)
    for suffix in _ROOT_SUFFIXES.get(lang, ()):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[:-len(suffix)]
    return word


@lru_cache(maxsize=65536)
def _ngrams(word: str) -> frozenset[str]:
    padded = f"^{word}$"
    return frozenset(padded[i:i + n] for n in (3, 4, 5) for i in range(len(padded) - n + 1))


@lru_cache(maxsize=262144)
def similarity(a: str, b: str, lang: str, compounds: bool = True) -> float:
    """How close two stems are, 0 to 0.9: 0.9 for near-synonyms ("effect"/"impact",
    "Einfluss"/"Wirkung"); else character 3–5-gram overlap (Dice), which meets inflection and
    derivation ("reader"/"read", "tablet"/"tablets") when it reaches 0.55; for German, compounds
    sharing a leading part of 4+ letters ("leseleist"/"lesekompetenz", "schulleist"/"schulnot")
    count 0.5. Short stems (< 4 letters) only match by synonym."""
    if a == b:
        return 1.0
    if synonymous(a, b, lang):
        return 0.9
    if min(len(a), len(b)) < 4:
        return 0.0
    ra, rb = root(a, lang), root(b, lang)
    if ra == rb:
        return 0.8  # one word in two word classes ("deeper"/"deep", "Einführung"/"eingeführt")
    if synonymous(ra, rb, lang):
        return 0.75
    if compounds and min(len(a), len(b)) >= 8:
        # compounds of near-synonyms ("Klinikeinweisungen" / "Krankenhausaufnahmen")
        for ha, ta in _compound_parts(a, lang):
            for hb, tb in _compound_parts(b, lang):
                if (ha == hb or synonymous(ha, hb, lang)) and (ta == tb or synonymous(ta, tb, lang)):
                    return 0.8
    ga, gb = _ngrams(a), _ngrams(b)
    dice = 2 * len(ga & gb) / (len(ga) + len(gb))
    if dice >= 0.55:
        return round(min(0.85, dice), 3)
    if compounds and min(len(a), len(b)) >= 7:
        prefix = 0
        for x, y in zip(a, b):
            if x != y:
                break
            prefix += 1
        if prefix >= 4 and prefix < min(len(a), len(b)):
            return 0.5
    return 0.0


# -- antonyms ------------------------------------------------------------------------------

#: Pairs of words of opposite meaning on one axis, English and German (one pair a line, the
#: sides separated by "/", spellings of one side by spaces): a claim that names one side where
#: the source names the other ("rural" for "urban", "abgelehnt" for "angenommen") states
#: something else. Words of study reports in general, not of one topic.
_ANTONYM_PAIRS = """
rural countryside / urban city-centre inner-city
younger youngest / older oldest elderly
men male males boys fathers / women female females girls mothers
positive positively / negative negatively
success successful successfully / failure unsuccessful failed
accept accepted acceptance approve approved approval / reject rejected rejection refuse refused refusal
include included inclusion / exclude excluded exclusion
strong stronger strongest / weak weaker weakest
public / private
full-time / part-time
indoor indoors inside / outdoor outdoors outside
cheap cheaper cheapest inexpensive / expensive costlier dearer
easy easier / difficult harder
simple simpler / complex complicated
wide wider widest broad broader / narrow narrower narrowest
safe safer / dangerous unsafe riskier
rich richer richest wealthy wealthier affluent / poor poorer poorest deprived disadvantaged
support supported supporting / oppose opposed opposing opposition
agree agreed agreement / disagree disagreed disagreement
allowed permitted legal / banned forbidden prohibited illegal
win won winning / lose lost losing
presence present / absence absent
formal / informal
direct directly / indirect indirectly
active / passive inactive
online remote virtual / in-person face-to-face on-site
north northern / south southern
east eastern / west western
summer / winter
morning / evening
import imports imported / export exports exported
minimum / maximum
best / worst
voluntary optional / mandatory compulsory obligatory
permanent permanently / temporary temporarily
effective / ineffective
stable / unstable
ländlich ländlichen ländliche / städtisch städtischen städtische großstädtisch
jünger jüngere jüngeren jüngsten / älter ältere älteren ältesten
männer männlich männliche männlichen jungen väter / frauen weiblich weibliche weiblichen mädchen mütter
positiv positive positiven / negativ negative negativen
erfolg erfolgreich erfolgreiche / misserfolg erfolglos gescheitert
angenommen zustimmung zugestimmt akzeptiert / abgelehnt ablehnung verweigert
eingeschlossen einbezogen / ausgeschlossen
stark stärker stärkere stärkeren / schwach schwächer schwächere schwächeren
öffentlich öffentliche öffentlichen / privat private privaten
vollzeit / teilzeit
drinnen innenraum / draußen freien
billig billiger günstig günstiger günstigere / teuer teurer teurere kostspielig
einfach einfacher leicht leichter / schwierig schwieriger schwer schwerer
breit breiter / schmal schmaler schmäler
reich reicher wohlhabend wohlhabende wohlhabenden / arm ärmer arme armen ärmeren benachteiligt benachteiligte
erlaubt zulässig legal / verboten unzulässig illegal
gewonnen gewinnen / verloren verlieren
anwesenheit anwesend vorhanden / abwesenheit abwesend fehlend
formell formelle formellen / informell informelle informellen
direkt direkte direkten / indirekt indirekte indirekten
aktiv aktive aktiven / passiv passive passiven inaktiv
online digital / präsenz vor-ort
nördlich nördlichen norden / südlich südlichen süden
östlich östlichen osten / westlich westlichen westen
sommer / winter
morgens vormittags / abends nachmittags
freiwillig freiwillige freiwilligen / verpflichtend verpflichtende verpflichtenden verbindlich verbindliche
befristet befristete befristeten vorübergehend / unbefristet unbefristete unbefristeten
wirksam wirksame wirksamen / unwirksam unwirksame unwirksamen
stattfanden stattfand stattfinden stattfindet stattgefunden durchgeführt / ausfielen ausfiel ausfallen ausfällt ausgefallen abgesagt
held attended / cancelled canceled skipped missed
"""


@lru_cache(maxsize=2)
def _antonyms(lang: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    pairs = []
    for line in _ANTONYM_PAIRS.strip().splitlines():
        left, right = line.split("/")
        sides = tuple(frozenset(stem(p, lang) for w in side.split() for p in [w.replace("-", "")]) for side in (left, right))
        pairs.append(sides)
    return tuple(pairs)


def _antonym_stems(text: str, lang: str) -> frozenset[str]:
    ws = [w.replace("’", "'") for w in _WORD.findall(text.lower())]
    return frozenset(stem(w.replace("-", ""), lang) for w in ws)


def antonym_swap(claim: str, claim_lang: str, source: str, lang: str) -> tuple[str, str] | None:
    """A side of an antonym pair the claim names where the source names only the other side
    ("rural schools" against "urban schools"): the claim's stem and the source's; None when
    none, or when either text names both sides."""
    if claim_lang != lang:
        return None
    mine, theirs = _antonym_stems(claim, lang), _antonym_stems(source, lang)
    for a, b in _antonyms(lang):
        for one, other in ((a, b), (b, a)):
            if mine & one and not mine & other and theirs & other and not theirs & one:
                return sorted(mine & one)[0], sorted(theirs & other)[0]
    return None


# -- cues -----------------------------------------------------------------------------------

#: Quantity direction: up (+1) and down (-1); quality direction: improve (+1), worsen (-1).
_UP = r"""increas\w* ris(?:e|es|ing|en) rose higher highest greater greatest larger largest bigger biggest
    stronger strongest strengthen\w* grow\w* grew rais(?:e|ed|es|ing) boost\w*
    doubl\w* tripl\w* elevat\w* exceed\w* climb\w* surg\w* expand\w* accelerat\w* amplif\w* more
    prolong\w* lengthen\w* verläng\w*
    steig\w* stieg\w* gestiegen anstieg\w* ansteig\w* erhöh\w* zunahme zunehm\w* zugenommen
    höher\w* größer\w* mehr wachs\w* wuchs\w* wächst gewachsen wachstum steiger\w* gesteigert verdoppel\w*
    vergrößer\w* verstärk\w* größt\w* höchst\w* stärker\w* stärkst\w*
    costlier pricier teurer\w* teuerst\w* kostspieliger\w* verteuer\w*"""
_DOWN = r"""decreas\w* declin\w* drop\w* fall fell falls falling fallen lower\w* less least fewer fewest smaller
    smallest weaker weakest weaken\w* reduc\w*
    shr[ai]nk\w* shrunk diminish\w* halv\w* lessen\w* sank sink\w* attenuat\w* mitigat\w* curb\w*
    cut cuts cutting shorten\w* verkürz\w*
    gesunken senk\w* gesenkt verringer\w* abnahme abnehm\w* abgenommen
    weniger niedriger\w* geringer\w* kleiner\w* reduzier\w* rückgang zurückgegangen
    zurückgehen verminder\w* fiel fielen gefallen halbier\w* kleinst\w* niedrigst\w* geringst\w*
    wenigst\w* schwächer\w* schwächst\w*
    abgeschwächt abschwäch\w*
    cheaper cheapest billiger\w* billigst\w* günstiger\w* günstigst\w* verbillig\w*"""
_BETTER = r"""improv\w* better benefit\w* enhanc\w* verbesser\w* besser\w* gefördert förder\w*"""
_WORSE = r"""worsen\w* worse deteriorat\w* impair\w* harm\w* verschlechter\w* schlechter\w* beeinträchtig\w*
    geschadet schad\w*"""
# "zu"/"ab" of a separable verb can follow its verb by a few words: "nahm im Winter deutlich ab".
# A main clause can put its subject, a time and the amount between them: "nahm die
# Nitratauswaschung im Winter um etwa 40 Prozent zu" (ten words at most, within the clause).
_SEPARABLE = {+1: r"\b(?:nimmt|nahm|nahmen|nehmen)\b(?:\s+[\w%.,]+){0,10}?\s+zu\b",
              -1: r"\b(?:nimmt|nahm|nahmen|nehmen|schwächt|schwächte|schwächten|schwächen)\b(?:\s+[\w%.,]+){0,10}?\s+ab\b"
                  r"|\b(?:geht|ging|gingen|gehen)\b(?:\s+[\w%.,]+){0,10}?\s+zurück\b"}
# "lag über/unter", "was above/below": a level compared, where "über" alone mostly means "about".
_LEVEL = {+1: r"\b(?:lag|lagen|liegt|liegen|blieb|blieben)\b(?:\s+[\w,]+){0,4}?\s+über\b"
              r"|\b(?:was|were|is|are|remained|lay)\s+(?:\w+\s+){0,2}?above\b",
          -1: r"\b(?:lag|lagen|liegt|liegen|blieb|blieben)\b(?:\s+[\w,]+){0,4}?\s+unter\b"
              r"|\b(?:was|were|is|are|remained|lay)\s+(?:\w+\s+){0,2}?below\b"}
# Shares of a group: "most" against "fewer than half" (read before "fewer than" is masked).
_SHARE = {+1: r"\b(?:most|the\s+majority|a\s+majority|more\s+than\s+half|over\s+half|die\s+meisten|"
              r"(?:die\s+)?mehrheit|mehr\s+als\s+die\s+hälfte|über\s+die\s+hälfte|überwiegende?n?\s+teil)\b",
          -1: r"\b(?:fewer\s+than\s+half|less\s+than\s+half|under\s+half|a\s+minority|(?:a\s+)?few|"
              r"weniger\s+als\s+die\s+hälfte|(?:eine\s+)?minderheit|nur\s+wenige)\b"}


def _alternation(spec: str) -> str:
    return "|".join(spec.split())


_AXES = {
    "quantity": (re.compile(rf"\b(?:{_alternation(_UP)})\b|{_SEPARABLE[+1]}", re.I),
                 re.compile(rf"\b(?:{_alternation(_DOWN)})\b|{_SEPARABLE[-1]}", re.I)),
    "quality": (re.compile(rf"\b(?:{_alternation(_BETTER)})\b", re.I),
                re.compile(rf"\b(?:{_alternation(_WORSE)})\b", re.I)),
    "level": (re.compile(_LEVEL[+1], re.I), re.compile(_LEVEL[-1], re.I)),
}
_SHARES = (re.compile(_SHARE[+1], re.I), re.compile(_SHARE[-1], re.I))
#: How fast: "sped up", "schneller" against "more slowly", "verlangsamt" (read first, then masked,
#: so that the "more" of "more slowly" is no rise).
_SPEED = (
    re.compile(r"\b(?:faster|quicker|more\s+(?:quickly|rapidly)|sped\s+up|speed(?:s|ed|ing)?\s+up|hasten\w*|"
               r"schneller\w*|rascher\w*|beschleunig\w*)\b", re.I),
    re.compile(r"\b(?:slower|more\s+slowly|less\s+(?:quickly|rapidly)|slow(?:s|ed|ing)?(?:\s+down)?|decelerat\w*|"
               r"langsamer\w*|verlangsam\w*)\b", re.I),
)
#: How often: "more often", "häufiger" against "less often", "seltener".
_FREQUENCY = (
    re.compile(r"\b(?:more\s+(?:often|frequent\w*|commonly)|häufiger\w*|öfter\w*|vermehrt\w*)\b", re.I),
    re.compile(r"\b(?:less\s+(?:often|frequent\w*|commonly)|more\s+rarely|rarer|seltener\w*|"
               r"weniger\s+(?:häufig|oft)\w*)\b", re.I),
)
#: Phrases that look like a direction but compare or quantify: "more than 50", "higher education".
_NOT_DIRECTION = re.compile(
    r"\b(?:more|less|fewer|mehr|weniger)\s+(?:than|als)\b|\bmore\s+or\s+less\b|\bmehr\s+oder\s+weniger\b"
    r"|\bhigher\s+education\b|\b(?:lower|upper)[\s-]+secondary\b|\b(?:lower|upper)\s+bound\b"
    r"|\bno\s+more\b|\bnicht\s+mehr\b|\bmore\s+(?:often|likely)\b"
    r"|\bnot\s+only\b|\bnicht\s+nur\b|\bdouble[\s-]+blind\w*|\bdoppel[\s-]*blind\w*|\bcut[\s-]+offs?\b",
    re.I,
)

_NEGATION = re.compile(
    r"\b(?:not|no|never|neither|nor|cannot|none|nothing|nobody|without\s+(?:any\s+)?(?:significant\s+)?"
    r"(?:effect|change|difference|impact|influence)|fail(?:s|ed)?\s+to|unable\s+to|lack(?:s|ed)?|"
    r"unchanged|unaffected|unrelated|uncorrelated|unassociated|unverändert\w*|unbeeinflusst\w*|"
    # left out of a study: "freight trains were excluded" says what "did not include freight trains" says
    r"(?:were|was|are|is|been)\s+(?:left\s+out|excluded|omitted)|(?:wurden|wurde|blieben|blieb)\s+"
    r"(?:\w+\s+){0,3}?(?:ausgeschlossen|ausgeklammert|unberücksichtigt)|"
    # gone: "the association largely disappeared", "verschwand weitgehend"
    r"disappear(?:ed|s)?|vanish(?:ed|es)?|verschwand\w*|verschwunden|verschwindet|"
    # "changed little" says what "was largely unaffected" says
    r"(?:changed|varied|differed)\s+(?:only\s+)?(?:little|slightly|marginally)|hardly\s+(?:changed|differed)|"
    r"(?:veränderte|änderte|unterschied)\w*\s+sich\s+(?:nur\s+)?(?:kaum|wenig|geringfügig)|kaum\s+verändert|"
    r"(?:stayed|remained|stays|remains)\s+(?:the\s+same|stable|constant|flat)|"
    r"(?:blieb|blieben|bleibt|bleiben)\s+(?:\w+\s+)?(?:gleich|stabil|konstant)|"
    r"kein\w*|nicht|nie|niemals|weder|nichts|ohne\s+(?:signifikanten?\s+|messbaren?\s+)?"
    r"(?:effekt|einfluss|wirkung|unterschied|veränderung))\b|n't\b",
    re.I,
)
#: Negations that are not denials: "not only … but also", "cannot be ruled out" (a hedge).
_NOT_NEGATION = re.compile(
    r"\bnot\s+only\b|\bnicht\s+nur\b|\bno\s+(?:more|less|fewer)\s+than\b|\bnicht\s+(?:mehr|weniger)\s+als\b"
    # "no wider than 0.4 mm", "nicht länger als zwei Wochen" bound a figure ("not higher than in
    # the control group" still denies)
    r"|\b(?:no\s+\w{2,}er\s+than|nicht\s+\w{2,}er\s+als)(?=\s+(?:\d|about|around|approximately|roughly|etwa|rund|"
    r"one|two|three|four|five|six|seven|eight|nine|ten|ein\w*|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn)\b)"
    r"|\bcannot\s+be\s+(?:ruled\s+out|excluded)\b|\bnot\s+necessarily\b|\bnicht\s+unbedingt\b"
    r"|\bnicht\s+auszuschließen\b|\bnicht\s+ausgeschlossen\b|\bno\s+doubt\b|\bkein\s+zweifel\b"
    r"|\bwhether\s+or\s+not\b|\bor\s+not\b|\boder\s+nicht\b|\bno\.\s*(?=\d)"
    r"|\bnevertheless\b|\bnonetheless\b|\bnichtsdestotrotz\b|\bnicht\s+zuletzt\b|\bnot\s+least\b"
    r"|\b(?:cannot|could\s+not|can\s+not|did\s+not|does\s+not)\s+(?:establish|determine|tell|show|say|assess)\s+whether\b"
    r"|\bnicht\s+(?:geklärt|klären|prüfen|geprüft|sagen|feststellen|festgestellt)\b"
    # the comparison group's denial ("than those who did not use …") is no denial of the finding
    r"|\b(?:than|compared\s+(?:with|to)|versus|vs\.?|als|gegenüber|im\s+vergleich\s+zu)\s+(?:those|people|the\s+ones|"
    r"others|participants|patients|students|children|diejenigen|jenen?|denen|solchen|personen)\b,?"
    r"\s+(?:who|that|which|die|welche)\b[^.;:]{0,30}?(?:\b(?:not|nicht|no|kein\w*|never|nie)\b|n't\b)",
    re.I,
)

#: Words that claim more than a study shows; the strong ones overstate on their own.
_ABSOLUTE_STRONG = re.compile(
    r"\b(?:always|never|entirely|completely|totally|fully|eliminat\w*|prov(?:e|es|ed|en)|certainly|definitely|"
    r"undoubtedly|invariably|universally|conclusively|guarantee\w*|without\s+exception|in\s+all\s+cases|"
    r"immer|stets|nie|niemals|vollständig\w*|völlig\w*|komplett\w*|gänzlich\w*|ausnahmslos\w*|bewies\w*|"
    r"beweis(?:t|en)|eliminier\w*|garantier\w*|zweifellos|in\s+allen\s+fällen)\b",
    re.I,
)
_ABSOLUTE_WEAK = re.compile(r"\b(?:all|every|each|any|alle|allen|aller|alles|jede|jeder|jedes|jeden|jedem)\b",
                            re.I)
_HEDGE = re.compile(
    r"\b(?:may|might|could|can|some|suggest\w*|partial\w*|partly|in\s+some\s+cases|possibl\w*|perhaps|"
    r"likely|tend\w*|appears?\s+to|appeared\s+to|seem\w*|indicat\w*|preliminary|modest\w*|slight\w*|limited|"
    r"somewhat|to\s+some\s+extent|under\s+certain\s+conditions|often|sometimes|occasionally|moderate\w*|"
    r"a\s+few|several|potential\w*|rarely|cannot\s+be\s+(?:ruled\s+out|excluded)|most|mostly|largely|"
    r"(?:the\s+)?majority|meisten|mehrheit\w*|überwiegend\w*|weitgehend\w*|größtenteils|"
    r"kann|können|könnte|könnten|teilweise|einige\w*|manche\w*|deute[tn]?\b.{0,80}?\ban|möglicherweise|"
    r"vermutlich|wahrscheinlich|scheint|scheinen|tendenziell|in\s+einigen\s+fällen|zum\s+teil|gewisse\w*|"
    r"unter\s+bestimmten\s+bedingungen|oft|häufig|manchmal|gelegentlich|geringfügig\w*|mäßig\w*|begrenzt\w*|"
    r"eingeschränkt\w*|mehrere\w*|legt\w*\b.{0,60}?\bnahe|hinweis\w*|potenziell\w*|selten)\b",
    re.I,
)

#: Words that state a finding as certain or as a cause: a claim that adds them to a source that
#: lacks them overstates it ("caused" for "fell", "nachweislich" for "deuten darauf hin").
_CERTAINTY = re.compile(
    r"\b(?:reliabl[ey]|demonstrabl[ey]|clearly|unequivocally|conclusive\w*|caus(?:e|es|ed|ing|al|ally)|"
    r"nachweislich\w*|eindeutig\w*|zuverlässig\w*|verursach\w*|ursächlich\w*|kausal\w*)\b",
    re.I,
)
#: Modal hedges only ("may", "könnte", "deuten … an"), narrower than `hedged`: a source that states
#: a finding as possible does not back a claim that states it as fact.
_MODAL = re.compile(
    r"\b(?:may|might|could|suggest(?:s|ed)?|indicat(?:e|es|ed)\s+that|appears?\s+to|seems?\s+to|possibl[ey]|"
    r"perhaps|potential(?:ly)?|probabl[ey]|presumabl[ey]|kann|können|könnte|könnten|dürfte|dürften|"
    r"möglicherweise|vermutlich|wahrscheinlich|mutmaßlich|"
    r"(?:cannot|could\s+not)\s+(?:establish|determine|tell|show|say)\s+whether|ob\b.{0,80}?\boffen|"
    r"deute[tn]?\b.{0,80}?\ban|legen\b.{0,60}?\bnahe|legt\b.{0,60}?\bnahe|scheint|scheinen|"
    # what others say or believe, not what the source found: "are often said to reduce", "gilt als"
    r"(?:said|thought|believed|assumed|claimed|reputed|supposed|alleged)\s+to|allegedly|reportedly|"
    r"gilt\s+als|gelten\s+als|galt\s+als|galten\s+als|angeblich\w*|vermeintlich\w*)\b",
    re.I,
)


_CUE_PATTERNS = (*(p for pair in _AXES.values() for p in pair), *_SHARES, *_FREQUENCY, *_SPEED, _ABSOLUTE_STRONG, _CERTAINTY, _ABSOLUTE_WEAK, _HEDGE, _NEGATION)


@lru_cache(maxsize=65536)
def is_cue(word: str) -> bool:
    """Whether a word is a cue (direction, negation, absolute, hedge) rather than a content term:
    "increased" against "decreased" must not lower the overlap, it decides the verdict."""
    return any(p.fullmatch(word) for p in _CUE_PATTERNS)


#: A multiple states a rise: "twelve times the baseline risk", "three times as many".
_MULTIPLE_UP = re.compile(
    r"\b(?:twice|doppelt\s+so|(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
    r"zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|zwölf|zwanzig|\d+(?:[.,]\d+)?)"
    r"[\s-]*(?:times|fold|mal|fach)(?!\s+(?:per|a|an|each|every|pro|im|in\s+the|daily|weekly|so\s+(?:klein|niedrig|gering))\b))",
    re.I)
#: A figure before "more/less than" is a difference, not a bound: "cost 15 % more than road haulage".
_BY_MORE_THAN = re.compile(
    r"\d(?:[\d.,]*\d)?\s*(?:%|per\s*cent|percent|prozent|times|mal|fach)?\s+"
    r"(?:(?P<up>more|mehr)|(?P<down>less|fewer|weniger))\s+(?:than|als)\b", re.I)


def directions(text: str) -> dict[str, list[int]]:
    """Direction cues per axis, in order of appearance: ``{"quantity": [+1, -1], ...}``."""
    return {axis: [sign for _, sign in hits] for axis, hits in direction_positions(text).items()}


def direction_positions(text: str) -> dict[str, list[tuple[int, int]]]:
    """Direction cues per axis with where they stand: ``{"quantity": [(12, +1), (40, -1)], ...}``."""
    found: dict[str, list[tuple[int, int]]] = {}
    differences = [(m.start(), +1 if m.group("up") else -1) for m in _BY_MORE_THAN.finditer(text)]
    differences += [(m.start(), +1) for m in _MULTIPLE_UP.finditer(text)
                    if not any(abs(m.start() - at) < 40 for at, _ in differences)]
    up, down = _SHARES
    shares = [(m.start(), +1) for m in up.finditer(text)] + [(m.start(), -1) for m in down.finditer(text)]
    if shares:
        found["share"] = sorted(shares)
    # "more often" and "weniger häufig" state how often, not how much: read first, then masked.
    often_up, often_down = _FREQUENCY
    often = [(m.start(), +1, m) for m in often_up.finditer(text)] + [(m.start(), -1, m) for m in often_down.finditer(text)]
    if often:
        found["frequency"] = [(at, sign) for at, sign, _ in sorted(often, key=lambda x: x[0])]
    masked = text
    for _, _, m in often:
        masked = masked[:m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    fast, slow = _SPEED
    speed = sorted([(m.start(), +1, m) for m in fast.finditer(masked)] + [(m.start(), -1, m) for m in slow.finditer(masked)],
                   key=lambda x: x[0])
    if speed:
        found["speed"] = [(at, sign) for at, sign, _ in speed]
    for _, _, m in speed:
        masked = masked[:m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    masked = _NOT_DIRECTION.sub(lambda m: " " * len(m.group(0)), masked)
    for m in list(up.finditer(masked)) + list(down.finditer(masked)):  # "more than half" is a share
        masked = masked[:m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    for axis, (up_, down_) in _AXES.items():
        hits = [(m.start(), +1) for m in up_.finditer(masked)] + [(m.start(), -1) for m in down_.finditer(masked)]
        if axis == "quantity":
            hits += differences
        if hits:
            found[axis] = sorted(hits)
    return found


def negated(text: str) -> bool:
    """Whether the text denies what it is about ("did not", "no significant effect", "kein")."""
    return bool(_NEGATION.search(_NOT_NEGATION.sub(" ", text)))


_NEVER = re.compile(r"\b(?:never|nie|niemals)\b", re.I)


def negated_only_by_never(text: str) -> bool:
    """Whether the text's only denial is "never"/"nie" (an absolute rather than a denial)."""
    return bool(_NEVER.search(text)) and not negated(_NEVER.sub(" ", text))


_NEARLY_BEFORE = re.compile(r"\b(?:nearly|almost|virtually|practically|fast|nahezu|beinahe|praktisch)\s+$", re.I)


#: "all year", "all day long", "jeden Tag": a span of time, not a claim about every member of a group.
_SPAN_AFTER = re.compile(r"\s+(?:year|day|week|month|night|season|winter|summer|jahr|tag|woche|monat|nacht|"
                         r"saison|winter|sommer)s?\b", re.I)


def absolutes(text: str) -> tuple[list[str], list[str]]:
    """(strong, weak) absolute words of the text, lower case ("nearly every" is none; "each"
    distributes, "on each flight" claims no universality; "all year" is a span of time)."""
    return ([m.group(0).lower() for m in _ABSOLUTE_STRONG.finditer(text)],
            [m.group(0).lower() for m in _ABSOLUTE_WEAK.finditer(text)
             if not _NEARLY_BEFORE.search(text[max(0, m.start() - 14):m.start()]) and m.group(0).lower() != "each"
             and not _SPAN_AFTER.match(text, m.end())])


#: A question the source leaves open ("whether X … could not be assessed", "ob X, bleibt offen"):
#: it states neither X nor its opposite.
_OPEN = re.compile(
    r"\bwhether\b.{0,160}?\b(?:could\s+not\s+be|cannot\s+be|can\s+not\s+be|was\s+not|were\s+not|"
    r"remains?\s+(?:unclear|open|unknown|to\s+be)|is\s+(?:unclear|unknown))\b"
    r"|\b(?:cannot|could\s+not|did\s+not|does\s+not)\s+(?:establish|determine|tell|show|say|assess)\s+whether\b"
    r"|\bremains?\s+to\s+be\s+(?:studied|seen|shown|tested|examined|investigated)\b"
    r"|\bob\b.{0,160}?\b(?:bleibt|ist|war|blieb)\s+(?:\w+\s+){0,4}?(?:offen|unklar|ungeklärt)\b"
    r"|\bob\b.{0,160}?\bnicht\s+(?:geklärt|klären|prüfen|geprüft|sagen|feststellen|festgestellt|beurteilen)\b"
    r"|\b(?:bleibt|ist|sind)\s+(?:\w+\s+){0,3}?(?:offen|unklar|ungeklärt|noch\s+zu\s+untersuchen)\b",
    re.I | re.S,
)


def open_question(text: str) -> bool:
    """Whether the text leaves its subject open ("whether … could not be assessed", "ob …
    bleibt offen", "remain to be studied")."""
    return bool(_OPEN.search(text))


_DENIED_BEFORE = re.compile(r"\b(?:not|no|never|whether|if|nicht|kein\w*|nie|ob)\b[^.;:,]*$", re.I)


def certainties(text: str) -> list[str]:
    """The words of certainty or cause of a text ("reliably", "caused", "nachweislich"), not
    those a negation or "whether" governs ("did not test whether X caused Y", "nicht kausal")."""
    return [m.group(0).lower() for m in _CERTAINTY.finditer(text)
            if not _DENIED_BEFORE.search(text[max(0, m.start() - 60):m.start()])]


def modally_hedged(text: str) -> bool:
    """Whether the text states its finding only as possible ("may reduce", "könnte verringern")."""
    return bool(_MODAL.search(text))


def hedged(text: str) -> bool:
    """Whether the text hedges ("may", "suggests", "in some cases", "könnte", "deutet … an")."""
    return bool(_HEDGE.search(text))


# -- figures --------------------------------------------------------------------------------

#: Unit spellings (English and German) to one canonical name each.
_UNITS = {
    "percentage points": "pp", "percentage point": "pp", "prozentpunkte": "pp", "prozentpunkten": "pp",
    "prozentpunkt": "pp", "pp": "pp", "%": "%", "percent": "%", "per cent": "%", "prozent": "%",
    "°c": "°C", "° c": "°C", "degrees celsius": "°C", "grad celsius": "°C", "grad": "°", "degrees": "°",
    "k": "K", "kelvin": "K",
    "hours": "h", "hour": "h", "h": "h", "stunden": "h", "stunde": "h", "std": "h",
    "minutes": "min", "minute": "min", "min": "min", "minuten": "min",
    "seconds": "s", "second": "s", "sekunden": "s", "sekunde": "s", "s": "s",
    "days": "d", "day": "d", "tage": "d", "tagen": "d", "tag": "d",
    "weeks": "wk", "week": "wk", "wochen": "wk", "woche": "wk",
    "months": "mo", "month": "mo", "monate": "mo", "monaten": "mo", "monat": "mo",
    "years": "yr", "year": "yr", "jahre": "yr", "jahren": "yr", "jahr": "yr",
    "kg": "kg", "g": "g", "mg": "mg", "t": "t", "tonnes": "t", "tons": "t", "tonnen": "t",
    "km/h": "km/h", "kmh": "km/h", "m/s": "m/s", "km": "km", "m": "m", "cm": "cm", "mm": "mm", "m²": "m2", "m2": "m2", "km²": "km2",
    "kwh": "kWh", "mwh": "MWh", "w": "W", "kw": "kW", "mw": "MW", "db": "dB", "mmhg": "mmHg",
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR", "$": "USD", "usd": "USD", "dollars": "USD",
    "fold": "x", "-fold": "x", "times": "x", "fach": "x", "-fach": "x", "mal": "x",
    "points": "pt", "punkte": "pt", "punkten": "pt",
}
_UNIT_RE = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_NUM = r"\d+(?:[.,\u202f\u00a0]\d{3})*(?:[.,]\d+)?|\d+"
_QUANTITY = re.compile(
    rf"(?<![\w.,])(?<![A-Za-zÄÖÜäöüß]-)(?P<cur>[€$]\s?)?(?P<a>{_NUM})"
    rf"(?:\s*(?:–|—|-|to|bis)\s*(?P<b>{_NUM}))?"
    rf"(?:\s*(?P<unit>{_UNIT_RE})(?![\w]))?",
    re.I,
)
#: Numbers that label rather than measure: "Table 2", "Abb. 3", "p. 14", "Study 1".
_LABEL_BEFORE = re.compile(
    r"\b(?:table|tab|figure|fig|chapter|section|study|experiment|page|abb|abbildung|tabelle|kapitel|"
    r"abschnitt|studie|seite|model|hypothesis|hypothese|wave|welle|phase|nr|klasse|jahrgangsstufe|grade)\.?\s*$"
    r"|\b(?:p|pp|s|no)\.\s*$",
    re.I,
)
_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "hundred": 100,
    "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10,
    "elf": 11, "zwölf": 12, "zwanzig": 20, "dreißig": 30, "hundert": 100,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
    "dreizehn": 13, "vierzehn": 14, "fünfzehn": 15, "sechzehn": 16, "siebzehn": 17, "achtzehn": 18, "neunzehn": 19,
    "vierzig": 40, "fünfzig": 50, "sechzig": 60, "siebzig": 70, "achtzig": 80, "neunzig": 90,
    "twice": 2, "doubled": 2, "halved": 0.5, "doppelt": 2, "verdoppelt": 2, "halbiert": 0.5,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_ONES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_NUMBER_WORDS.update({f"{t}-{o}": tv + ov for t, tv in _TENS.items() for o, ov in _ONES.items()})
_NUMBER_WORDS.update({t: v for t, v in _TENS.items() if t not in _NUMBER_WORDS})
_UNIT_AFTER = re.compile(rf"\s*({_UNIT_RE})(?![\w])", re.I)
# Longest first, and no match inside a hyphenated one ("eight" of "fifty-eight").
_NUMBER_WORD = re.compile(r"(?<![\w-])(" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")(?![\w-])",
                          re.I)


@dataclass(frozen=True)
class Quantity:
    """A figure of a text: its value, its unit (None when bare), and its decimals as written."""

    value: float
    unit: str | None
    decimals: int
    text: str
    #: a year, a count spelled out, or another figure that identifies rather than measures
    weak: bool = False
    #: "from" or "to" when the figure is the start or the end of a change ("from 12 % to 21 %")
    role: str | None = None
    #: "approx" ("about 20 %"), "min" ("more than 1,000") or "max" ("less than 5 %") as written
    bound: str | None = None
    #: one end of a range ("86–99 %", "5 to 8 weeks") rather than of a change
    ranged: bool = False


def _parse_number(raw: str, lang: str) -> tuple[float, int] | None:
    s = raw.replace("\u202f", " ").replace("\u00a0", " ")
    if " " in s:
        s = s.replace(" ", "")
    if "," in s and "." in s:
        decimal = "," if s.rfind(",") > s.rfind(".") else "."
        s = s.replace("." if decimal == "," else ",", "").replace(decimal, ".")
    elif "," in s or "." in s:
        sep = "," if "," in s else "."
        groups = s.split(sep)
        thousands = len(groups) > 2 or (len(groups[-1]) == 3 and (sep == "," if lang == "en" else sep == "."))
        s = s.replace(sep, "") if thousands else s.replace(sep, ".")
    try:
        value = float(s)
    except ValueError:
        return None
    decimals = len(s.split(".")[1]) if "." in s else 0
    return value, decimals


#: An ordinal names a place in a series, it measures nothing: "20th century", "des 20. Jahrhunderts".
_ORDINAL_AFTER = re.compile(
    r"(?:st|nd|rd|th)\b|\.\s+(?:Jahrhundert|Jahrtausend|Geburtstag|Lebensjahr|Lebensmonat|Lebenswoche|Klasse|"
    r"Jahrgang|Schuljahr|Semester|Quartal|Monat|Woche|Tag|Mal|Platz|Rang|Auflage|Ausgabe|Kapitel|Sitzung|"
    r"Runde|Welle|Stock|Etage|Legislaturperiode|Januar|Februar|März|April|Mai|Juni|Juli|August|September|"
    r"Oktober|November|Dezember)", re.I)


def quantities(text: str, lang: str) -> list[Quantity]:
    """The figures of a text with their units; a range gives both ends the unit it ends in."""
    return list(_quantities(text, lang))


@lru_cache(maxsize=8192)
def _quantities(text: str, lang: str) -> tuple[Quantity, ...]:
    found: list[Quantity] = []
    for m in _QUANTITY.finditer(text):
        if _LABEL_BEFORE.search(text[max(0, m.start() - 14):m.start()]):
            continue
        if not m.group("unit") and not m.group("cur") and _ORDINAL_AFTER.match(text, m.end()):
            continue
        unit = _UNITS.get(m.group("unit").lower()) if m.group("unit") else None
        if m.group("cur"):
            unit = _UNITS[m.group("cur").strip()]
        raws = (m.group("a"), m.group("b"))
        ends = [_parse_number(raw, lang) if raw is not None else None for raw in raws]
        if ends[1] is not None and ends[0] is not None and _year_like(*ends[0]) and not _year_like(*ends[1]):
            # "by 1900 to 19 per cent": a year, then the figure it dates, not a range of per cent
            ends[0] = None
        before = text[max(0, m.start() - 12):m.start()]
        ranged = ends[0] is not None and ends[1] is not None and not _FROM.search(before)
        for end, (raw, parsed) in enumerate(zip(raws, ends)):
            if parsed is None:
                continue
            value, decimals = parsed
            year = unit is None and _year_like(value, decimals) and raw.isdigit()  # "2,000 adults" is no year
            if end == 1:
                role = "to"
            elif ends[1] is not None:
                role = "from"
            else:
                role = _role(before)
                if role == "from" and not _CHANGE_TO_AFTER.match(text, m.end()):
                    role = None  # "eine Wirksamkeit von 94 %": of, not from
            bound = _bound(text[max(0, m.start() - 24):m.start()]) if end == 0 else None
            written = m.group(0).strip() if ends[0] is not None else text[m.start("b"):m.end()].strip()
            found.append(Quantity(value, unit, decimals, written, weak=year, role=role, bound=bound, ranged=ranged))
    for m in _NUMBER_WORD.finditer(text):
        unit = _UNIT_AFTER.match(text, m.end())
        canonical = _UNITS.get(unit.group(1).lower()) if unit else None
        # "six weeks" measures; a bare "three" may just count things ("three cities").
        found.append(Quantity(float(_NUMBER_WORDS[m.group(1).lower()]), canonical, 0,
                              m.group(0) + (unit.group(0) if unit else ""), weak=canonical is None,
                              bound=_bound(text[max(0, m.start() - 24):m.start()])))
    # A change by a fraction in words ("fell by one third", "um gut ein Viertel") is a change in per cent.
    for m in _SHARE_WORD.finditer(text):
        if not (m.group("num") and m.group("frac")) or not _BY_BEFORE.search(text[max(0, m.start() - 30):m.start()]):
            continue
        before = text[max(0, m.start() - 30):m.start()]
        bound = "min" if _CHANGE_OVER.search(before) else "max" if _CHANGE_UNDER.search(before) else "approx"
        value = _NUMERATORS[m.group("num").lower()] * _FRACTION_VALUES[m.group("frac").lower()] * 100
        found.append(Quantity(round(value, 1), "%", 1, m.group(0), bound=bound))
    return tuple(found)


#: "by a good third", "um gut ein Viertel": more than the fraction; "knapp ein Drittel": less.
_CHANGE_OVER = re.compile(r"\b(?:over|more\s+than|a\s+good|well\s+over|gut|über|mehr\s+als)\s+$", re.I)
_CHANGE_UNDER = re.compile(r"\b(?:nearly|almost|just\s+under|knapp|fast|beinahe|nicht\s+ganz)\s+$", re.I)


_FROM = re.compile(r"\b(?:from|von)\s*$", re.I)
_TO = re.compile(r"\b(?:to|auf)\s*$", re.I)


#: after "from 12 %" / "von 12 %": the end of the change ("… to 21 %", "… im Jahr 2019 auf 21 %")
_CHANGE_TO_AFTER = re.compile(r"[^;]{0,60}?\b(?:to|into|auf|bis|zu)\s+(?:\w+\s+)?[\d€$]", re.I)


def _year_like(value: float, decimals: int) -> bool:
    return decimals == 0 and 1800 <= value <= 2100


def _role(before: str) -> str | None:
    return "from" if _FROM.search(before) else "to" if _TO.search(before) else None


_BOUNDS = (
    ("approx", re.compile(r"\b(?:about|approximately|around|roughly|nearly|almost|circa|ca\.|some|"
                          r"rund|etwa|ungefähr|knapp|fast|annähernd|beinahe|zirka)\s*$", re.I)),
    ("min", re.compile(r"(?:\b(?:over|above|more\s+than|at\s+least|exceeding|über|mehr\s+als|mindestens|"
                       r"oberhalb\s+von)|>|≥)\s*$", re.I)),
    # "up to 20 °C" names a peak, not a bound: it needs the same figure.
    ("max", re.compile(r"(?:\b(?:under|below|less\s+than|fewer\s+than|at\s+most|unter|weniger\s+als|"
                       r"höchstens|maximal)|<|≤)\s*$", re.I)),
)


def _bound(before: str) -> str | None:
    return next((name for name, pattern in _BOUNDS if pattern.search(before)), None)


def same_value(claimed: Quantity, stated: Quantity) -> bool:
    """Whether a source figure states the claimed value: equal, or equal once rounded to the
    claim's decimals ("about 12 %" for 12.3 %), and not the start of a change the claim
    calls its end ("rose to 12 %" for "from 12 % to 21 %") or the reverse."""
    if claimed.role and stated.role and claimed.role != stated.role:
        return False
    if claimed.value == stated.value:
        return True
    # A bounded or approximate claim is met by any figure inside its bound ("over 1,000" by 1,204).
    if claimed.bound == "min" and stated.bound is None:
        return stated.value > claimed.value
    if claimed.bound == "max" and stated.bound is None:
        return stated.value < claimed.value
    if claimed.bound == "approx" and claimed.value:
        return abs(stated.value - claimed.value) <= 0.1 * abs(claimed.value)
        return True
    return round(stated.value, claimed.decimals) == claimed.value and stated.decimals > claimed.decimals


def compatible_units(a: Quantity, b: Quantity) -> bool:
    """Units that may measure the same quantity: equal, or one of them bare."""
    return a.unit is None or b.unit is None or a.unit == b.unit


# -- shares (figures in words, and percentages, as parts of a whole) --------------------------

#: A fraction word to its value; "third" and the like need a numerator ("a third", "zwei Drittel").
_FRACTION_VALUES = {
    "half": 0.5, "halves": 0.5, "hälfte": 0.5, "halb": 0.5, "halbe": 0.5, "halben": 0.5, "halber": 0.5,
    "halbes": 0.5, "third": 1 / 3, "thirds": 1 / 3, "drittel": 1 / 3, "quarter": 0.25, "quarters": 0.25,
    "viertel": 0.25, "fifth": 0.2, "fifths": 0.2, "fünftel": 0.2, "sixth": 1 / 6, "sixths": 1 / 6,
    "sechstel": 1 / 6, "eighth": 0.125, "eighths": 0.125, "achtel": 0.125, "tenth": 0.1, "tenths": 0.1,
    "zehntel": 0.1,
}
_NUMERATORS = {"a": 1, "an": 1, "one": 1, "ein": 1, "eine": 1, "einem": 1, "einen": 1, "einer": 1, "eines": 1,
               "two": 2, "three": 3, "four": 4, "five": 5, "seven": 7, "nine": 9,
               "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sieben": 7, "neun": 9}
#: Small counts in words, for ratios ("one in seven", "vier von zehn", "nine out of ten").
_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
           "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100, "ein": 1, "eine": 1, "einer": 1,
           "einem": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9,
           "zehn": 10, "elf": 11, "zwölf": 12, "zwanzig": 20, "hundert": 100}
_COUNT = r"(?:" + "|".join(sorted(_COUNTS, key=len, reverse=True)) + r"|\d{1,3})"
#: A ratio in words: "one delivery in seven", "nine out of ten", "vier von zehn", "jeder Achte".
_RATIO = re.compile(
    r"\b(?P<n>" + _COUNT + r")\s+(?:[^\W\d_]+\s+){0,2}?(?:in|out\s+of)\s+(?:every\s+)?(?P<d>" + _COUNT + r")\b"
    r"|\b(?P<on>" + _COUNT + r")\s+of\s+(?:the\s+|these\s+|those\s+)?(?P<od>" + _COUNT + r")\b"
    r"|\b(?P<vn>" + _COUNT + r")\s+(?:von|aus)\s+(?P<vd>" + _COUNT + r")\b"
    r"|\bjede[rsnm]?\s+(?P<ord>zweite|dritte|vierte|fünfte|sechste|siebte|achte|neunte|zehnte|zwanzigste)\w*",
    re.I,
)
_ORDINALS = {"zweite": 2, "dritte": 3, "vierte": 4, "fünfte": 5, "sechste": 6, "siebte": 7, "achte": 8, "neunte": 9,
             "zehnte": 10, "zwanzigste": 20}


#: Numbers in words ("eleven", "forty-six", "zwölf", "Drittel"): figures, not content terms.
NUMBER_WORDS = frozenset({*(w for k in _NUMBER_WORDS for w in k.split("-")), *_COUNTS, *_TENS, *_ONES,
                          *(k for k in _FRACTION_VALUES), "dozen", "dutzend", "thousand", "tausend",
                          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                          "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn",
                          "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig",
                          "mindestens", "höchstens", "wenigstens"}
                         - {"a", "an", "ein", "eine", "einem", "einen", "einer", "eines"})


def _count(word: str) -> int | None:
    word = word.lower()
    return int(word) if word.isdigit() else _COUNTS.get(word)
_SHARE_WORD = re.compile(
    r"\b(?:(?P<num>" + "|".join(_NUMERATORS) + r")\s+)?(?P<frac>" + "|".join(_FRACTION_VALUES) + r")\b"
    r"|\b(?P<halved>halved|halbiert|halbierte\w*)\b"
    r"|\b(?P<twice>twice|doubled|doppelt|verdoppelt\w*)\b|\b(?P<thrice>tripled|verdreifacht\w*)\b"
    r"|\b(?P<nearall>(?:nearly|almost|virtually|practically|fast|nahezu|beinahe|praktisch)\s+"
    r"(?:all|alle|sämtliche|every|each|jede[rsnm]?)"
    r"|(?:nearly|almost)\s+(?:the\s+)?(?:entire|whole))\b"
    r"|\b(?P<most>the\s+majority|a\s+majority|die\s+mehrheit|eine\s+mehrheit|mehrheitlich|die\s+meisten|"
    r"the\s+bulk|most\s+of|(?<!the\s)(?<!at\s)most(?=\s+[^\W\d_]+\b)(?!\s+[^\W\d_]+(?:ly|ive|ant|ent|al|ic|ous|"
    r"ful|able|ible|est|er)\b))\b"
    r"|\b(?P<few>a\s+minority|eine\s+minderheit|a\s+small\s+minority)\b"
    r"|\b(?P<rest>the\s+rest|the\s+remainder|the\s+remaining|der\s+rest|den\s+rest|die\s+übrigen|"
    r"das\s+übrige|der\s+übrige)\b"
    r"|\b(?P<all>all|entire|entirely|whole|wholly|every|the\s+total|in\s+full|completely|alle|aller|allen|"
    r"gesamte|gesamten|gesamter|ganze|ganzen|ganzer|sämtliche|sämtlichen|jede|jeder|jedes|vollständig|"
    r"komplett|restlos)\b",
    re.I,
)
#: Absolute words of degree ("completely", "vollständig"): a share of a group only when nothing else is.
_ADVERBIAL_ALL = re.compile(r"entirely|wholly|completely|in\s+full|vollständig|komplett|restlos", re.I)
#: Words that state a share or bound it ("knapp zwei Drittel"): figures, checked by `shares`, not content terms.
SHARE_WORDS = frozenset({*_FRACTION_VALUES, "majority", "minority", "mehrheit", "minderheit", "knapp", "rund",
                         "etwa", "roughly", "approximately", "nearly", "almost", "halved", "halbiert",
                         *(o + e for o in _ORDINALS for e in ("", "n", "r", "s", "m"))})
#: "by a third" names a change, not a share: left out.
_BY_BEFORE = re.compile(r"\b(?:by|um)\s+(?:(?!\d{4}\b)\w+\s+){0,2}$", re.I)  # not "by 1900 to 19 %"
#: "a 20 % increase", "20 % more", "between 10 % and 12 % above": a change, not a share.
_CHANGE_AFTER = re.compile(r"^\s*(?:(?:and|to|und|bis)\s+\d+(?:[.,]\d+)?\s*(?:%|per\s+cent|prozent)\s*)?"
                           r"(?:increase|decrease|rise|drop|fall|decline|growth|higher|lower|more|less|"
                           r"fewer|anstieg|rückgang|zuwachs|höher|niedriger|mehr|weniger|above|below|"
                           r"(?:über|unter)\s+(?:dem|der|den)\b)\b", re.I)
_ORDINAL_BEFORE = re.compile(r"\b(?:first|second|latter|former|erste\w*|zweite\w*|letzte\w*)\s+$", re.I)
_SHARE_BOUNDS = (
    ("under", re.compile(r"\b(?:nearly|almost|just\s+under|just\s+below|slightly\s+less\s+than|not\s+quite|"
                         r"fast|knapp|beinahe|nicht\s+ganz|gut\s+unter)\s+(?:the\s+|die\s+|der\s+)?$", re.I)),
    ("over", re.compile(r"\b(?:just\s+over|just\s+above|slightly\s+more\s+than|a\s+little\s+over|well\s+over|"
                        r"gut|etwas\s+mehr\s+als|knapp\s+über)\s+(?:the\s+|die\s+|der\s+)?$", re.I)),
    ("max", re.compile(r"(?:\b(?:less\s+than|fewer\s+than|under|below|at\s+most|not\s+even|weniger\s+als|unter|"
                       r"höchstens|nicht\s+einmal|kaum)|<|≤)\s+(?:the\s+|die\s+|der\s+)?$", re.I)),
    ("min", re.compile(r"(?:\b(?:more\s+than|over|above|at\s+least|exceeding|mehr\s+als|über|mindestens)|>|≥)\s+"
                       r"(?:the\s+|die\s+|der\s+)?$", re.I)),
    ("approx", re.compile(r"\b(?:about|approximately|around|roughly|some|circa|ca\.|rund|etwa|ungefähr|zirka|"
                          r"annähernd|grob)\s+(?:the\s+|die\s+|der\s+)?$", re.I)),
)


@dataclass(frozen=True)
class Share:
    """A part of a whole (or a multiple) a text states, in digits or in words, as the interval
    [low, high] of values it allows: "about half" → [0.425, 0.575], "less than a fifth" →
    [0, 0.2), "all" → [1, 1], "the rest" → [0, 1)."""

    low: float
    high: float
    #: "share" (of a whole or of a level: "half", "48 %", "all") or "multiple" ("twice", "3-fold")
    kind: str
    text: str
    #: content stems of the words it quantifies ("half of the revenue" → revenue), maybe empty
    subject: frozenset[str] = frozenset()
    #: "all", "rest" or "fraction": an absolute word, a remainder, or a figure
    form: str = "fraction"

    def agrees(self, other: Share) -> bool:
        return self.low <= other.high + 1e-9 and other.low <= self.high + 1e-9


def _interval(value: float, bound: str | None, *, exact: bool) -> tuple[float, float]:
    spread = max(0.005, 0.01 * value) if exact else max(0.03, 0.1 * value)
    if bound == "approx":
        spread = max(0.05, 0.15 * value) if not exact else max(0.02, 0.1 * value)
    if bound == "under":
        return value - max(0.07, 0.2 * value), value + 0.005
    if bound == "over":
        return value - 0.005, value + max(0.07, 0.2 * value)
    if bound == "max":
        return 0.0, value - 1e-6
    if bound == "min":
        return value + 1e-6, 1.0 if value < 1 else value * 10
    return value - spread, value + spread


def _subject(after: str, lang: str) -> frozenset[str]:
    after = re.split(r"[.;:!?,()]", after, maxsplit=1)[0]
    after = re.sub(r"^\s*(?:of|der|des|von|aller|den|dem)\b", "", after, flags=re.I)
    terms = [t for t in content_terms(after, lang) if not is_cue(t)][:3]
    return frozenset(stem(t, lang) for t in terms)


def shares(text: str, lang: str) -> list[Share]:
    """See `_shares` (cached: the judge asks for a sentence's shares many times)."""
    return list(_shares(text, lang))


@lru_cache(maxsize=8192)
def _shares(text: str, lang: str) -> tuple[Share, ...]:
    """The shares a text states: fraction words with their numerators and bounds ("knapp zwei
    Drittel", "less than a fifth"), majorities and minorities, absolute words ("all", "the
    entire", "sämtliche"), remainders ("the rest"), percentages that are no change ("48 %",
    not "by 48 %"), and multiples ("twice", "halved", "3-fold")."""
    found: list[Share] = []
    for m in _SHARE_WORD.finditer(text):
        before = text[max(0, m.start() - 30):m.start()]
        bound = next((name for name, pattern in _SHARE_BOUNDS if pattern.search(before)), None)
        subject = _subject(text[m.end():m.end() + 60], lang)
        word = m.group(0)
        if m.group("frac"):
            frac = m.group("frac").lower()
            value = _FRACTION_VALUES[frac]
            if m.group("num"):
                value *= _NUMERATORS[m.group("num").lower()]
            elif not frac.startswith(("half", "hälfte", "halb")):
                continue  # "the third quarter", "Viertel" of a town: no share without a numerator
            if _BY_BEFORE.search(before) or _ORDINAL_BEFORE.search(before):
                continue
            if frac.startswith("halb") and not re.search(r"\b(?:auf|zur|um)\s+(?:\w+\s+)?$|\bnur\s+$", before, re.I):
                continue  # "halb so hoch" is a multiple; "eine halbe Stunde" measures time
            low, high = _interval(value, bound, exact=False)
            # "half as many cycles", "a third as often": a multiple of another figure, not a share
            kind = "multiple" if re.match(r"\s+(?:as|so)\b", text[m.end():], re.I) else "share"
            found.append(Share(low, high, kind, word, subject))
        elif m.group("halved"):
            found.append(Share(0.45, 0.55, "share", word, subject))
        elif m.group("twice") or m.group("thrice"):
            value = 2.0 if m.group("twice") else 3.0
            found.append(Share(value * 0.9, value * 1.1, "multiple", word, subject))
        elif m.group("nearall"):
            found.append(Share(0.8, 0.999, "share", word, subject))
        elif m.group("most"):
            low, high = (0.5 + 1e-6, 1.0)
            if bound == "max":  # "less than most" hardly occurs; "nicht die Mehrheit"
                continue
            found.append(Share(low, high, "share", word, subject))
        elif m.group("few"):
            found.append(Share(0.0, 0.5 - 1e-6, "share", word, subject))
        elif m.group("rest"):
            found.append(Share(0.0, 0.999, "share", word, subject, form="rest"))
        elif m.group("all"):
            if re.match(r"\s+(?:but|except|außer)\b", text[m.end():], re.I) or _BY_BEFORE.search(before):
                continue
            if re.match(r"\s+(?:" + "|".join(_ORDINALS) + r")", text[m.end():], re.I):
                continue  # "jeder Achte" is one in eight (read below), not everyone
            # "all year", "all day long": a span of time, not a share of a group
            if re.match(r"\s+(?:year|day|week|month|night|season|winter|summer)s?\b", text[m.end():], re.I):
                continue
            found.append(Share(1.0, 1.0, "share", word, subject, form="all"))
    for m in _RATIO.finditer(text):
        if m.group("ord"):
            n, d = 1, _ORDINALS[m.group("ord").lower()]
        else:
            n = _count(m.group("n") or m.group("vn") or m.group("on"))
            d = _count(m.group("d") or m.group("vd") or m.group("od"))
        # "stieg von 2 auf 5" is no ratio: both counts must be small and the part below the whole
        if not n or not d or n >= d or (m.group("vn") is not None and m.group("vn").isdigit()
                                        and m.group("vd").isdigit()):
            continue
        # "2 mm wide in 85 % of the slabs": figures in digits make a ratio only side by side ("1 in 7")
        if m.group("n") is not None and (m.group("n").isdigit() or m.group("d").isdigit()) \
                and not re.fullmatch(r"\d+\s+(?:in|out\s+of)\s+(?:every\s+)?\d+", m.group(0), re.I):
            continue
        # "one of the two groups" singles one out, "every one of the twelve" is all of them
        if m.group("on") is not None and (n < 2 or re.search(r"\b(?:every|each|any)\s+$", text[:m.start()], re.I)):
            continue
        before = text[max(0, m.start() - 30):m.start()]
        if _BY_BEFORE.search(before):
            continue
        bound = next((name for name, pattern in _SHARE_BOUNDS if pattern.search(before)), None)
        low, high = _interval(n / d, bound, exact=False)
        found.append(Share(low, high, "share", m.group(0), _subject(text[m.end():m.end() + 60], lang)))
    figures = quantities(text, lang)
    for i, q in enumerate(figures):
        if q.unit not in ("%", "x") or q.weak or (q.role == "from" and not q.ranged):
            continue
        if q.ranged and q.role == "to" and i and figures[i - 1].ranged and figures[i - 1].text == q.text:
            continue  # read with the range's start
        start = text.find(q.text)
        before = text[max(0, start - 30):start] if start >= 0 else ""
        after = text[start + len(q.text):start + len(q.text) + 60] if start >= 0 else ""
        if q.unit == "%":
            if _BY_BEFORE.search(before) or _CHANGE_AFTER.search(after):
                continue
            bound = {"approx": "approx", "min": "min", "max": "max"}.get(q.bound or "")
            low, high = _interval(q.value / 100, bound, exact=True)
            end = figures[i + 1] if q.ranged and i + 1 < len(figures) else None
            if end is not None and end.ranged and end.text == q.text:
                # "86–99 %": a share anywhere in the range
                end_low, end_high = _interval(end.value / 100, None, exact=True)
                low, high = min(low, end_low), max(high, end_high)
            found.append(Share(low, high, "share", q.text, _subject(after, lang)))
        else:
            found.append(Share(q.value * 0.95, q.value * 1.05, "multiple", q.text, _subject(after, lang)))
    if any(sh.kind == "share" and sh.form != "all" for sh in found):
        # "Weniger als die Hälfte der Kolumbarien deckt die Kosten vollständig": beside a share of the
        # group, an adverb of degree says how far each member does it, not that all members do
        found = [sh for sh in found if not (sh.form == "all" and _ADVERBIAL_ALL.fullmatch(sh.text))]
    return tuple(found)
