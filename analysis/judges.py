"""Judges: decide whether retrieved passages support a claim.

Two implementations of the `Judge` protocol:

- `OfflineJudge`, the default: a deterministic **heuristic**, no network. It
  measures how many of the claim's key terms and numbers the best passage covers
  and looks for negation or contradiction cues. It is a smoke detector, not a
  reader: it catches clear support, clear contradiction and wrong numbers.
- `OpenAIJudge`: any server speaking OpenAI's chat-completions wire format
  (OpenAI, vLLM, Ollama, LiteLLM, ...), called with `httpx`.

"Source missing" is decided before judging (no uploaded source matches the
citation); `source_missing_judgement` builds that answer so every verdict has
one shape. Settings come from the environment only in `judge_from_env`.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Literal, Protocol

import httpx
from pydantic import BaseModel, Field, ValidationError, field_validator

from analysis import lexical
from analysis.chunking import sentence_spans
from analysis.retrieval import Hit, tokenize


class Verdict(str, Enum):
    """How well the cited source backs the claim."""

    #: the source states the claim
    supported = "supported"
    #: the source states part of the claim, or states it with less certainty
    partially_supported = "partially_supported"
    #: the source does not state the claim, or contradicts it
    not_supported = "not_supported"
    #: the evidence does not decide it: a reader should look at the best passage
    uncertain = "uncertain"
    #: no uploaded source matches the citation
    source_missing = "source_missing"


class Judgement(BaseModel):
    """A verdict with its evidence: the passage (and page) it rests on."""

    verdict: Verdict
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: str | None = None
    evidence_page: int | None = None
    rationale: str


class Judge(Protocol):
    """Anything that turns a claim and its candidate passages into a judgement."""

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Judge `claim` against `passages` (best first)."""
        ...


def source_missing_judgement(marker: str) -> Judgement:
    """The judgement for a citation whose source was not uploaded."""
    return Judgement(
        verdict=Verdict.source_missing,
        confidence=1.0,
        rationale=f"No uploaded source matches the citation {marker}.",
    )


def _no_passages() -> Judgement:
    return Judgement(
        verdict=Verdict.uncertain,
        confidence=0.1,
        rationale="The cited source has no passage to compare the claim with.",
    )


#: Confidence bands, (name, lower bound inclusive, upper bound exclusive; the last includes 1).
#: Offline verdicts are calibrated to them: `uncertain` is always "low"; a verdict resting on
#: a decisive cue (a figure, a direction) is "high"; one resting on word overlap alone, or
#: on a negation or an overstatement, is "medium". The evaluation reports accuracy per band.
CONFIDENCE_BANDS: tuple[tuple[str, float, float], ...] = (("low", 0.0, 0.5), ("medium", 0.5, 0.75),
                                                          ("high", 0.75, 1.0))


def confidence_band(confidence: float) -> str:
    """The name of the band a confidence falls in (see `CONFIDENCE_BANDS`)."""
    for name, low, high in CONFIDENCE_BANDS:
        if low <= confidence < high:
            return name
    return CONFIDENCE_BANDS[-1][0]


# --- offline judge ---------------------------------------------------------


class _Sentence(BaseModel):
    """A verbatim sentence of a retrieved passage, with its neighbours' text for context."""

    text: str
    window: str
    hit: Hit
    rank: int
    lang: str


class _Assessment(BaseModel):
    verdict: Verdict
    confidence: float
    reason: str
    #: how decisive the cue was: "figure", "direction", "negation", "absolute", "overlap", "weak"
    cue: str
    coverage: float
    sentence: _Sentence | None


_CLAUSE_BREAK = re.compile(
    r"\s*;\s+|,?\s+(?=(?:but|whereas|while|although|though|yet|however|aber|jedoch|doch|sondern|"
    r"während|wohingegen|obwohl|wobei)\b)|,?\s+(?=(?:and|und)\s)",
    re.I,
)


