"""Measure extraction, resolution and verdicts on a labelled corpus, through the real pipeline.

    .venv/bin/python scripts/eval_verdicts.py eval/                 # every thesis folder under eval/
    .venv/bin/python scripts/eval_verdicts.py eval/e01_feedback_md --json
    .venv/bin/python scripts/eval_verdicts.py eval/ --judge openai   # CITEQ_JUDGE for the worker

Each DIR is a thesis folder (it holds ``labels.json``, see eval/README.md) or a folder of
them. On the embedded PostgreSQL when DATABASE_URL is unset (a fresh database
``citeq_eval`` on the ``main`` server, recreated per run), else on DATABASE_URL with fresh
users. It migrates, starts a real ``dramatiq actors`` worker process, and for each thesis
creates a user, uploads the thesis and its sources through the upload path the CLI and
HTTP use, admits an analysis, waits for it to end and reads its citations back. Then it
matches the reported citations to the planted ones (marker, page, claim) and prints the
figures of each stage: extraction recall and precision, resolution accuracy, verdict
accuracy with a confusion matrix and per confidence band, per language, citation style
and format. It measures and never gates: the exit status is 0 whatever the figures
(1 only when the run itself could not happen: no labels, no database, a dead worker).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

VERDICTS = ["supported", "partially_supported", "not_supported", "uncertain", "source_missing"]
#: Confidence bands [low, high) used unless analysis.pipeline.judging.verdicts exports CONFIDENCE_BANDS.
DEFAULT_BANDS = [(0.0, 0.5), (0.5, 0.75), (0.75, 1.0001)]
#: How much of a planted claim's words a reported claim must hold to be its match.
CLAIM_MATCH = 0.5
EVAL_DB = "citeq_eval"
TERMINAL = {"succeeded", "failed", "canceled"}
_STOP = frozenset("""a an the of and or in on for to with by from at as is are was were be been this that these
    those its their it they than then der die das und oder im von zu mit für auf ein eine einer eines des den dem
    sich nicht auch als wie bei nach aus wird werden wurde wurden ist sind war hat haben""".split())
_PARTICLES = frozenset("van von de der den da di du le la zu ten ter".split())
_NOT_NAMES = frozenset("see cf vgl siehe e.g z.b in im also ebd ibid ebenda and und et al u a s p pp".split())


class EvalFailed(RuntimeError):
    """The evaluation run could not happen (not: the figures are poor)."""


# -- labels ---------------------------------------------------------------------------------


@dataclass
class Thesis:
    folder: Path
    labels: dict

    @property
    def name(self) -> str:
        return self.folder.name


def find_theses(dirs: list[str]) -> list[Thesis]:
    """Thesis folders: each DIR holding labels.json, or each subfolder of DIR holding one."""
    found: list[Thesis] = []
    for d in dirs:
        path = Path(d)
        candidates = [path] if (path / "labels.json").exists() else sorted(
            p.parent for p in path.glob("*/labels.json"))
        if not candidates:
            raise EvalFailed(f"{d}: no labels.json in it or in its subfolders")
        for folder in candidates:
            found.append(Thesis(folder.resolve(), json.loads((folder / "labels.json").read_text())))
    return found


# -- markers and claims ---------------------------------------------------------------------

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_YEAR = re.compile(r"\b(1[6-9]\d\d|20\d\d)[a-z]?\b|\bn\.\s?d\.|\bo\.\s?J\.|\bn\.d\b|\bnd\b")


def name_key(name: str) -> str:
    """"Müller", "Mueller" and "MÜLLER" agree; particles ("van der") are dropped; the
    first remaining word counts (a surname, or a corporate author's first word)."""
    words = [w for w in re.split(r"\s+", name.strip()) if w and w.casefold() not in _PARTICLES]
    folded = (words[0] if words else name).casefold().replace("ß", "ss")
    for a, b in (("ä", "a"), ("ö", "o"), ("ü", "u"), ("ae", "a"), ("oe", "o"), ("ue", "u")):
        folded = folded.replace(a, b)
    folded = unicodedata.normalize("NFKD", folded)
    return "".join(c for c in folded if c.isalnum())


def year_key(year: str | None) -> str | None:
    if not year:
        return None
    m = re.search(r"\d{4}", year)
    return m.group(0) if m else "nd"


def marker_keys(marker: str) -> set[str]:
    """What a marker as reported can stand for: ``n:3`` (numeric), ``fn:2`` (a footnote
    number), ``ay:<first author>:<year>``, ``ibid``. Tolerant of the marker's form."""
    text = " ".join(marker.translate(_SUPERSCRIPTS).split())
    keys: set[str] = set()
    if re.search(r"\b(ebd|ebenda|ibid|ibidem)\b", text, re.I):
        keys.add("ibid")
    bare = re.fullmatch(r"\[\^(\d+)\]|\^?(\d{1,3})|(?:footnote|fn\.?|Fn\.)\s*(\d+)", text)
    if bare:
        n = next(g for g in bare.groups() if g)
        keys.add(f"fn:{n}")
        if bare.group(2):
            keys.add(f"n:{n}")
        return keys
    for group in re.findall(r"\[([\d\s,;–—-]+)\]", text) or ([text] if re.fullmatch(r"[\d\s,;–—-]+", text) else []):
        for item in re.split(r"[,;]", group):
            bounds = [int(x) for x in re.findall(r"\d+", item)]
            if len(bounds) == 1:
                keys.add(f"n:{bounds[0]}")
            elif len(bounds) == 2 and 0 <= bounds[1] - bounds[0] <= 50:
                keys.update(f"n:{n}" for n in range(bounds[0], bounds[1] + 1))
    year = _YEAR.search(text)
    if year:
        head = text[:year.start()]
        names = [w for w in re.findall(r"[^\W\d_][\w'’-]*", head)
                 if w[0].isupper() and w.casefold().strip(".") not in _NOT_NAMES]
        if names:
            keys.add(f"ay:{name_key(names[0])}:{year_key(year.group(0))}")
    return keys


def label_keys(label: dict) -> set[str]:
    """The marker keys a reported citation may carry to be this planted one."""
    keys: set[str] = set()
    if label.get("ref_number") is not None:
        keys.add(f"n:{label['ref_number']}")
    elif label.get("ref_author"):
        keys.add(f"ay:{name_key(label['ref_author'])}:{year_key(label.get('ref_year'))}")
    if label.get("footnote") is not None:
        keys.add(f"fn:{label['marker'].split()[-1]}")
        keys |= {k for k in marker_keys(label["footnote"]) if k == "ibid"}
    if "ibid" in label.get("forms", []):
        keys.add("ibid")
    return keys


def words(text: str | None) -> set[str]:
    """Content words, case- and ligature-folded."""
    folded = unicodedata.normalize("NFKC", text or "").casefold()
    return {w for w in re.findall(r"\w{3,}", folded) if w not in _STOP}


def claim_f1(expected: str, reported: str) -> float:
    """Word-level F1 of a reported claim against the planted one: low when the reported
    claim lost words, or carries a heading, a neighbouring sentence or garbled columns."""
    want, got = words(expected), words(reported)
    both = len(want & got)
    return 2 * both / (len(want) + len(got)) if both else 0.0


def claim_similarity(expected: str, reported: str) -> float:
    """The share of the planted claim's words the reported claim holds."""
    want = words(expected)
    return len(want & words(reported)) / len(want) if want else 0.0


# -- matching -------------------------------------------------------------------------------


@dataclass
class Reported:
    ordinal: int
    marker: str
    claim: str
    page: int | None
    source: str | None  #: the filename of the cited source, None when unresolved
    verdict: str | None
    confidence: float | None
    rationale: str | None = None
    evidence_page: int | None = None
    evidence: str | None = None


@dataclass
class Case:
    """One planted citation and what the pipeline made of it."""

    thesis: str
    id: str
    language: str
    style: str
    format: str
    forms: list[str]
    contradiction: list[str]
    expected_verdict: str
    expected_source: str | None
    expected_page: int | None
    marker: str
    claim: str
    found: bool = False
    reported_marker: str | None = None
    reported_claim: str | None = None
    reported_page: int | None = None
    reported_source: str | None = None
    verdict: str | None = None
    confidence: float | None = None
    similarity: float | None = None
    #: the kind of the judge's reason (`reason_kind`), for the aggregate table of reasons
    reason: str | None = None
    #: the language of the cited source's text (``en``/``de``), None without a source
    source_language: str | None = None
    #: the pages of the source that hold the planted evidence: the label's ``evidence_pages``,
    #: else [1] for a source of one page; None when unknown (a longer source, not labelled)
    planted_evidence_pages: list[int] | None = None
    #: the page of the evidence the report shows
    evidence_page: int | None = None
    #: the sentences of the source that state (or deny) the claim, where labelled (``evidence``)
    planted_evidence: list[str] | None = None
    #: the evidence the report shows
    evidence: str | None = None

    @property
    def evidence_placed(self) -> bool:
        """The evidence shown lies on a page that holds the planted evidence."""
        return self.evidence_page is not None and self.evidence_page in (self.planted_evidence_pages or [])

    @property
    def evidence_holds_planted(self) -> bool:
        """The evidence shown holds a planted evidence sentence (most of its words)."""
        return any(evidence_holds(quote, self.evidence) for quote in self.planted_evidence or [])

    @property
    def resolved_right(self) -> bool:
        return self.found and self.reported_source == self.expected_source

    @property
    def verdict_right(self) -> bool:
        return self.found and self.verdict == self.expected_verdict


def match(labels: list[dict], rows: list[Reported]) -> tuple[list[tuple[dict, Reported | None, float]], int]:
    """Pair planted citations with reported ones: compatible marker, then the best claim
    (a page agreement breaks near ties). Greedy on the best pairs first; a reported
    citation serves one planted one. Also returns how many reported ones matched none."""
    row_keys = [marker_keys(r.marker) for r in rows]
    pairs = []
    for li, label in enumerate(labels):
        keys = label_keys(label)
        for ri, row in enumerate(rows):
            sim = claim_similarity(label["claim"], row.claim)
            by_marker = bool(keys & row_keys[ri])
            if not by_marker and not (sim >= 0.8 and row.page == label.get("page")):
                continue  # an unknown marker form still matches on page and nearly the whole claim
            if sim < CLAIM_MATCH:
                continue
            # Near ties: the same page, a marker of the same kind (footnote or not), a tighter claim.
            same_kind = (label.get("footnote") is not None) == any(k.startswith("fn:") for k in row_keys[ri])
            tight = len(words(label["claim"]) & words(row.claim)) / max(1, len(words(row.claim)))
            score = (sim + (0.1 if row.page == label.get("page") else 0) + (0.05 if by_marker else 0)
                     + (0.02 if same_kind else 0) + 0.05 * tight)
            pairs.append((score, li, ri, sim))
    taken_l, taken_r, result = set(), set(), {}
    for score, li, ri, sim in sorted(pairs, key=lambda p: (-p[0], p[1], p[2])):
        if li in taken_l or ri in taken_r:
            continue
        taken_l.add(li)
        taken_r.add(ri)
        result[li] = (rows[ri], sim)
    matched = [(label, *result.get(i, (None, 0.0))) for i, label in enumerate(labels)]
    return matched, len(rows) - len(taken_r)


def cases_for(thesis: Thesis, rows: list[Reported],
              source_pages: dict[str, int | None] | None = None) -> tuple[list[Case], int]:
    """The planted citations of a thesis with what was reported for them; ``source_pages``
    (file name -> pages as parsed) tells where a source of one page holds its evidence."""
    lab = thesis.labels
    out = []
    matched, unmatched = match(lab["citations"], rows)
    languages = source_languages(thesis)
    for label, row, sim in matched:
        source = Path(label["source"]).name if label.get("source") else None
        case = Case(thesis=thesis.name, id=label["id"], language=lab["language"], style=lab["style"],
                    format=lab["format"], forms=label.get("forms", []), contradiction=label.get("contradiction", []),
                    expected_verdict=label["verdict"], expected_source=source,
                    expected_page=label.get("page"), marker=label["marker"], claim=label["claim"],
                    source_language=languages.get(source),
                    planted_evidence_pages=planted_evidence_pages(label, (source_pages or {}).get(source)),
                    planted_evidence=label.get("evidence"))
        if row is not None:
            case.found = True
            case.reported_marker, case.reported_claim, case.reported_page = row.marker, row.claim, row.page
            case.reported_source, case.verdict, case.confidence = row.source, row.verdict, row.confidence
            case.similarity = round(sim, 3)
            case.reason = reason_kind(row.rationale)
            case.evidence_page, case.evidence = row.evidence_page, row.evidence
        out.append(case)
    return out, unmatched


#: How much of a planted evidence sentence's words the evidence shown must hold to be it.
EVIDENCE_MATCH = 0.6


def evidence_holds(quote: str, shown: str | None) -> bool:
    """Whether the evidence shown holds the planted sentence ``quote``: at least
    `EVIDENCE_MATCH` of its content words (a passage holding it counts, as does a sentence cut
    a little differently by the reader)."""
    want = words(quote)
    return bool(want) and len(want & words(shown)) >= EVIDENCE_MATCH * len(want)


def planted_evidence_pages(label: dict, pages: int | None) -> list[int] | None:
    """Where the planted evidence of a citation lies: its label's ``evidence_pages`` (written for
    sources of more than one page), else page 1 of a source of one page, else unknown."""
    if label.get("evidence_pages"):
        return list(label["evidence_pages"])
    return [1] if label.get("source") and pages == 1 else None


def source_languages(thesis: Thesis) -> dict[str, str]:
    """File name -> language (``en``/``de``) of each source, read from its text in spec/ (the
    labels do not say it); empty when the folder has no spec."""
    from analysis.pipeline.judging.lexical.words import language

    spec_file = thesis.folder / "spec.json"
    if not spec_file.exists():
        return {}
    spec = json.loads(spec_file.read_text())
    return {Path(s["file"]).name: language((thesis.folder / "spec" / s["text"]).read_text())
            for s in spec.get("sources", []) if (thesis.folder / "spec" / s.get("text", "")).is_file()}


# -- figures --------------------------------------------------------------------------------


def reason_kind(rationale: str | None) -> str | None:
    """The rule a rationale names, without what is particular to the citation (figures, quoted
    words, coverage): "the source states another share", "clauses", "no sentence of the N read
    states the claim's key terms". Aggregated only: which rule of the judge decides how often."""
    if not rationale:
        return None
    text = re.sub(r"^Offline \(lexical\):\s*", "", rationale)
    if text.startswith("clause 1:"):
        verdicts = re.findall(r"clause \d+: (\w+), (\w+ \w+)", text)
        return "clauses judged apart: " + " + ".join(f"{v} ({why}…)" for v, why in verdicts)
    text = re.split(r"[;(“\"]", text, maxsplit=1)[0]
    text = re.sub(r"\d+(?:[.,]\d+)?", "N", text)
    return text.strip(" ,.")[:90]


def bands() -> list[tuple[float, float]]:
    """The judge module's own confidence bands when it exports them, else the defaults."""
    try:
        from analysis.pipeline.judging import verdicts

        exported = getattr(verdicts, "CONFIDENCE_BANDS", None)
        if exported:
            # (low, high) or (name, low, high), as analysis.pipeline.judging.verdicts.CONFIDENCE_BANDS has it; the
            # last band includes 1
            found = [(float(band[-2]), float(band[-1])) for band in exported]
            return found[:-1] + [(found[-1][0], max(found[-1][1], 1.0001))]
    except Exception:  # an older or broken judge module: the defaults still measure
        pass
    return DEFAULT_BANDS


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def figures(cases: list[Case], reported: int, unmatched: int) -> dict:
    """Every stage's figures for a set of planted citations and the reported ones."""
    found = [c for c in cases if c.found]
    judged = [c for c in found if c.verdict is not None]
    decided = [c for c in judged if c.verdict != "uncertain"]
    confusion = {e: {g: 0 for g in VERDICTS + ["unjudged"]} for e in VERDICTS
                 if any(c.expected_verdict == e for c in cases)}
    for c in found:
        confusion.setdefault(c.expected_verdict, {g: 0 for g in VERDICTS + ["unjudged"]})
        confusion[c.expected_verdict][c.verdict or "unjudged"] += 1
    band_rows = []
    for lo, hi in bands():
        inside = [c for c in decided if c.confidence is not None and lo <= c.confidence < hi]
        band_rows.append({"band": f"{lo:g}-{min(hi, 1):g}", "n": len(inside),
                          "accuracy": _ratio(sum(c.verdict_right for c in inside), len(inside))})
    contradicted = defaultdict(lambda: {"n": 0, "supported": 0})
    for c in found:
        for tag in c.contradiction:
            contradicted[tag]["n"] += 1
            contradicted[tag]["supported"] += c.verdict == "supported"
    reasons: dict[str, Counter] = defaultdict(Counter)
    for c in found:
        if c.verdict not in (None, "source_missing"):
            reasons[f"{c.expected_verdict} -> {c.verdict}"][c.reason or "-"] += 1
    # Verdicts on the citations whose source was uploaded: what the judge decided.
    with_source = [c for c in found if c.expected_source is not None and c.resolved_right]
    placed = [c for c in with_source if c.planted_evidence_pages]
    return {
        "planted": len(cases),
        "reported": reported,
        "extraction": {"found": len(found), "recall": _ratio(len(found), len(cases)),
                       "false_positives": unmatched, "precision": _ratio(reported - unmatched, reported),
                       "claim_f1": round(sum(claim_f1(c.claim, c.reported_claim) for c in found) / len(found), 4)
                       if found else None},
        "resolution": {
            "right": sum(c.resolved_right for c in found), "accuracy": _ratio(sum(c.resolved_right for c in found),
                                                                               len(found)),
            "wrong_source": sum(1 for c in found if c.reported_source and c.expected_source
                                and c.reported_source != c.expected_source),
            "unresolved_but_uploaded": sum(1 for c in found if c.expected_source and not c.reported_source),
            "resolved_but_not_uploaded": sum(1 for c in found if not c.expected_source and c.reported_source),
        },
        "verdicts": {
            "accuracy": _ratio(sum(c.verdict_right for c in found), len(found)),
            "accuracy_end_to_end": _ratio(sum(c.verdict_right for c in cases), len(cases)),
            "accuracy_decided": _ratio(sum(c.verdict_right for c in decided), len(decided)),
            "uncertain_share": _ratio(len(judged) - len(decided), len(judged)),
            "accuracy_judged_sources": _ratio(sum(c.verdict_right for c in with_source), len(with_source)),
            "judged_sources": len(with_source),
            "confusion": confusion,
            "confidence_bands": band_rows,
            "contradicted": {tag: dict(v) for tag, v in sorted(contradicted.items())},
            "reasons": {pair: dict(counts.most_common()) for pair, counts in sorted(reasons.items())},
            "supported_on_contradicted_number_or_direction": sum(
                1 for c in found if c.verdict == "supported" and {"number", "direction"} & set(c.contradiction)),
        },
        # Resolved citations whose evidence shown lies on a page holding the planted evidence.
        "evidence": {
            "resolved": len(with_source), "measured": len(placed), "unknown_page": len(with_source) - len(placed),
            "shown": sum(c.evidence_page is not None for c in placed),
            "on_planted_page": sum(c.evidence_placed for c in placed),
            "share": _ratio(sum(c.evidence_placed for c in placed), len(placed)),
            "labelled_pages": sum(c.planted_evidence_pages != [1] for c in placed),
            "labelled_pages_placed": sum(c.evidence_placed for c in placed if c.planted_evidence_pages != [1]),
            # Where the planted evidence sentence is labelled: does the evidence shown hold it?
            "sentence_labelled": sum(bool(c.planted_evidence) for c in with_source),
            "sentence_held": sum(c.evidence_holds_planted for c in with_source),
        },
    }


def report(results: list[dict], cases: list[Case], judge: str, elapsed: float) -> dict:
    reported = {r["thesis"]: r for r in results}

    def group(key) -> dict:
        out = {}
        for value in sorted({key(c) for c in cases}):
            subset = [c for c in cases if key(c) == value]
            theses = {c.thesis for c in subset}
            out[value] = figures(subset, sum(reported[t]["reported"] for t in theses),
                                 sum(reported[t]["unmatched"] for t in theses))
        return out

    by_form = {}
    for form in sorted({f for c in cases for f in c.forms}):
        subset = [c for c in cases if form in c.forms]
        by_form[form] = {"planted": len(subset), "recall": _ratio(sum(c.found for c in subset), len(subset)),
                         "resolution": _ratio(sum(c.resolved_right for c in subset), sum(c.found for c in subset)),
                         "verdict": _ratio(sum(c.verdict_right for c in subset), sum(c.found for c in subset))}
    return {
        "judge": judge,
        "seconds": round(elapsed, 1),
        "theses": results,
        "overall": figures(cases, sum(r["reported"] for r in results), sum(r["unmatched"] for r in results)),
        "by_language": group(lambda c: c.language),
        "by_style": group(lambda c: c.style),
        "by_format": group(lambda c: c.format),
        "by_form": by_form,
        "cross_language": {"de claim, en source": figures(
            [c for c in cases if c.language == "de" and c.source_language == "en"], 0, 0)["evidence"]},
        "cases": [asdict(c) for c in cases],
    }


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:5.1f}%"


