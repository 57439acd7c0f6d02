"""`scripts/eval_verdicts.py --judge openai` against an OpenAI-compatible endpoint (issue 23): the
harness runs the real pipeline with a real worker process whose judge speaks HTTP to the fake
chat-completions server on loopback (tests/fakes/openai_server.py), the way it would to a local
Ollama, vLLM or llama.cpp server."""

from __future__ import annotations

from pathlib import Path

from citeq.evaluation import harness
from tests.fakes.openai_server import FakeChatServer

THESIS = Path(__file__).resolve().parents[2] / "eval" / "e01_feedback_md"


def test_the_eval_runs_with_the_openai_judge_when_an_endpoint_is_configured(db, monkeypatch) -> None:
    # Given an endpoint (the fake answers `supported`, quoting the first passage it was sent)
    monkeypatch.setenv("DATABASE_URL", db)
    monkeypatch.setenv("CITEQ_JUDGE", "offline")  # restored after the test: the harness sets it for its worker
    with FakeChatServer() as server:
        monkeypatch.setenv("CITEQ_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("CITEQ_JUDGE_MODEL", "local-model")
        # When the harness runs a thesis with --judge openai
        rep = harness.evaluate([str(THESIS)], judge="openai", timeout=300, threads=2)
        calls = server.request_count
    # Then the worker's judge asked the endpoint, and its verdicts are the model's
    assert rep["judge"] == "openai" and calls > 0
    assert rep["theses"][0]["status"] == "succeeded"
    judged = [c for c in rep["cases"] if c["verdict"] not in (None, "source_missing")]
    assert judged and {c["verdict"] for c in judged} <= {"supported", "uncertain"}
    assert any(c["verdict"] == "supported" for c in judged)


def test_the_eval_refuses_the_openai_judge_without_an_endpoint(monkeypatch, capsys) -> None:
    monkeypatch.delenv("CITEQ_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("CITEQ_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("CITEQ_JUDGE", "offline")
    assert harness.main(["--judge", "openai", str(THESIS)]) == 1
    assert "CITEQ_JUDGE_BASE_URL" in capsys.readouterr().err
