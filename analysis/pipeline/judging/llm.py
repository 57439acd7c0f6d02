"""`OpenAIJudge`: any server speaking OpenAI's chat-completions wire format (OpenAI, vLLM, Ollama,
LiteLLM, llama.cpp's server, ...), asked with a strict JSON schema; a quote that does not occur in
the passages (`find_quote`) makes the verdict `uncertain`.
"""

from __future__ import annotations

import logging
import json
import re
from collections.abc import Sequence
from typing import Literal

import httpx
from pydantic import BaseModel, Field, ValidationError, field_validator
from analysis.pipeline.retrieval.index import Hit

from analysis.pipeline.judging.verdicts import Judgement, Verdict, no_passages
from analysis.pipeline.providers.client import OpenAICompatibleClient, clip
from analysis.settings import DEFAULT_ATTEMPTS

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = """You check citations in academic theses (English or German). You get a claim \
from a thesis and numbered passages, each with its page, from the source the claim cites. Decide \
whether the passages support the claim:
- "supported": the passages state the claim;
- "partially_supported": they state part of it, or state it more weakly (the claim overstates: \
"all", "always", "proves" where the source says "some", "may", "suggests");
- "not_supported": they do not state it, or contradict it (other figures, the opposite direction, \
a denied effect);
- "uncertain": the passages do not let you decide.
evidence_quote: copy the one sentence (or clause) your verdict rests on, character for character \
from a passage; "" when there is none. evidence_page: the page of that passage, or null. \
rationale: one or two sentences. confidence: between 0 and 1."""

#: Verdicts a provider may answer (source_missing is decided before judging).
_PROVIDER_VERDICTS = ("supported", "partially_supported", "not_supported", "uncertain")

#: The answer's JSON schema, sent as a strict ``response_format``.
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(_PROVIDER_VERDICTS)},
        "evidence_quote": {"type": "string"},
        "evidence_page": {"type": ["integer", "null"]},
        "rationale": {"type": "string"},
        "confidence": {"type": "number"},
    },
    "required": ["verdict", "evidence_quote", "evidence_page", "rationale", "confidence"],
    "additionalProperties": False,
}


class _Answer(BaseModel):
    model_config = {"extra": "forbid"}

    verdict: Literal["supported", "partially_supported", "not_supported", "uncertain"]
    evidence_quote: str
    evidence_page: int | None
    rationale: str
    confidence: float = Field(ge=0.0, le=1.0)

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        # Models write "Partially supported" or "partially-supported" as often as the spec.
        return re.sub(r"[\s-]+", "_", value.strip().lower()) if isinstance(value, str) else value


class _Unusable(Exception):
    """One answer of the provider that cannot be used; the judge asks again."""


class _Reply(BaseModel):
    content: object = None
    refusal: object = None
    finish_reason: str | None = None
    tokens: int = 0


