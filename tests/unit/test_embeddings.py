"""The embeddings client against a loopback server speaking OpenAI's wire format, its
configuration from the environment, and vector search over the vectors it returns."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.pipeline.retrieval.embeddings import LocalEmbedder, OpenAIEmbedder, embedder_from_env, local_embedder
from analysis.pipeline.providers.errors import (ProviderAuthFailed, ProviderBadResponse, ProviderModelNotFound,
                                                ProviderRateLimited, ProviderUnavailable)
from analysis.pipeline.retrieval.index import PassageIndex, PassageRecord
from tests.fakes.openai_server import EMBEDDING_DIM, FakeChatServer, fake_embedding


@pytest.fixture
def embedder(server):
    with OpenAIEmbedder(base_url=server.base_url, model="embed-model", api_key="sk-test", timeout=5,
                        batch_size=2) as embedder:
        yield embedder


def test_embedder_batches_sends_the_wire_format_and_keeps_input_order(server, embedder):
    texts = ["green roofs cool streets", "spaced practice helps", "feedback matters"]

    vectors = embedder.embed(texts)

    # Then one vector per text, in input order although the server answers last first
    assert vectors == [pytest.approx(fake_embedding(t)) for t in texts]
    assert all(len(v) == EMBEDDING_DIM for v in vectors)
    # And two requests (batches of 2) in OpenAI's format, with the key as a bearer token
    assert [(path, body) for path, _, body in server.requests] == [
        ("/v1/embeddings", {"model": "embed-model", "input": texts[:2]}),
        ("/v1/embeddings", {"model": "embed-model", "input": texts[2:]}),
    ]
    assert server.requests[0][1]["Authorization"] == "Bearer sk-test"
    assert embedder.embed([]) == [] and server.request_count == 2


def test_embedder_raises_the_judges_typed_errors(server, embedder):
    server.mode = "rate_limited"
    with pytest.raises(ProviderRateLimited) as limited:
        embedder.embed(["a text"])
    assert limited.value.retry_after == 7.0

    server.mode = "server_error"
    with pytest.raises(ProviderUnavailable):
        embedder.embed(["a text"])

    server.mode = "garbage"
    with pytest.raises(ProviderBadResponse):
        embedder.embed(["a text"])


@pytest.mark.parametrize(("mode", "error"), [("echo_key", ProviderUnavailable), ("unauthorized", ProviderAuthFailed),
                                             ("forbidden", ProviderAuthFailed), ("unknown_model", ProviderModelNotFound)])
def test_embedder_errors_are_typed_clipped_and_never_show_the_key(server, mode, error):
    key = "sk-embed-0123456789SECRETKEY"
    server.mode = mode
    with OpenAIEmbedder(base_url=server.base_url, model="m", api_key=key, timeout=5) as embedder:
        with pytest.raises(error) as caught:
            embedder.embed(["a text"])
    assert "embeddings provider" in str(caught.value)
    assert key not in str(caught.value) and "SECRETKEY" not in str(caught.value)
    assert len(str(caught.value)) < 450


def test_embedder_reports_an_unreachable_provider_as_unavailable():
    with FakeChatServer() as gone:
        url = gone.base_url
    with OpenAIEmbedder(base_url=url, model="m", timeout=2) as embedder, pytest.raises(ProviderUnavailable):
        embedder.embed(["a text"])


def test_embedder_from_env_is_local_by_default_off_on_request_and_the_openai_one_reuses_the_judges_endpoint():
    assert isinstance(embedder_from_env({"CITEQ_JUDGE_BASE_URL": "http://judge/v1"}), LocalEmbedder)
    assert embedder_from_env({}) is embedder_from_env({"CITEQ_EMBEDDER": " Local "}) is local_embedder()
    assert embedder_from_env({"CITEQ_EMBEDDER": "none", "CITEQ_EMBEDDINGS_MODEL": "e"}) is None
    with pytest.raises(ValueError, match="CITEQ_EMBEDDINGS_MODEL"):
        embedder_from_env({"CITEQ_EMBEDDER": "openai", "CITEQ_JUDGE_BASE_URL": "http://judge/v1"})
    with pytest.raises(ValueError):
        embedder_from_env({"CITEQ_EMBEDDER": "bert"})
    shared = embedder_from_env({"CITEQ_EMBEDDINGS_MODEL": "e", "CITEQ_JUDGE_BASE_URL": "http://judge/v1",
                                "CITEQ_JUDGE_API_KEY": "k"})
    assert str(shared._client.base_url) == "http://judge/v1/" and shared.model == "e"
    assert shared._client.headers["Authorization"] == "Bearer k"
    own = embedder_from_env({"CITEQ_EMBEDDINGS_MODEL": "e", "CITEQ_JUDGE_BASE_URL": "http://judge/v1",
                             "CITEQ_EMBEDDINGS_BASE_URL": "http://embed/v1", "CITEQ_EMBEDDINGS_BATCH": "8"})
    assert str(own._client.base_url) == "http://embed/v1/" and own.batch_size == 8
    with pytest.raises(ValueError, match="CITEQ_EMBEDDINGS_BASE_URL"):
        embedder_from_env({"CITEQ_EMBEDDINGS_MODEL": "e"})


def test_vector_search_ranks_by_cosine_within_a_source_and_skips_passages_without_vectors():
    texts = {1: "green roofs lowered surface temperatures", 2: "spaced homework improved recall",
             3: "roofs with plants cooled the surface", 4: "green roofs lowered surface temperatures too"}
    index = PassageIndex([
        PassageRecord(passage_id=1, source_id="a", page=1, text=texts[1], embedding=fake_embedding(texts[1])),
        PassageRecord(passage_id=2, source_id="a", page=2, text=texts[2], embedding=fake_embedding(texts[2])),
        PassageRecord(passage_id=3, source_id="a", page=3, text=texts[3], embedding=fake_embedding(texts[3])),
        PassageRecord(passage_id=4, source_id="b", page=1, text=texts[4], embedding=fake_embedding(texts[4])),
        PassageRecord(passage_id=5, source_id="a", page=4, text="green roofs lowered surface temperatures"),
    ])
    query = fake_embedding("green roofs lower the surface temperature")

    hits = index.vector_search(query, source_id="a", k=5)

    assert [h.passage_id for h in hits] == [1, 3, 2]
    assert hits[0].score == pytest.approx(float(np.dot(query, fake_embedding(texts[1]))), rel=1e-5)
    assert index.has_vectors("b") and not PassageIndex([(1, "a", 1, "plain words")]).has_vectors()
    assert index.vector_search(query[:10], source_id="a") == []  # another model's dimension
