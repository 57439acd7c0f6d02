"""Near matches between terms: a short bilingual synonym list, roots, German compound parts,
character n-grams, and antonyms.
"""

from __future__ import annotations


import re
from functools import lru_cache

from analysis.pipeline.judging.lexical.words import WORD, stem, words

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
    ws = [w.replace("’", "'") for w in WORD.findall(text.lower())]
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