class OfflineJudge:
    """A deterministic judge that decides only what lexical evidence can decide.

    The claim's content terms (Snowball stems in the claim's language, English or German,
    without stop words or cue words; German compounds meet their parts) are looked up in
    every sentence of the retrieved passages. The sentence covering most of them is the
    *focus*; its text is the evidence, verbatim, with its passage's page. Then, for the
    focus (the clause of it closest to the claim, for direction and negation):

    - coverage below `related_at`, even with the neighbouring sentences → `uncertain`;
    - a figure of the claim that no passage states, while the focus states another figure
      of the same unit (12 % for 21 %, 3.5 h for 35 h), or the same figure in another
      unit → `not_supported` (high confidence);
    - a direction opposite to the focus's on the same axis (increase/decrease,
      improve/worsen; steigen/sinken …) → `not_supported` (high);
    - the claim asserts what the focus denies, or the reverse → `not_supported` (medium);
    - an absolute claim ("all", "always", "eliminates", "vollständig") against hedged or
      plain source language → `partially_supported` (overstated; medium);
    - matching figures or a matching direction with coverage ≥ `related_at` →
      `supported` (high); coverage ≥ `supported_at` without a cue → `supported` (medium);
    - anything else (a figure found nowhere, middling coverage) → `uncertain` (low).

    A contradicted figure or direction is never `supported`. A claim of several clauses
    ("…, whereas …", "; ", ", and …") is judged as a whole and clause by clause: a
    contradiction in any clause decides; clauses supported and unfound make a partial.
    Confidences fall in `CONFIDENCE_BANDS`.
    """

    name = "offline"

    def __init__(self, *, supported_at: float = 0.75, related_at: float = 0.5) -> None:
        self.supported_at = supported_at
        self.related_at = related_at

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Judge `claim` against `passages` (best first)."""
        sentences = _sentences(passages)
        if not sentences:
            return _no_passages()
        whole = self._assess(claim, sentences)
        lang = lexical.language(claim)
        clauses = [c for c in _CLAUSE_BREAK.split(claim) if c and len(set(lexical.content_terms(c, lang))) >= 3]
        if len(clauses) < 2:
            return self._judgement(whole)
        return self._judgement(self._combine(whole, [self._assess(c, sentences) for c in clauses]))

    # -- one claim (or clause) against the sentences --

    def _assess(self, claim: str, sentences: list[_Sentence]) -> _Assessment:
        claim_lang = lexical.language(claim)
        scored = []
        for s in sentences:
            terms = _unique(lexical.content_terms(claim, s.lang))
            if not terms:
                continue
            compounds = "de" in (s.lang, claim_lang)
            scored.append((_coverage(terms, s.text, s.lang, compounds), _coverage(terms, s.window, s.lang, compounds),
                           -s.rank, s))
        if not scored:
            return _Assessment(verdict=Verdict.uncertain, confidence=0.1, cue="weak", coverage=0.0, sentence=None,
                               reason="the claim has no content words to look for")
        cov, cov_window, _, focus = max(scored, key=lambda x: x[:3])
        clause = _closest_clause(claim, focus, compounds="de" in (focus.lang, claim_lang))
        context = " ".join(s.text for s in sentences)
        if max(cov, cov_window) < self.related_at:
            figure = self._figure_elsewhere(claim, claim_lang, scored, context)
            if figure is not None:
                return figure
        return self._decide(claim, claim_lang, focus, clause, cov, cov_window, context)

    def _figure_elsewhere(self, claim: str, claim_lang: str, scored: list, context: str) -> _Assessment | None:
        """When no sentence is clearly about the claim: a sentence that shares some of its terms
        and states another figure of the unit the claim measures ("six weeks" for "12 weeks")
        still contradicts it (medium confidence: the subject match is loose)."""
        if not any(q.unit and not q.weak for q in lexical.quantities(claim, claim_lang)):
            return None
        for cov, cov_window, _, sentence in sorted(scored, key=lambda x: x[:3], reverse=True):
            if max(cov, cov_window) < 0.25:
                break
            figures = _compare_figures(claim, claim_lang, sentence, context, units_only=True)
            if figures.contradiction:
                return _Assessment(verdict=Verdict.not_supported, confidence=0.62, cue="figure", coverage=cov,
                                   sentence=sentence, reason=figures.contradiction)
        return None

    def _decide(self, claim: str, claim_lang: str, focus: _Sentence, clause: str, cov: float,
                cov_window: float, context: str) -> _Assessment:
        def result(verdict: Verdict, confidence: float, cue: str, reason: str) -> _Assessment:
            return _Assessment(verdict=verdict, confidence=round(confidence, 3), cue=cue, coverage=cov,
                               sentence=focus, reason=reason)

        related = max(cov, cov_window)
        if related < self.related_at:
            return result(Verdict.uncertain, 0.1 + 0.35 * related, "weak",
                          "the retrieved passages share few of the claim's key terms")
        strength = min(1.0, (related - self.related_at) / (1 - self.related_at))
        figures = _compare_figures(claim, claim_lang, focus, context)
        if figures.contradiction:
            return result(Verdict.not_supported, 0.78 + 0.17 * strength, "figure", figures.contradiction)
        clause_cov = max(cov, _coverage(_unique(lexical.content_terms(claim, focus.lang)), clause, focus.lang, True))
        on_subject = clause_cov >= self.related_at
        direction = _compare_directions(claim, clause) if on_subject else None
        if direction == "conflict":
            return result(Verdict.not_supported, 0.75 + 0.15 * strength, "direction",
                          "the source states the opposite direction")
        if on_subject and lexical.negated(claim) != lexical.negated(clause):
            which = "denies what the claim asserts" if lexical.negated(clause) else "asserts what the claim denies"
            return result(Verdict.not_supported, 0.6 + 0.14 * strength, "negation", f"the source {which}")
        overstated = _overstatement(claim, focus.window)
        if overstated and on_subject:
            return result(Verdict.partially_supported, 0.6 + 0.1 * strength, "absolute",
                          f"the claim overstates the source ({overstated})")
        if figures.unmatched:
            return result(Verdict.uncertain, 0.35, "weak",
                          f"no passage states the claim's figure {figures.unmatched}; check the source")
        if figures.matched and on_subject and related >= 0.6:
            return result(Verdict.supported, 0.78 + 0.17 * strength, "figure",
                          "the source states the claim's figures and key terms")
        if direction == "agree" and clause_cov >= 0.6:
            return result(Verdict.supported, 0.75 + 0.15 * strength, "direction",
                          "the source states the claim's direction and key terms")
        if cov >= self.supported_at:
            return result(Verdict.supported, 0.55 + 0.19 * min(1.0, (cov - self.supported_at) / (1 - self.supported_at)),
                          "overlap", "the source's sentence states the claim's key terms")
        if cov_window >= self.supported_at + 0.05:
            return result(Verdict.supported, 0.52, "overlap", "neighbouring sentences of the source state the claim's key terms")
        return result(Verdict.uncertain, 0.3 + 0.15 * related, "weak",
                      "the source shares some of the claim's key terms, but no cue decides")

    def _combine(self, whole: _Assessment, parts: list[_Assessment]) -> _Assessment:
        everyone = [whole, *parts]
        decisive = [a for a in everyone if a.verdict is Verdict.not_supported and a.cue in ("figure", "direction")]
        if decisive:
            return max(decisive, key=lambda a: a.confidence)
        verdicts = [a.verdict for a in parts]
        reasons = "; ".join(f"clause {i}: {a.verdict.value}, {a.reason}" for i, a in enumerate(parts, 1))
        supported = [a for a in parts if a.verdict is Verdict.supported]
        if Verdict.not_supported in verdicts or Verdict.partially_supported in verdicts:
            if supported or Verdict.partially_supported in verdicts:
                lead = max(parts, key=lambda a: a.coverage)
                return lead.model_copy(update={"verdict": Verdict.partially_supported, "confidence": 0.6,
                                               "reason": reasons, "cue": "clauses"})
            return max(parts, key=lambda a: a.confidence).model_copy(update={"reason": reasons})
        if whole.verdict is Verdict.supported or all(v is Verdict.supported for v in verdicts):
            best = whole if whole.verdict is Verdict.supported else max(parts, key=lambda a: a.confidence)
            return best
        if supported:
            return supported[0].model_copy(update={"verdict": Verdict.partially_supported, "confidence": 0.5,
                                                   "reason": reasons, "cue": "clauses"})
        return whole

    def _judgement(self, a: _Assessment) -> Judgement:
        return Judgement(
            verdict=a.verdict,
            confidence=a.confidence,
            evidence=a.sentence.text if a.sentence else None,
            evidence_page=a.sentence.hit.page if a.sentence else None,
            rationale=f"Offline (lexical): {a.reason}; key-term coverage {a.coverage:.0%} in the closest sentence.",
        )


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _sentences(passages: Sequence[Hit]) -> list[_Sentence]:
    """Every sentence of every passage, verbatim (offsets into the passage text)."""
    out = []
    for rank, hit in enumerate(passages):
        lang = lexical.language(hit.text)
        spans = sentence_spans(hit.text) or [(0, len(hit.text))]
        texts = [hit.text[a:b].strip() for a, b in spans]
        for i, text in enumerate(texts):
            if not text:
                continue
            window = " ".join(texts[max(0, i - 1):i + 2])
            out.append(_Sentence(text=text, window=window, hit=hit, rank=rank, lang=lang))
    return out


def _coverage(terms: list[str], text: str, lang: str, compounds: bool) -> float:
    found = set(lexical.content_terms(text, lang))
    if not terms:
        return 0.0
    return sum(lexical.term_match(t, found, compounds) for t in terms) / len(terms)


def _closest_clause(claim: str, focus: _Sentence, compounds: bool) -> str:
    """The clause of the focus sentence closest to the claim (the whole sentence when one)."""
    clauses = [c for c in _CLAUSE_BREAK.split(focus.text) if c and c.strip()]
    if len(clauses) < 2:
        return focus.text
    terms = _unique(lexical.content_terms(claim, focus.lang))
    return max(clauses, key=lambda c: _coverage(terms, c, focus.lang, compounds))


class _Figures(BaseModel):
    contradiction: str | None = None
    unmatched: str | None = None
    matched: bool = False


def _family(unit: str | None) -> str | None:
    return "%" if unit in ("%", "pp") else unit


def _compare_figures(claim: str, claim_lang: str, focus: _Sentence, context: str, *,
                     units_only: bool = False) -> _Figures:
    """The claim's figures against the passages: contradicted (another figure of the same unit
    next to the claim's subject, or the same figure in another unit), unmatched, or matched."""
    claimed = [q for q in lexical.quantities(claim, claim_lang) if not q.weak and (q.unit or not units_only)]
    if not claimed:
        return _Figures()
    stated = lexical.quantities(context, focus.lang)
    nearby = [q for q in lexical.quantities(focus.window, focus.lang) if not q.weak]
    unmatched = []
    for q in claimed:
        if any(lexical.same_value(q, s) and _units_agree(q, s) for s in stated) or _derived(q, nearby):
            continue
        same_unit = [s for s in nearby if _family(s.unit) == _family(q.unit)]
        if same_unit:
            return _Figures(contradiction=f"the claim says {q.text}, the source says "
                                          f"{', '.join(dict.fromkeys(s.text for s in same_unit))}")
        other_unit = [s for s in nearby if lexical.same_value(q, s) and s.unit and q.unit]
        if other_unit:
            return _Figures(contradiction=f"the claim says {q.text}, the source says {other_unit[0].text} "
                                          "(another unit)")
        unmatched.append(q.text)
    return _Figures(unmatched=", ".join(unmatched) or None, matched=not unmatched)


