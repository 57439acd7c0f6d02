"""The offline heuristic judge, and the HTTP judge against a fake provider on loopback."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

import httpx

from analysis.pipeline.judging.llm import OpenAIJudge
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.registry import judge_from_env
from analysis.pipeline.judging.verdicts import Judgement, Verdict, source_missing_judgement
from analysis.pipeline.providers.client import parse_retry_after, redact
from analysis.pipeline.providers.errors import (ProviderAuthFailed, ProviderModelNotFound, ProviderPermanentError,
                                                ProviderRateLimited, ProviderRejected, ProviderUnavailable)
from analysis.pipeline.retrieval.index import Hit


def _hits(*texts: str) -> list[Hit]:
    return [Hit(passage_id=i, source_id="s", page=i + 1, text=t, score=1.0) for i, t in enumerate(texts)]


ROOFS = _hits(
    "We measured six roofs. Extensive green roofs lowered midday roof surface temperatures by up to "
    "20 °C compared with bitumen roofs. At street level no cooling effect of the green roofs was detectable.",
    "Water mattered during the drought of 2017.",
)


# --- offline judge -----------------------------------------------------------


def test_offline_judge_supports_a_claim_the_source_states():
    claim = "Green roofs lowered midday surface temperatures by up to 20 °C compared with bitumen roofs."
    judgement = OfflineJudge(calibration=None).judge(claim, ROOFS)
    assert judgement.verdict is Verdict.supported
    assert judgement.evidence_page == 1
    # The evidence is the sentence that states it, verbatim
    assert judgement.evidence == ("Extensive green roofs lowered midday roof surface temperatures by up to "
                                  "20 °C compared with bitumen roofs.")
    assert judgement.rule.startswith("figures_stated")  # the figure decides


def test_offline_judge_catches_a_negated_statement():
    claim = "Green roofs had a measurable cooling effect at street level."
    judgement = OfflineJudge(calibration=None).judge(claim, ROOFS)
    assert judgement.verdict is Verdict.not_supported
    assert "denies" in judgement.rationale


def test_offline_judge_reads_german_negation_cues():
    passages = _hits("Verteilte Hausaufgaben senkten die Motivation der Schüler nicht.")
    judgement = OfflineJudge(calibration=None).judge("Verteilte Hausaufgaben senkten die Motivation der Schüler.", passages)
    assert judgement.verdict is Verdict.not_supported


def test_offline_judge_rejects_a_wrong_figure():
    claim = "Green roofs lowered midday surface temperatures by up to 35 °C compared with bitumen roofs."
    judgement = OfflineJudge(calibration=None).judge(claim, ROOFS)
    assert judgement.verdict is Verdict.not_supported
    assert "35" in judgement.rationale


def test_offline_judge_gives_partial_support_for_half_a_claim():
    # Given a claim of two clauses, one stated by the source and one contradicted
    claim = (
        "Extensive green roofs lowered midday roof surface temperatures compared with bitumen roofs, "
        "and they had a cooling effect at street level."
    )
    judgement = OfflineJudge(calibration=None).judge(claim, ROOFS)
    assert judgement.verdict is Verdict.partially_supported
    assert "clause 1: supported" in judgement.rationale
    assert "clause 2: not_supported" in judgement.rationale


def test_offline_judge_is_uncertain_without_a_deciding_cue():
    claim = "Extensive green roofs lowered roof temperatures and doubled the lifetime of roof membranes."
    assert OfflineJudge(calibration=None).judge(claim, ROOFS).verdict in (Verdict.uncertain, Verdict.partially_supported)


def test_offline_judge_without_overlap_or_passages_says_uncertain():
    judge = OfflineJudge(calibration=None)
    unrelated = judge.judge("Quantum entanglement explains bird migration.", ROOFS)
    assert unrelated.verdict is Verdict.uncertain and unrelated.evidence  # with its best passage
    assert judge.judge("Anything at all.", []).verdict is Verdict.uncertain


def test_offline_judge_is_deterministic():
    claim = "Green roofs lowered surface temperatures."
    assert OfflineJudge(calibration=None).judge(claim, ROOFS) == OfflineJudge(calibration=None).judge(claim, ROOFS)


def test_source_missing_judgement_names_the_citation():
    judgement = source_missing_judgement("[3]")
    assert judgement.verdict is Verdict.source_missing
    assert "[3]" in judgement.rationale
    assert judgement.evidence is None


# --- OpenAI-compatible judge against the fake server -------------------------

KEY = "sk-live-0123456789abcdefSECRET"


@pytest.fixture
def judge(server):
    with OpenAIJudge(base_url=server.base_url, model="judge-model", api_key=KEY, timeout=5) as judge:
        yield judge


def _answer(verdict="supported", quote="At street level no cooling effect of the green roofs was detectable.",
            page=1, rationale="r", confidence=0.8):
    return {"verdict": verdict, "evidence_quote": quote, "evidence_page": page, "rationale": rationale,
            "confidence": confidence}


def test_openai_judge_sends_a_strict_json_schema_and_reads_the_verdict(server, judge):
    # Given a provider that answers not_supported, quoting passage 1 with its page
    server.script.append(_answer("not_supported", rationale="No."))
    # When judging
    judgement = judge.judge("Green roofs cool streets.", ROOFS)
    # Then the verdict, the quote (the passage's own text) and its page come from the answer
    assert judgement == Judgement(
        verdict=Verdict.not_supported, confidence=0.8, evidence=_answer()["evidence_quote"], evidence_page=1,
        rationale="No.", tokens=120)
    # And the request was one chat completion with model, messages, a strict schema and the key
    assert server.request_count == 1
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert body["model"] == "judge-model"
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]
    assert schema["strict"] is True and schema["name"]
    assert schema["schema"]["properties"]["verdict"]["enum"] == [
        "supported", "partially_supported", "not_supported", "uncertain"]
    assert set(schema["schema"]["required"]) >= {"verdict", "evidence_quote", "evidence_page", "rationale"}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "Green roofs cool streets." in body["messages"][1]["content"]
    assert "Passage 2 (page 2)" in body["messages"][1]["content"]


def test_a_quote_is_found_despite_whitespace_quotes_dashes_and_case(server, judge):
    passages = [Hit(passage_id=0, source_id="s", page=7, score=1.0,
                    text="The effect \u2013 as “expected” \u2013 was\nsmall in winter.")]
    server.script.append(_answer(quote='the effect - as "expected" - was small', page=7))
    judgement = judge.judge("claim", passages)
    assert judgement.verdict is Verdict.supported
    assert judgement.evidence == "The effect \u2013 as “expected” \u2013 was\nsmall"  # the passage's own text
    assert judgement.evidence_page == 7


def test_a_quote_that_is_not_in_the_passages_makes_the_verdict_uncertain(server, judge):
    server.mode = "bad_quote"
    judgement = judge.judge("Green roofs cool streets.", ROOFS)
    assert judgement.verdict is Verdict.uncertain
    assert "does not occur" in judgement.rationale and judgement.evidence is None
    assert server.request_count == 1  # a made-up quote is not asked again: it is an answer


def test_a_quote_too_short_to_show_anything_is_not_evidence(server, judge):
    server.script.append(_answer(quote="roofs"))
    assert judge.judge("claim", ROOFS).verdict is Verdict.uncertain


def test_a_supported_verdict_without_a_quote_is_uncertain(server, judge):
    server.script.append(_answer(quote=""))
    assert judge.judge("claim", ROOFS).verdict is Verdict.uncertain
    server.script.append(_answer("not_supported", quote="", page=None))
    assert judge.judge("claim", ROOFS).verdict is Verdict.not_supported


def test_loose_verdict_spelling_and_code_fences_are_read(server, judge):
    server.script.append("```json\n" + json.dumps(_answer("Partially supported")) + "\n```")
    assert judge.judge("claim", ROOFS).verdict is Verdict.partially_supported


@pytest.mark.parametrize(("mode", "why"), [
    ("garbage", "malformed JSON"),
    ("truncated", "truncated"),
    ("refusal", "refused"),
    ("content_filter", "refused"),
    ("bad_page", "evidence_page 999"),
])
def test_bad_answers_are_asked_again_then_uncertain_with_the_reason(server, judge, mode, why):
    server.mode = mode
    judgement = judge.judge("Green roofs cool streets.", ROOFS)
    assert judgement.verdict is Verdict.uncertain
    assert why in judgement.rationale
    assert server.request_count == 3  # DEFAULT_ATTEMPTS answers, within the one call
    assert judgement.tokens == 3 * 120  # every answer read is paid for


@pytest.mark.parametrize("answer", [
    _answer("probably"),
    _answer(confidence=1.5),
    {"verdict": "supported", "evidence_quote": "x"},
    ["not", "an", "object"],
    dict(_answer(), evidence_index=1),
])
def test_answers_outside_the_schema_are_asked_again(server, judge, answer):
    server.script.extend([json.dumps(answer), _answer()])
    judgement = judge.judge("claim", ROOFS)
    # Then the second, good answer counts
    assert judgement.verdict is Verdict.supported and server.request_count == 2


def test_a_bad_answer_then_a_good_one_gives_the_good_verdict(server, judge):
    server.script.extend(["{not json", _answer("not_supported")])
    assert judge.judge("claim", ROOFS).verdict is Verdict.not_supported


def test_rate_limit_is_raised_with_retry_after(server, judge):
    server.mode = "rate_limited"
    with pytest.raises(ProviderRateLimited) as caught:
        judge.judge("claim", ROOFS)
    assert caught.value.retry_after == 7.0
    assert server.request_count == 1  # the judge never retries provider errors on its own


def test_server_errors_are_unavailable(server, judge):
    server.mode = "server_error"
    with pytest.raises(ProviderUnavailable, match="500"):
        judge.judge("claim", ROOFS)


@pytest.mark.parametrize(("mode", "error", "code"), [
    ("unauthorized", ProviderAuthFailed, "provider_auth_failed"),
    ("forbidden", ProviderAuthFailed, "provider_auth_failed"),
    ("unknown_model", ProviderModelNotFound, "provider_model_not_found"),
])
def test_permanent_errors_are_typed_and_never_show_the_key(server, judge, mode, error, code):
    server.mode = mode
    with pytest.raises(error) as caught:
        judge.judge("claim", ROOFS)
    assert caught.value.code == code
    assert isinstance(caught.value, ProviderPermanentError)
    assert KEY not in str(caught.value) and "SECRET" not in str(caught.value)


def test_a_transient_error_body_echoing_the_key_is_redacted_and_clipped(server, judge):
    server.mode = "echo_key"
    with pytest.raises(ProviderUnavailable) as caught:
        judge.judge("claim", ROOFS)
    message = str(caught.value)
    assert "500" in message and "[redacted]" in message
    assert KEY not in message and "SECRET" not in message
    assert len(message) < 400


def test_a_400_naming_an_unknown_model_is_permanent_and_other_400s_are_not():
    def transport(body):
        return httpx.MockTransport(lambda request: httpx.Response(400, json=body))

    with OpenAIJudge(base_url="http://provider/v1", model="m", transport=transport(
            {"error": {"message": "Unknown model: gpt-9"}})) as judge:
        with pytest.raises(ProviderModelNotFound):
            judge.judge("claim", ROOFS)
    with OpenAIJudge(base_url="http://provider/v1", model="m", transport=transport(
            {"error": {"message": "context too long"}})) as judge:
        with pytest.raises(ProviderRejected) as caught:
            judge.judge("claim", ROOFS)
        assert not isinstance(caught.value, ProviderPermanentError)


@pytest.mark.parametrize("text", [
    f"Incorrect API key provided: {KEY}",
    "Authorization: Bearer abc.def-ghi_123",
    "key-abcdefghijklmnop was refused",
    "https://host/v1?api_key=hunter2hunter2&x=1",
    '{"apiKey": "zz-top-secret-value"}',
])
def test_redact_removes_secrets_in_every_spelling(text):
    cleaned = redact(text, [KEY])
    for secret in (KEY, "abc.def-ghi_123", "abcdefghijklmnop", "hunter2hunter2", "zz-top-secret-value"):
        assert secret not in cleaned
    assert "[redacted]" in cleaned


def test_redact_clips_after_redacting():
    cleaned = redact("x" * 290 + KEY, [KEY], limit=300)
    assert KEY[:10] not in cleaned and len(cleaned) <= 300


def test_a_wrong_path_is_model_not_found(server):
    with OpenAIJudge(base_url=server.base_url.removesuffix("/v1"), model="m", timeout=5) as judge:
        with pytest.raises(ProviderModelNotFound, match="404"):
            judge.judge("claim", ROOFS)
    _, headers, _ = server.requests[0]
    assert "Authorization" not in headers  # no key configured, none sent


def test_an_unreachable_port_is_unavailable():
    # Given a loopback port nobody listens on
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with OpenAIJudge(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key=KEY, timeout=5) as judge:
        with pytest.raises(ProviderUnavailable) as caught:
            judge.judge("claim", ROOFS)
    assert KEY not in str(caught.value)


def test_openai_judge_makes_no_call_without_passages(server, judge):
    assert judge.judge("claim", []).verdict is Verdict.uncertain
    assert server.request_count == 0


def test_the_judge_names_itself_for_the_job(judge):
    assert judge.name == "openai:judge-model" and OfflineJudge.name == "offline"


def test_retry_after_accepts_seconds_and_http_dates():
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2024, 5, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after(later, now=now.timestamp()) == 30.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


# --- configuration -----------------------------------------------------------


def test_judge_from_env_defaults_to_offline():
    assert isinstance(judge_from_env({}), OfflineJudge)
    assert isinstance(judge_from_env({"CITEQ_JUDGE": "Offline"}), OfflineJudge)


def test_judge_from_env_builds_a_working_openai_judge(server):
    env = {
        "CITEQ_JUDGE": "openai",
        "CITEQ_JUDGE_BASE_URL": server.base_url,
        "CITEQ_JUDGE_MODEL": "m",
        "CITEQ_JUDGE_API_KEY": "k",
        "CITEQ_JUDGE_TIMEOUT": "2.5",
    }
    judge = judge_from_env(env)
    try:
        assert isinstance(judge, OpenAIJudge)
        assert judge.judge("claim", ROOFS).verdict is Verdict.supported
        assert server.requests[0][1]["Authorization"] == "Bearer k"
    finally:
        judge.close()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CITEQ_JUDGE": "openai", "CITEQ_JUDGE_MODEL": "m"}, "CITEQ_JUDGE_BASE_URL"),
        ({"CITEQ_JUDGE": "openai", "CITEQ_JUDGE_BASE_URL": "http://127.0.0.1:1"}, "CITEQ_JUDGE_MODEL"),
        ({"CITEQ_JUDGE": "oracle"}, "offline"),
        ({"CITEQ_JUDGE_TIMEOUT": "-1"}, "greater than 0"),
        ({"CITEQ_JUDGE_ATTEMPTS": "0"}, "greater than or equal to 1"),
    ],
)
def test_judge_from_env_rejects_incomplete_settings(env, message):
    with pytest.raises(ValueError, match=message):
        judge_from_env(env)
