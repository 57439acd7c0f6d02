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

from analysis.chunking import split_sentences
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
        verdict=Verdict.not_supported,
        confidence=0.5,
        rationale="No passage of the cited source shares a key term with the claim.",
    )


# --- offline heuristic ------------------------------------------------------

#: Cues that flip a statement's polarity (English and German). "without"/"ohne"
#: are left out: "summers without a heat wave" negates nothing the claim says.
NEGATION_CUES = (
    "not", "no", "never", "neither", "nor", "cannot", "none", "fail", "failed",
    "fails", "contrary", "unlike", "lack", "lacked", "absence",
    "kein", "keine", "keinen", "keiner", "nicht", "nie", "niemals", "weder",
)
_NEGATION = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in NEGATION_CUES) + r")\b|n't\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?![\w])")


class _Assessment(BaseModel):
    verdict: Verdict
    reason: str
    coverage: float
    focus: str
    evidence: Hit


class OfflineJudge:
    """A deterministic heuristic judge; see the module docstring for its limits.

    Key terms are the claim's content words, crudely stemmed (a suffix cut, then
    the first `stem` letters). The *focus* is the sentence, in any passage, that
    shares most key terms; its passage is the evidence. Coverage is the share of
    key terms found in the evidence passage, with half credit for terms found
    only in the other passages (a claim often condenses a whole source). Then,
    in this order:

    - a number in the claim found in none of the passages, while they do give
      numbers → not supported;
    - coverage ≥ `partial_at` but the claim and the focus disagree on negation
      → not supported (a contradiction);
    - coverage ≥ `supported_at` → supported;
    - coverage ≥ `partial_at` → partially supported;
    - otherwise → not supported.

    A claim made of clauses joined by "; ", ", and " or ", but " is judged
    clause by clause: all supported → supported, none → not supported, a mix →
    partially supported.
    """

    def __init__(self, *, supported_at: float = 0.7, partial_at: float = 0.4, stem: int = 6) -> None:
        self.supported_at = supported_at
        self.partial_at = partial_at
        self.stem = stem

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Judge `claim` against `passages` (best first)."""
        if not passages or not self._terms(claim):
            return _no_passages()
        clauses = [c for c in _CLAUSE_BREAK.split(claim) if len(self._terms(c)) >= 2]
        if len(clauses) < 2:
            return self._judgement(self._assess(claim, passages))
        return self._combine([self._assess(c, passages) for c in clauses])

    def _assess(self, claim: str, passages: list[Hit]) -> _Assessment:
        terms = self._terms(claim)
        everything = " ".join(p.text for p in passages)
        # Most shared terms wins, then the denser sentence; max() keeps the first
        # of full ties, so the better-ranked passage wins those.
        focus, evidence = max(
            ((s, p) for p in passages for s in split_sentences(p.text) or [p.text]),
            key=lambda pair: self._overlap(terms, pair[0]),
        )
        here = terms & self._terms(evidence.text)
        elsewhere = (terms & self._terms(everything)) - here
        coverage = (len(here) + 0.5 * len(elsewhere)) / len(terms)
        verdict, reason = self._decide(claim, coverage, focus, everything)
        return _Assessment(verdict=verdict, reason=reason, coverage=coverage, focus=focus, evidence=evidence)

    def _overlap(self, terms: set[str], sentence: str) -> tuple[int, float]:
        found = self._terms(sentence)
        shared = len(terms & found)
        return shared, shared / max(1, len(found))

    def _decide(self, claim: str, coverage: float, focus: str, passages: str) -> tuple[Verdict, str]:
        claim_numbers, passage_numbers = _numbers(claim), _numbers(passages)
        missing = claim_numbers - passage_numbers
        if coverage >= self.partial_at and missing and passage_numbers:
            return Verdict.not_supported, f"the source gives other figures than {', '.join(sorted(missing))}"
        if coverage >= self.partial_at and _negated(claim) != _negated(focus):
            return Verdict.not_supported, "the source states the opposite (negation cue)"
        if coverage >= self.supported_at:
            return Verdict.supported, "the source states the claim's key terms"
        if coverage >= self.partial_at:
            return Verdict.partially_supported, "the source states only part of the claim's key terms"
        return Verdict.not_supported, "the source shares few of the claim's key terms"

    def _combine(self, parts: list[_Assessment]) -> Judgement:
        verdicts = {a.verdict for a in parts}
        if verdicts == {Verdict.supported}:
            verdict = Verdict.supported
        elif verdicts == {Verdict.not_supported}:
            verdict = Verdict.not_supported
        else:
            verdict = Verdict.partially_supported
        # Show the evidence of the best-supported clause; list every clause's reason.
        lead = max(parts, key=lambda a: (a.verdict is Verdict.supported, a.coverage))
        reasons = "; ".join(f"clause {i}: {a.verdict.value}, {a.reason}" for i, a in enumerate(parts, 1))
        coverage = sum(a.coverage for a in parts) / len(parts)
        combined = lead.model_copy(update={"verdict": verdict, "reason": reasons, "coverage": coverage})
        return self._judgement(combined)

    def _judgement(self, a: _Assessment) -> Judgement:
        return Judgement(
            verdict=a.verdict,
            confidence=_confidence(a.verdict, a.coverage, self.supported_at, self.partial_at),
            evidence=a.evidence.text,
            evidence_page=a.evidence.page,
            rationale=f"Heuristic: {a.reason} (key-term coverage {a.coverage:.0%}; "
            f"closest sentence: \"{_clip(a.focus)}\").",
        )

    def _terms(self, text: str) -> set[str]:
        return {_stem(t, self.stem) for t in tokenize(text) if not t.isdigit() and t not in _NEGATION_WORDS}


_CLAUSE_BREAK = re.compile(r";\s+|,\s+(?:and|but|whereas|while|und|aber)\s+")
_NEGATION_WORDS = frozenset(c for c in NEGATION_CUES if c.isalpha())


#: Longest first; enough to let "cooled", "cooling" and "cooler" meet at "cool".
_SUFFIXES = tuple(sorted(
    """ational ations ation ments ment ingly ings ing ably ibly ness ities ity ies ied
    ers er ed es ly ungen ung en s e""".split(), key=len, reverse=True,
))


def _stem(token: str, keep: int) -> str:
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            token = token[: -len(suffix)]
            break
    return token[:keep]


def _negated(text: str) -> bool:
    return bool(_NEGATION.search(text))


def _numbers(text: str) -> set[str]:
    return {n.replace(",", ".") for n in _NUMBER.findall(text)}


def _confidence(verdict: Verdict, coverage: float, supported_at: float, partial_at: float) -> float:
    # Distance from the nearest threshold, mapped to 0.5..0.95: the heuristic is never certain.
    if verdict is Verdict.supported:
        margin = (coverage - supported_at) / max(1e-9, 1 - supported_at)
    elif verdict is Verdict.partially_supported:
        margin = min(coverage - partial_at, supported_at - coverage) / max(1e-9, (supported_at - partial_at) / 2)
    else:
        margin = abs(coverage - partial_at) / max(partial_at, 1e-9)
    return round(0.5 + 0.45 * max(0.0, min(1.0, margin)), 3)


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