def _units_agree(claimed: lexical.Quantity, stated: lexical.Quantity) -> bool:
    return claimed.unit is None or stated.unit is None or _family(claimed.unit) == _family(stated.unit)


def _derived(q: lexical.Quantity, nearby: list[lexical.Quantity]) -> bool:
    """A claimed figure that is the difference or ratio of two nearby figures of one unit
    ("rose by 14 points" for "from 58 % to 72 %"; "doubled" for 10 → 20)."""
    for a in nearby:
        for b in nearby:
            if a is b or _family(a.unit) != _family(b.unit) or not _units_agree(q, a):
                continue
            diff = abs(a.value - b.value)
            if diff and round(diff, max(q.decimals, 1)) == round(q.value, max(q.decimals, 1)):
                return True
            if q.unit in (None, "x") and b.value and round(a.value / b.value, 1) == q.value:
                return True
    return False


def _compare_directions(claim: str, clause: str) -> str | None:
    """"conflict" when the clause states the opposite direction on an axis the claim states,
    "agree" when it states the same, None when either states none (or the clause is mixed)."""
    mine, theirs = lexical.directions(claim), lexical.directions(clause)
    agreed = 0
    for axis, signs in mine.items():
        other = theirs.get(axis)
        if not other:
            continue
        if len(set(signs)) == 1 and set(other) == {-signs[0]}:
            return "conflict"
        if len(signs) == len(other) >= 2 and signs == [-s for s in other]:
            return "conflict"
        if signs == other or (len(set(signs)) == 1 and set(other) == set(signs)):
            agreed += 1
    # Agreement needs every direction of the claim stated alike: "reduced X and improved Y"
    # is not backed by "reduced X" alone.
    return "agree" if mine and agreed == len(mine) else None