class OpenAIJudge(OpenAICompatibleClient):
    """A judge backed by an OpenAI-compatible ``POST {base_url}/chat/completions``.

    It asks for structured output (a strict JSON schema: verdict, evidence_quote,
    evidence_page, rationale, confidence). An answer that is malformed, truncated
    (``finish_reason`` "length"), refused (``message.refusal``, ``finish_reason``
    "content_filter"), outside the schema or citing a page that is not among the passages
    is asked again, up to `attempts` answers; then the verdict is `uncertain` with the reason.
    A quote that does not occur in the passages (compared after normalising whitespace,
    quotes, dashes and case) makes the verdict `uncertain`. Provider errors are raised typed
    (`ProviderError`), never a bad answer. Each judgement carries the tokens it cost.
    """

    role = "judge provider"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        json_mode: bool = True,
        attempts: int = DEFAULT_ATTEMPTS,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url=base_url, model=model, api_key=api_key, timeout=timeout, transport=transport)
        self.json_mode = json_mode
        self.attempts = max(1, attempts)
        self.name = f"openai:{model}"

    def judge(self, claim: str, passages: list[Hit]) -> Judgement:
        """Ask the provider; raises a `ProviderError` subclass when the provider fails."""
        if not passages:
            return no_passages()  # nothing to show the model: no call, no cost
        messages = self._messages(claim, passages)
        problems: list[str] = []
        tokens = 0
        for _ in range(self.attempts):
            reply = self._complete(messages)
            tokens += reply.tokens
            try:
                judgement = self._read(reply, passages)
            except _Unusable as exc:
                problems.append(str(exc))
                continue
            return judgement.model_copy(update={"tokens": tokens})
        logger.warning("judge answers unusable", extra={"action": "judge_answer_unusable", "model": self.model,
                                                         "problems": problems})
        return Judgement(verdict=Verdict.uncertain, confidence=0.0, tokens=tokens,
                         rationale=f"The judge's {len(problems)} answers could not be used "
                                   f"({'; '.join(dict.fromkeys(problems))}); check the source yourself.")

    def _messages(self, claim: str, passages: Sequence[Hit]) -> list[dict[str, str]]:
        numbered = "\n\n".join(f"Passage {i} (page {p.page}):\n{p.text}" for i, p in enumerate(passages, 1))
        user = f"Claim:\n{claim}\n\n{numbered}"
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def _complete(self, messages: list[dict[str, str]]) -> _Reply:
        body: dict[str, object] = {"model": self.model, "messages": messages, "temperature": 0}
        if self.json_mode:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "citation_verdict", "strict": True, "schema": ANSWER_SCHEMA}}
        response = self._post("chat/completions", body)
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice.get("message") or {}
            usage = data.get("usage") or {}
            tokens = usage.get("total_tokens") or 0
            return _Reply(content=message.get("content"), refusal=message.get("refusal"),
                          finish_reason=choice.get("finish_reason"),
                          tokens=tokens if isinstance(tokens, int) and tokens > 0 else 0)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, ValidationError):
            # Not the chat-completions shape at all: counts as an unusable answer.
            return _Reply(content=None, finish_reason="not a chat completion")

    def _read(self, reply: _Reply, passages: Sequence[Hit]) -> Judgement:
        if reply.finish_reason == "not a chat completion":
            raise _Unusable("not a chat-completions response")
        if reply.refusal or reply.finish_reason == "content_filter":
            raise _Unusable(f"refused: {self._safe(str(reply.refusal or 'content filter'), 120)}")
        if reply.finish_reason == "length":
            raise _Unusable("truncated (finish_reason length)")
        if not isinstance(reply.content, str):
            raise _Unusable("no text in the answer")
        # Models asked for JSON still wrap it in ```json fences now and then.
        text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", reply.content)
        try:
            raw = json.loads(text)
        except ValueError:
            raise _Unusable(f"malformed JSON: {self._safe(reply.content, 80)!r}") from None
        try:
            answer = _Answer.model_validate(raw)
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) or "answer" for e in exc.errors())
            raise _Unusable(f"answer outside the schema ({fields})") from None
        pages = {p.page for p in passages}
        if answer.evidence_page is not None and answer.evidence_page not in pages:
            raise _Unusable(f"evidence_page {answer.evidence_page} is not a page of the passages "
                            f"({', '.join(map(str, sorted(pages)))})")
        return self._judgement(answer, passages)

    def _judgement(self, answer: _Answer, passages: Sequence[Hit]) -> Judgement:
        verdict, rationale = Verdict(answer.verdict), answer.rationale.strip() or "(no rationale given)"
        quote = answer.evidence_quote.strip()
        if not quote:
            if verdict in (Verdict.supported, Verdict.partially_supported):
                return Judgement(verdict=Verdict.uncertain, confidence=min(answer.confidence, 0.3),
                                 rationale=f"The judge said {verdict.value} but quoted no evidence. {rationale}")
            return Judgement(verdict=verdict, confidence=answer.confidence, rationale=rationale)
        found = find_quote(quote, passages, prefer_page=answer.evidence_page)
        if found is None:
            return Judgement(verdict=Verdict.uncertain, confidence=min(answer.confidence, 0.3),
                             rationale=f"The judge said {verdict.value}, but its quote does not occur in the "
                                       f"passages: \"{clip(quote, 120)}\". {rationale}")
        evidence, page = found
        return Judgement(verdict=verdict, confidence=answer.confidence, evidence=evidence, evidence_page=page,
                         rationale=rationale)


_QUOTE_FOLD = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"', "‘": "'", "’": "'",
                             "‚": "'", "‹": "'", "›": "'", "`": "'", "–": "-", "—": "-", "‒": "-", "−": "-",
                             "‐": "-", "‑": "-", "\u00ad": ""})


def _normalised(text: str) -> tuple[str, list[int]]:
    """The text with whitespace collapsed, quotes and dashes folded, lower case; and for each
    character of it the offset of the character of `text` it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        ch = ch.translate(_QUOTE_FOLD)
        if not ch:
            continue
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        for c in ch.lower():
            out.append(c)
            where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


#: A quote shorter than this (or a single word) is not evidence, wherever it occurs.
MIN_QUOTE_CHARS = 12


def find_quote(quote: str, passages: Sequence[Hit], *, prefer_page: int | None = None) -> tuple[str, int] | None:
    """Where a quote occurs in the passages, compared after normalising whitespace, quotes,
    dashes and case: (the passage's own text of it, the passage's page), or None. A quote
    found on several pages is taken from `prefer_page` when it is one of them."""
    bare = quote.strip().strip("\"'“”„")
    # As quoted, then without the closing stop or ellipsis a model may add or drop.
    for candidate in dict.fromkeys((bare, bare.rstrip(".…").rstrip())):
        wanted, _ = _normalised(candidate)
        if len(wanted) < MIN_QUOTE_CHARS or " " not in wanted:
            continue  # "the" or "yes" occurs anywhere: too short to show anything
        found = []
        for p in passages:
            text, where = _normalised(p.text)
            at = text.find(wanted)
            if at >= 0:
                found.append((p.text[where[at]:where[at + len(wanted) - 1] + 1], p.page))
        if found:
            return next((f for f in found if f[1] == prefer_page), found[0])
    return None