def render(rep: dict) -> str:
    o = rep["overall"]
    lines = [f"citeq verdict evaluation: {len(rep['theses'])} theses, {o['planted']} planted citations, "
             f"judge {rep['judge']}, {rep['seconds']} s", ""]
    lines.append(f"{'thesis':<26}{'lang':<5}{'style':<15}{'format':<7}{'job':<11}{'planted':>8}{'reported':>9}"
                 f"{'found':>6}{'source':>7}{'verdict':>8}")
    for t in rep["theses"]:
        tc = [c for c in rep["cases"] if c["thesis"] == t["thesis"]]
        status = t["status"] if not t.get("error") else "error"
        lines.append(f"{t['thesis'][:25]:<26}{t['language']:<5}{t['style'][:14]:<15}{t['format']:<7}{status:<11}"
                     f"{len(tc):>8}{t['reported']:>9}{sum(c['found'] for c in tc):>6}"
                     f"{sum(c['found'] and c['reported_source'] == c['expected_source'] for c in tc):>7}"
                     f"{sum(c['found'] and c['verdict'] == c['expected_verdict'] for c in tc):>8}")
        if t.get("error"):
            lines.append(f"    {t['error']}")
    lines += ["", "stage figures", f"{'':<30}{'recall':>8}{'precision':>10}{'claim F1':>9}{'resolution':>11}"
              f"{'verdict':>9}{'decided':>9}{'uncertain':>10}"]

    def row(name: str, f: dict) -> str:
        v = f["verdicts"]
        return (f"{name:<30}{_pct(f['extraction']['recall']):>8}{_pct(f['extraction']['precision']):>10}"
                f"{_pct(f['extraction']['claim_f1']):>9}"
                f"{_pct(f['resolution']['accuracy']):>11}{_pct(v['accuracy']):>9}{_pct(v['accuracy_decided']):>9}"
                f"{_pct(v['uncertain_share']):>10}")

    lines.append(row("all", o))
    for title, key in (("language", "by_language"), ("style", "by_style"), ("format", "by_format")):
        for value, f in rep[key].items():
            lines.append(row(f"  {title} {value}", f))
    v = o["verdicts"]
    lines += ["", "recall, precision: citations found; claim F1: words of the reported claims against the planted "
              "ones;", "resolution: right source or rightly unresolved; verdict: right among the citations found;",
              "decided: right among those not 'uncertain'; uncertain: share of the verdicts",
              f"end to end (right / planted): {_pct(v['accuracy_end_to_end'])}; on citations whose uploaded "
              f"source was resolved right: {_pct(v['accuracy_judged_sources'])} of {v['judged_sources']}",
              "", "confusion (rows: planted verdict, columns: the pipeline's)"]
    cols = VERDICTS + ["unjudged"]
    short = {"supported": "supp", "partially_supported": "partial", "not_supported": "not_supp",
             "uncertain": "uncert", "source_missing": "missing", "unjudged": "none"}
    lines.append(f"{'':<22}" + "".join(f"{short[c]:>9}" for c in cols))
    for expected, got in v["confusion"].items():
        lines.append(f"{expected:<22}" + "".join(f"{got.get(c, 0):>9}" for c in cols))
    lines.append(f"{'':<22}(found citations only; 'none' = not judged when the job ended)")
    lines += ["", "accuracy per confidence band (decided verdicts)"]
    for b in v["confidence_bands"]:
        lines.append(f"  {b['band']:<10} n={b['n']:<4} {_pct(b['accuracy'])}")
    lines += ["", "contradicted claims judged 'supported'"]
    for tag, c in v["contradicted"].items():
        lines.append(f"  {tag:<10} {c['supported']} of {c['n']}")
    lines.append(f"  supported on a contradicted number or direction: "
                 f"{v['supported_on_contradicted_number_or_direction']}")
    lines += ["", "evidence shown on the page of the source that holds the planted evidence (resolved citations)"]
    for name, ev in (("all", o["evidence"]), *rep.get("cross_language", {}).items()):
        lines.append(f"  {name:<20} {_pct(ev['share'])}  ({ev['on_planted_page']} of {ev['measured']}; "
                     f"{ev['shown']} with evidence shown; {ev['labelled_pages_placed']} of {ev['labelled_pages']} "
                     f"on labelled pages of longer sources; {ev['unknown_page']} of unknown page left out)")
        if ev["sentence_labelled"]:
            lines.append(f"  {'':<20} the planted evidence sentence shown: {ev['sentence_held']} of "
                         f"{ev['sentence_labelled']} labelled")
    lines += ["", "the judge's reasons (planted -> judged: rule, count; aggregate, no citation shown)"]
    for pair, counts in v["reasons"].items():
        lines.append(f"  {pair}")
        lines.extend(f"    {n:>3}  {kind}" for kind, n in counts.items())
    lines += ["", f"per citation form{'':<9}{'planted':>8}{'recall':>8}{'source':>8}{'verdict':>8}"]
    for form, f in rep["by_form"].items():
        lines.append(f"  {form:<24}{f['planted']:>8}{_pct(f['recall']):>8}{_pct(f['resolution']):>8}"
                     f"{_pct(f['verdict']):>8}")
    missed = [c for c in rep["cases"] if not c["found"]]
    if missed:
        lines += ["", f"not found ({len(missed)}):"]
        lines += [f"  {c['thesis']} {c['id']} {c['marker']!s:<28} {c['claim'][:70]}" for c in missed[:40]]
        if len(missed) > 40:
            lines.append(f"  ... and {len(missed) - 40} more (--json lists every case)")
    return "\n".join(lines)


