"""Cue words: direction (increase/decrease, improve/worsen), negation, absolute words, hedges,
certainty and open questions.
"""

from __future__ import annotations


import re
from functools import lru_cache


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
    return {axis: [sign for _, sign in hits] for axis, hits in _direction_positions(text)}


def direction_positions(text: str) -> dict[str, list[tuple[int, int]]]:
    """Direction cues per axis with where they stand: ``{"quantity": [(12, +1), (40, -1)], ...}``."""
    return {axis: list(hits) for axis, hits in _direction_positions(text)}


#: Texts whose direction cues are kept: a judge reads the same source sentences for claim after
#: claim, and the claim itself several times; the cues were a quarter of its time (issue 29).
DIRECTIONS_CACHE = 4096


@lru_cache(maxsize=DIRECTIONS_CACHE)
def _direction_positions(text: str) -> tuple[tuple[str, tuple[tuple[int, int], ...]], ...]:
    """:func:`direction_positions`, immutable (it is cached and shared), axes in their order."""
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
    return tuple((axis, tuple(hits)) for axis, hits in found.items())


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