def _overstatement(claim: str, source: str) -> str | None:
    """The absolute words of the claim the source does not back: a strong one ("eliminates",
    "always", "vollständig") the source does not use, or a weak one ("all", "alle") against a
    hedged source. None when the claim hedges itself or nothing is overstated."""
    if lexical.hedged(claim):
        return None
    strong, weak = lexical.absolutes(claim)
    source_strong, source_weak = lexical.absolutes(source)
    said = {lexical.stem(w, "en") for w in source_strong + source_weak}
    unbacked = [w for w in strong if lexical.stem(w, "en") not in said]
    if unbacked:
        return ", ".join(unbacked)
    if weak and lexical.hedged(source) and not any(lexical.stem(w, "en") in said for w in weak):
        return f"{', '.join(weak)} against hedged source language"
    return None


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- OpenAI-compatible HTTP judge ------------------------------------------


class ProviderError(Exception):
    """The judge provider failed."""


class ProviderUnavailable(ProviderError):
    """The judge provider cannot be reached or failed on its side (5xx); retry later."""


class ProviderRateLimited(ProviderError):
    """The judge provider asked us to slow down (HTTP 429)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        #: seconds to wait, from the Retry-After header, if the provider sent one
        self.retry_after = retry_after


class ProviderBadResponse(ProviderError):
    """The judge provider answered, but not with a verdict we can read."""


class ProviderRejected(ProviderError):
    """The judge provider refused the request (4xx other than 429): fix the configuration."""


SYSTEM_PROMPT = """You check citations in academic theses. You get a claim from a thesis and \
numbered passages from the source it cites. Decide whether the passages support the claim.
Answer with one JSON object and nothing else:
{"verdict": "supported" | "partially_supported" | "not_supported",
 "confidence": number between 0 and 1,
 "evidence_index": number of the passage your verdict rests on, or null,
 "rationale": one or two sentences}