# -- the run through the real pipeline ------------------------------------------------------


class Worker:
    """One ``dramatiq actors`` process; stopped whatever happens."""

    def __init__(self, env: dict[str, str], log: Path, threads: int) -> None:
        exe = Path(sys.executable).parent / "dramatiq"
        log.parent.mkdir(parents=True, exist_ok=True)
        self.log = log
        self.proc = subprocess.Popen(
            [str(exe) if exe.exists() else "dramatiq", "actors", "--processes", "1", "--threads", str(threads),
             "--path", str(ROOT)], cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)

    def check(self) -> None:
        if self.proc.poll() is not None:
            raise EvalFailed(f"the worker exited with status {self.proc.returncode}:\n"
                             f"{self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def database() -> str:
    """DATABASE_URL, else a fresh ``citeq_eval`` database on the embedded server."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    from citeq import devdb

    admin = devdb.EmbeddedPostgres.for_name("main").start()
    devdb.ensure_database(admin, EVAL_DB, recreate=True)
    return devdb.with_dbname(admin, EVAL_DB)


def wait(predicate, deadline: float, worker: Worker, what: str, interval: float = 0.2):
    while True:
        value = predicate()
        if value:
            return value
        worker.check()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not finish in time")
        time.sleep(interval)


@dataclass
class Run:
    thesis: Thesis
    user_id: int = 0
    parse_job_id: int = 0
    documents: dict[str, int] = field(default_factory=dict)
    job_id: int | None = None
    status: str = "not started"
    error: str | None = None


def run_pipeline(theses: list[Thesis], *, judge: str | None, timeout: float, threads: int, say) -> list[Run]:
    from broker.migrate import migrate

    url = database()
    os.environ["DATABASE_URL"] = url
    if judge:
        os.environ["CITEQ_JUDGE"] = judge
    migrate(url)
    import actors
    from analysis.pipeline.intake import uploads
    from analysis.queue import userqueue
    from analysis.surface import accounts, views
    from citeq import uploading

    broker = actors.broker
    settings = actors.config.current()
    env = dict(os.environ, DATABASE_URL=url, PYTHONUNBUFFERED="1")
    log = Path(os.environ.get("CITEQ_HOME") or ROOT / ".citeq") / "eval" / "worker.log"
    worker = Worker(env, log, threads)
    say(f"worker started (log {log}); judge {env.get('CITEQ_JUDGE') or 'offline'}")
    runs = [Run(t) for t in theses]
    deadline = time.monotonic() + timeout
    stamp = datetime.now().strftime("%Y%m%d%H%M%S%f")
    try:
        for run in runs:
            lab = run.thesis.labels
            files = [run.thesis.folder / lab["thesis"]] + [run.thesis.folder / s["file"] for s in lab["sources"]]
            run.user_id = accounts.create(broker, f"eval-{stamp}-{run.thesis.name}"[:60], credits=5)
            staged = uploading.upload_files(broker, run.user_id, files, settings=settings.pipeline, kinds={
                f.name: "thesis" if i == 0 else "source" for i, f in enumerate(files)})
            run.parse_job_id = staged["parse_job_id"]
        for run in runs:
            try:
                view = wait(lambda: (v := uploads.parse_status(run.user_id, run.parse_job_id, broker=broker,
                                                              settings=settings.pipeline))
                            .terminal and v, deadline, worker, f"parsing {run.thesis.name}")
            except TimeoutError as exc:
                run.status, run.error = "not parsed", str(exc)
                continue
            failed = [f"{i.filename}: {i.error_code}" for i in view.items if i.status.value != "parsed"]
            run.documents = {i.filename: i.document_id for i in view.items if i.document_id}
            thesis_file = Path(run.thesis.labels["thesis"]).name
            if failed:
                run.error = "not parsed: " + "; ".join(failed)
            if thesis_file not in run.documents:
                run.status = "not parsed"
                continue
            sources = [d for name, d in run.documents.items() if name != thesis_file]
            try:
                run.job_id = userqueue.admit(run.user_id, run.documents[thesis_file], sources, broker=broker,
                                             settings=settings.queue).job_id
            except Exception as exc:  # a refused admission is a figure of this thesis, not the end
                run.status, run.error = "refused", f"{type(exc).__name__}: {exc}"
        ids = [r.job_id for r in runs if r.job_id is not None]
        say(f"{len(ids)} analyses admitted; waiting for them to end ...")
        if ids:
            try:
                wait(lambda: all(j.status in TERMINAL for j in views.jobs(broker, ids=ids, limit=len(ids))),
                     deadline, worker, "the analyses", interval=0.5)
            except TimeoutError as exc:
                say(f"warning: {exc}; measuring what is there")
        statuses = {j.id: j for j in views.jobs(broker, ids=ids, limit=max(1, len(ids)))} if ids else {}
        for run in runs:
            if run.job_id in statuses:
                job = statuses[run.job_id]
                run.status = job.status
                if job.error:
                    run.error = ((run.error + "; ") if run.error else "") + job.error
    finally:
        worker.stop()
    return runs


def reported_rows(run: Run) -> list[Reported]:
    if run.job_id is None:
        return []
    from analysis.pipeline import analyze as pipeline

    names = {d: name for name, d in run.documents.items()}
    return [Reported(ordinal=c.ordinal, marker=c.marker, claim=c.claim, page=c.page,
                     source=names.get(c.source_document_id) if c.source_document_id else None,
                     verdict=c.verdict, confidence=c.confidence, rationale=c.rationale, evidence_page=c.evidence_page,
                     evidence=c.evidence)
            for c in pipeline.citations(run.user_id, run.job_id)]


def check_judge(judge: str | None) -> None:
    """Fail before the worker starts when the judge asked for cannot be built from the environment
    (``--judge openai`` without CITEQ_JUDGE_BASE_URL or CITEQ_JUDGE_MODEL): the worker would fail
    every citation instead."""
    from analysis.pipeline.judging.registry import judge_from_env

    env = dict(os.environ, CITEQ_JUDGE=judge) if judge else dict(os.environ)
    try:
        judge_from_env(env)
    except ValueError as exc:
        raise EvalFailed(f"the judge cannot be built: {exc} (see docs/howto/llm-judge.md)") from exc


def source_pages(run: Run) -> dict[str, int | None]:
    """File name -> pages as parsed, of the sources the job was admitted with."""
    if run.job_id is None:
        return {}
    from analysis import messages
    from analysis.surface import report as reports

    built = reports.build(messages.broker_or_global(None), run.job_id, user_id=run.user_id)
    return {s.filename: s.pages for s in built.sources} if built else {}


def evaluate(dirs: list[str], *, judge: str | None = None, timeout: float = 600.0, threads: int = 8,
             say=lambda text: None) -> dict:
    """Run the theses through the pipeline and return the report (what ``--json`` prints)."""
    started = time.monotonic()
    theses = find_theses(dirs)
    check_judge(judge)
    runs = run_pipeline(theses, judge=judge, timeout=timeout, threads=threads, say=say)
    results, cases = [], []
    for run in runs:
        rows = reported_rows(run)
        found, unmatched = cases_for(run.thesis, rows, source_pages(run))
        cases += found
        lab = run.thesis.labels
        results.append({"thesis": run.thesis.name, "file": lab["thesis"], "language": lab["language"],
                        "style": lab["style"], "format": lab["format"], "job_id": run.job_id,
                        "status": run.status, "error": run.error, "reported": len(rows), "unmatched": unmatched})
    return report(results, cases, os.environ.get("CITEQ_JUDGE") or "offline", time.monotonic() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[2], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Environment: DATABASE_URL (else the embedded server), CITEQ_JUDGE and the CITEQ_JUDGE_* "
               "endpoint settings (passed to the worker), CITEQ_HOME (where the worker log goes).")
    parser.add_argument("dirs", nargs="+", metavar="DIR", help="a thesis folder (with labels.json) or a folder of them")
    parser.add_argument("--json", action="store_true", help="print the figures (and every case) as JSON")
    parser.add_argument("--judge", choices=["offline", "openai"], help="CITEQ_JUDGE for the worker")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole run (default 600)")
    parser.add_argument("--threads", type=int, default=8, help="worker threads (default 8)")
    args = parser.parse_args(argv)
    say = (lambda text: print(text, file=sys.stderr, flush=True))
    try:
        rep = evaluate(args.dirs, judge=args.judge, timeout=args.timeout, threads=args.threads, say=say)
    except EvalFailed as exc:
        print(f"eval_verdicts: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(rep, indent=2, ensure_ascii=False) if args.json else render(rep))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
