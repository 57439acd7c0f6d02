"""The offline heuristic judge, and the HTTP judge against a fake provider on loopback."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from analysis.judges import (
    Judgement,
    OfflineJudge,
    OpenAIJudge,
    ProviderBadResponse,
    ProviderRateLimited,
    ProviderRejected,
    ProviderUnavailable,
    Verdict,
    judge_from_env,
    parse_retry_after,
    source_missing_judgement,
)
from analysis.retrieval import Hit


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
    judgement = OfflineJudge().judge(claim, ROOFS)
    assert judgement.verdict is Verdict.supported
    assert judgement.evidence_page == 1
    # The evidence is the sentence that states it, verbatim
    assert judgement.evidence == ("Extensive green roofs lowered midday roof surface temperatures by up to "
                                  "20 °C compared with bitumen roofs.")
    assert judgement.confidence >= 0.75  # the figure decides: high band


def test_offline_judge_catches_a_negated_statement():
    claim = "Green roofs had a measurable cooling effect at street level."
    judgement = OfflineJudge().judge(claim, ROOFS)
    assert judgement.verdict is Verdict.not_supported
    assert "denies" in judgement.rationale


def test_offline_judge_reads_german_negation_cues():
    passages = _hits("Verteilte Hausaufgaben senkten die Motivation der Schüler nicht.")
    judgement = OfflineJudge().judge("Verteilte Hausaufgaben senkten die Motivation der Schüler.", passages)
    assert judgement.verdict is Verdict.not_supported


def test_offline_judge_rejects_a_wrong_figure():
    claim = "Green roofs lowered midday surface temperatures by up to 35 °C compared with bitumen roofs."
    judgement = OfflineJudge().judge(claim, ROOFS)
    assert judgement.verdict is Verdict.not_supported
    assert "35" in judgement.rationale


def test_offline_judge_gives_partial_support_for_half_a_claim():
    # Given a claim of two clauses, one stated by the source and one contradicted
    claim = (
        "Extensive green roofs lowered midday roof surface temperatures compared with bitumen roofs, "
        "and they had a cooling effect at street level."
    )
    judgement = OfflineJudge().judge(claim, ROOFS)
    assert judgement.verdict is Verdict.partially_supported
    assert "clause 1: supported" in judgement.rationale
    assert "clause 2: not_supported" in judgement.rationale


def test_offline_judge_is_uncertain_without_a_deciding_cue():
    claim = "Extensive green roofs lowered roof temperatures and doubled the lifetime of roof membranes."
    assert OfflineJudge().judge(claim, ROOFS).verdict in (Verdict.uncertain, Verdict.partially_supported)


def test_offline_judge_without_overlap_or_passages_says_uncertain():
    judge = OfflineJudge()
    unrelated = judge.judge("Quantum entanglement explains bird migration.", ROOFS)
    assert unrelated.verdict is Verdict.uncertain and unrelated.evidence  # with its best passage
    assert judge.judge("Anything at all.", []).verdict is Verdict.uncertain


def test_offline_judge_is_deterministic():
    claim = "Green roofs lowered surface temperatures."
    assert OfflineJudge().judge(claim, ROOFS) == OfflineJudge().judge(claim, ROOFS)


def test_source_missing_judgement_names_the_citation():
    judgement = source_missing_judgement("[3]")
    assert judgement.verdict is Verdict.source_missing
    assert "[3]" in judgement.rationale
    assert judgement.evidence is None


# --- OpenAI-compatible judge against the fake server -------------------------


@pytest.fixture
def judge(server):
    with OpenAIJudge(base_url=server.base_url, model="judge-model", api_key="sk-test", timeout=5) as judge:
        yield judge


def test_openai_judge_sends_the_wire_format_and_reads_the_verdict(server, judge):
    # Given a provider that answers with evidence passage 2
    server.script.append({"verdict": "not_supported", "confidence": 0.8, "evidence_index": 2, "rationale": "No."})
    # When judging
    judgement = judge.judge("Green roofs cool streets.", ROOFS)
    # Then the verdict and the evidence passage come from the answer
    assert judgement == Judgement(
        verdict=Verdict.not_supported, confidence=0.8, evidence=ROOFS[1].text, evidence_page=2, rationale="No."
    )
    # And the request was one chat completion with model, messages, JSON mode and the key
    assert server.request_count == 1
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-test"
    assert body["model"] == "judge-model"
    assert body["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "Green roofs cool streets." in body["messages"][1]["content"]
    assert "Passage 2 (page 2)" in body["messages"][1]["content"]


def test_openai_judge_accepts_loose_verdict_spelling_and_code_fences(server, judge):
    answer = {"verdict": "Partially supported", "confidence": 0.5, "evidence_index": None, "rationale": "half"}
    server.script.append("```json\n" + json.dumps(answer) + "\n```")
    judgement = judge.judge("claim", ROOFS)
    assert judgement.verdict is Verdict.partially_supported
    assert judgement.evidence is None


def test_openai_judge_reports_rate_limit_with_retry_after(server, judge):
    server.mode = "rate_limited"
    with pytest.raises(ProviderRateLimited) as caught:
        judge.judge("claim", ROOFS)
    assert caught.value.retry_after == 7.0
    assert server.request_count == 1  # the judge never retries on its own


def test_openai_judge_reports_server_errors_as_unavailable(server, judge):
    server.mode = "server_error"
    with pytest.raises(ProviderUnavailable, match="500"):
        judge.judge("claim", ROOFS)


def test_openai_judge_rejects_garbage_content(server, judge):
    server.mode = "garbage"
    with pytest.raises(ProviderBadResponse):
        judge.judge("claim", ROOFS)


@pytest.mark.parametrize(
    "answer",
    [
        {"verdict": "probably", "confidence": 0.5, "evidence_index": 1, "rationale": "?"},
        {"verdict": "supported", "confidence": 1.5, "evidence_index": 1, "rationale": "too sure"},
        {"verdict": "supported", "confidence": 0.9, "evidence_index": 9, "rationale": "no such passage"},
        ["not", "an", "object"],
    ],
)
def test_openai_judge_rejects_answers_outside_the_contract(server, judge, answer):
    server.script.append(json.dumps(answer))
    with pytest.raises(ProviderBadResponse):
        judge.judge("claim", ROOFS)


def test_openai_judge_reports_a_wrong_path_as_rejected(server):
    with OpenAIJudge(base_url=server.base_url.removesuffix("/v1"), model="m", timeout=5) as judge:
        with pytest.raises(ProviderRejected, match="404"):
            judge.judge("claim", ROOFS)
    _, headers, _ = server.requests[0]
    assert "Authorization" not in headers  # no key configured, none sent


def test_openai_judge_reports_an_unreachable_port_as_unavailable():
    # Given a loopback port nobody listens on
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with OpenAIJudge(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=5) as judge:
        with pytest.raises(ProviderUnavailable):
            judge.judge("claim", ROOFS)


def test_openai_judge_makes_no_call_without_passages(server, judge):
    assert judge.judge("claim", []).verdict is Verdict.uncertain
    assert server.request_count == 0


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
    ],
)
def test_judge_from_env_rejects_incomplete_settings(env, message):
    with pytest.raises(ValueError, match=message):
        judge_from_env(env)