Use "partially_supported" when the source backs only part of the claim or states it more weakly; \
"not_supported" when the source does not say it or says the opposite."""


class _Answer(BaseModel):
    verdict: Literal["supported", "partially_supported", "not_supported"]
    confidence: float = Field(ge=0.0, le=1.0)
    evidence_index: int | None = None
    rationale: str = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        # Models write "Partially supported" or "partially-supported" as often as the spec.
        return re.sub(r"[\s-]+", "_", value.strip().lower()) if isinstance(value, str) else value


class OpenAICompatibleClient:
    """The HTTP side of an OpenAI-compatible provider: base URL, bearer key, timeout and
    pooled connections (shared by the judge and the embedder)."""

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self._client = httpx.Client(
            base_url=base_url.rstrip("/") + "/", headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class OpenAIJudge(OpenAICompatibleClient):
    """A judge backed by an OpenAI-compatible ``POST {base_url}/chat/completions``."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        json_mode: bool = True,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url=base_url, model=model, api_key=api_key, timeout=timeout, transport=transport)
        self.json_mode = json_mode

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Ask the provider; raises a `ProviderError` subclass on failure."""
        if not passages:
            return _no_passages()  # nothing to show the model: no call, no cost
        content = self._complete(self._messages(claim, passages))
        answer = _parse_answer(content, len(passages))
        evidence = passages[answer.evidence_index - 1] if answer.evidence_index else None
        return Judgement(
            verdict=Verdict(answer.verdict),
            confidence=answer.confidence,
            evidence=evidence.text if evidence else None,
            evidence_page=evidence.page if evidence else None,
            rationale=answer.rationale or "(no rationale given)",
        )

    def _messages(self, claim: str, passages: Sequence[Hit]) -> list[dict[str, str]]:
        numbered = "\n\n".join(f"Passage {i} (page {p.page}):\n{p.text}" for i, p in enumerate(passages, 1))
        user = f"Claim:\n{claim}\n\n{numbered}"
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def _complete(self, messages: list[dict[str, str]]) -> str:
        body: dict[str, object] = {"model": self.model, "messages": messages, "temperature": 0}
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        try:
            response = self._client.post("chat/completions", json=body)
        except httpx.TransportError as exc:  # connect, read, timeouts, broken protocol
            raise ProviderUnavailable(f"judge provider unreachable: {exc!r}") from exc
        _raise_for_status(response)
        try:
            return response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderBadResponse(f"not a chat-completions response: {_clip(response.text)!r}") from exc


def _raise_for_status(response: httpx.Response) -> None:
    status = response.status_code
    if status == 429:
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        raise ProviderRateLimited(f"judge provider rate-limited us (429), retry after {retry_after}s", retry_after)
    if status >= 500:
        raise ProviderUnavailable(f"judge provider failed with HTTP {status}")
    if status >= 400:
        raise ProviderRejected(f"judge provider rejected the request: HTTP {status} {_clip(response.text)}")


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _parse_answer(content: object, n_passages: int) -> _Answer:
    if not isinstance(content, str):
        raise ProviderBadResponse(f"message content is not text: {content!r}")
    # Models asked for JSON still wrap it in ```json fences now and then.
    text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", content)
    try:
        answer = _Answer.model_validate(json.loads(text))
    except (ValueError, ValidationError) as exc:
        raise ProviderBadResponse(f"unreadable verdict: {_clip(content)!r}") from exc
    if answer.evidence_index is not None and not 1 <= answer.evidence_index <= n_passages:
        raise ProviderBadResponse(f"evidence_index {answer.evidence_index} is not one of 1..{n_passages}")
    return answer


# --- configuration ----------------------------------------------------------


class JudgeSettings(BaseModel):
    """Judge configuration; `judge_from_env` fills it from CITEQ_JUDGE_* variables."""

    kind: Literal["offline", "openai"] = "offline"
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout: float = Field(default=30.0, gt=0)


def judge_from_env(env: Mapping[str, str]) -> Judge:
    """Build the configured judge from CITEQ_JUDGE (offline|openai), CITEQ_JUDGE_BASE_URL,
    CITEQ_JUDGE_MODEL, CITEQ_JUDGE_API_KEY and CITEQ_JUDGE_TIMEOUT (seconds).

    Raises ValueError naming the variable when the configuration is incomplete.
    """
    settings = JudgeSettings(
        kind=(env.get("CITEQ_JUDGE") or "offline").strip().lower(),
        base_url=env.get("CITEQ_JUDGE_BASE_URL") or None,
        model=env.get("CITEQ_JUDGE_MODEL") or None,
        api_key=env.get("CITEQ_JUDGE_API_KEY") or None,
        timeout=env.get("CITEQ_JUDGE_TIMEOUT") or 30.0,
    )
    if settings.kind == "offline":
        return OfflineJudge()
    for name, value in (("CITEQ_JUDGE_BASE_URL", settings.base_url), ("CITEQ_JUDGE_MODEL", settings.model)):
        if not value:
            raise ValueError(f"CITEQ_JUDGE=openai needs {name}")
    return OpenAIJudge(
        base_url=settings.base_url, model=settings.model, api_key=settings.api_key, timeout=settings.timeout
    )
