"""Embeddings for hybrid retrieval: any OpenAI-compatible ``POST {base_url}/embeddings``.

Optional. Without ``CITEQ_EMBEDDINGS_MODEL`` there is no embedder and retrieval is BM25
alone. With it, parsing embeds every chunk (stored in ``chunks.embedding``) and judging
embeds the claim, so retrieval can fuse vector and BM25 ranks (analysis/pipeline/retrieval/index.py).

The endpoint is the judge's (``CITEQ_JUDGE_BASE_URL``, ``CITEQ_JUDGE_API_KEY``) unless
``CITEQ_EMBEDDINGS_BASE_URL`` names another: one provider is the usual deployment, and
a chat model that cannot embed (or a local embedding server) is the exception. Failures
raise the judge's typed provider errors, so callers handle one family of errors.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence

import httpx
from broker.settings import EnvSettings, env_field

from analysis.pipeline.providers.settings import JudgeSettings

#: Chunks per request. OpenAI accepts up to 2048 inputs; 64 passages of ~120 words keep a
from analysis.pipeline.providers.client import OpenAICompatibleClient
from analysis.pipeline.providers.errors import ProviderBadResponse
#: request well under any provider's token limit per call and a failure cheap to lose.
DEFAULT_BATCH = 64


class EmbeddingsSettings(EnvSettings):
    """Embedder configuration from the CITEQ_EMBEDDINGS_* variables (:func:`embeddings_settings`
    fills in the judge's endpoint and key where they are unset)."""

    model: str | None = env_field(None, "CITEQ_EMBEDDINGS_MODEL",
                                  "embeddings model for hybrid retrieval (unset: BM25 alone)")
    base_url: str | None = env_field(None, "CITEQ_EMBEDDINGS_BASE_URL",
                                     "embeddings endpoint base URL (default CITEQ_JUDGE_BASE_URL)")
    api_key: str | None = env_field(None, "CITEQ_EMBEDDINGS_API_KEY",
                                    "embeddings API key (default CITEQ_JUDGE_API_KEY)")
    timeout: float = env_field(30.0, "CITEQ_EMBEDDINGS_TIMEOUT", "embeddings request timeout, seconds", gt=0)
    batch_size: int = env_field(DEFAULT_BATCH, "CITEQ_EMBEDDINGS_BATCH", "texts per embeddings request",
                                ge=1, le=2048)


class OpenAIEmbedder(OpenAICompatibleClient):
    """Vectors for texts from an OpenAI-compatible embeddings endpoint."""

    role = "embeddings provider"

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 batch_size: int = DEFAULT_BATCH, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(base_url=base_url, model=model, api_key=api_key, timeout=timeout, transport=transport)
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order (``batch_size`` texts per request); raises a
        ``ProviderError`` subclass when the provider fails or answers nonsense."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors += self._embed_batch(list(texts[start:start + self.batch_size]))
        if vectors and len({len(v) for v in vectors}) != 1:
            raise ProviderBadResponse("embeddings of one call differ in dimension")
        return vectors

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        response = self._post("embeddings", {"model": self.model, "input": texts})
        try:
            data = sorted(response.json()["data"], key=lambda d: d["index"])
            vectors = [[float(x) for x in d["embedding"]] for d in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise ProviderBadResponse(f"not an embeddings response: {self._safe(response.text)!r}") from None
        if len(vectors) != len(texts) or any(not v for v in vectors):
            raise ProviderBadResponse(f"{len(vectors)} embeddings for {len(texts)} inputs")
        if not all(math.isfinite(x) for v in vectors for x in v):
            raise ProviderBadResponse("an embedding holds a value that is not a finite number")
        return vectors


def embedder_from_env(env: Mapping[str, str]) -> OpenAIEmbedder | None:
    """The configured embedder, or None when ``CITEQ_EMBEDDINGS_MODEL`` is unset.

    Reads CITEQ_EMBEDDINGS_MODEL, CITEQ_EMBEDDINGS_BASE_URL (else CITEQ_JUDGE_BASE_URL),
    CITEQ_EMBEDDINGS_API_KEY (else CITEQ_JUDGE_API_KEY), CITEQ_EMBEDDINGS_TIMEOUT and
    CITEQ_EMBEDDINGS_BATCH. Raises ValueError when a model is set but no base URL is.
    """
    settings = embeddings_settings(env)
    if settings is None:
        return None
    return OpenAIEmbedder(base_url=settings.base_url, model=settings.model, api_key=settings.api_key,
                          timeout=settings.timeout, batch_size=settings.batch_size)


def embeddings_settings(env: Mapping[str, str]) -> EmbeddingsSettings | None:
    """The embedder's settings from ``env``; None when embeddings are not configured."""
    settings = EmbeddingsSettings.from_env(env)
    if settings.model is None:
        return None
    if settings.base_url is None or settings.api_key is None:
        judge = JudgeSettings.from_env(env)
        settings = settings.model_copy(update={"base_url": settings.base_url or judge.base_url,
                                               "api_key": settings.api_key or judge.api_key})
    if settings.base_url is None:
        raise ValueError("CITEQ_EMBEDDINGS_MODEL needs CITEQ_EMBEDDINGS_BASE_URL or CITEQ_JUDGE_BASE_URL")
    return settings


_embedders: dict[str | None, OpenAIEmbedder | None] = {}
_embedders_lock = threading.Lock()


def embedder_for(env: Mapping[str, str]) -> OpenAIEmbedder | None:
    """This process's embedder for the configuration in ``env`` (one pooled client each)."""
    settings = embeddings_settings(env)
    key = None if settings is None else settings.model_dump_json()
    with _embedders_lock:
        if key not in _embedders:
            _embedders[key] = embedder_from_env(env)
        return _embedders[key]
