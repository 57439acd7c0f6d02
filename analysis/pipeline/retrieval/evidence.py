"""The evidence sentence: the sentence of the whole cited source closest to a claim.

Passages are ranked for a judge to read; the evidence sentence is what a reader is shown
first. It is chosen over every sentence of the cited source (not only the passages a ranking
kept) by cosine between the claim's e5 ``query:`` vector and each sentence's ``passage:``
vector, so a German claim finds its sentence in an English source, where BM25 shares no word
with it. Measured on 19 German claims citing English sources (issue 23): this sentence was the
planted evidence 14 times, the best BM25 sentence's MRR was 0.22 against e5's 0.84.

Embeddings find evidence; they do not decide a verdict (cosine does not see contradiction).

Where the vectors live: ``source_sentences`` in Postgres (schema/0053), written when a source
is parsed (:func:`store_sentences`), or on first use for a source parsed before
(:func:`nearest_sentence` fills them in). The nearest sentence is ranked by pgvector where it is
installed, else in the worker over a per-process cache of each document's sentence matrix (a
document's sentences never change once written, so the cache cannot go stale).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel

from analysis import db
from analysis.pipeline.documents.pdftext import Page
from analysis.pipeline.retrieval.chunking import Passage, split_page_sentences
from analysis.pipeline.retrieval.embeddings import Embedder
from analysis.pipeline.retrieval.index import Hit, tokenize

logger = logging.getLogger(__name__)

#: Documents whose sentence matrices a worker keeps (numpy path): a thesis cites a handful.
CACHE_DOCUMENTS = 32
#: Pages whose passages a worker keeps (:class:`PageChunks`): a few per cited source.
CACHE_PAGES = 1024


class Focus(BaseModel):
    """The sentence of a source closest to a claim."""

    text: str
    page: int
    similarity: float


def vector_literals(vectors: Sequence[Sequence[float]]) -> list[str]:
    """Vectors as ``real[]`` literals, the form the insert queries unnest."""
    return [vector_literal(v) for v in vectors]


def vector_literal(vector: Sequence[float]) -> str:
    """One vector as a ``real[]`` literal: a query vector bound this way costs psycopg2 about
    0.2 ms where a list of 384 floats, adapted one by one into ``ARRAY[…]``, costs 0.5 ms."""
    return "{" + ",".join(map(repr, map(float, vector))) + "}"


def store_sentences(cur, *, document_id: int, user_id: int, model: str, pages: Sequence[Page],
                    vectors: Sequence[Sequence[float]] | None = None, embedder: Embedder | None = None) -> int:
    """Write the embedded sentences of a document (in the caller's transaction); how many.

    Pass the ``vectors`` of :func:`sentences_of` computed before the transaction (the parse
    step does, so no computation holds a transaction open), or an ``embedder`` to compute them here.
    """
    sentences = split_page_sentences(pages)
    if vectors is None:
        vectors = embedder.embed([s.text for s in sentences]) if sentences and embedder else []
    if not sentences or len(vectors) != len(sentences):
        return 0
    db.one(cur, "source_sentences_insert", document_id=document_id, user_id=user_id, model=model,
           ordinals=[s.ordinal for s in sentences], pages=[s.page for s in sentences],
           texts=[s.text for s in sentences], embeddings=vector_literals(vectors))
    return len(sentences)


def pooled_passage_vectors(passages: Sequence[Passage], sentences: Sequence[Passage],
                           sentence_vectors: Sequence[Sequence[float]],
                           embed: Callable[[list[str]], list[list[float]]]) -> list[list[float]]:
    """A vector per passage: the normalised mean of the vectors of the sentences it holds (they are
    embedded anyway, for the evidence sentence), so passages cost no second pass of the model
    (measured: passages were over half of the parse step's embedding time); ``embed`` embeds only
    a passage that holds no whole sentence (a long sentence cut into windows)."""
    by_page: dict[int, list[int]] = {}
    for i, s in enumerate(sentences):
        by_page.setdefault(s.page, []).append(i)
    matrix = np.asarray(sentence_vectors, dtype=np.float32)
    pooled: list[list[float] | None] = []
    for p in passages:
        text = " ".join(p.text.split())
        held = [i for i in by_page.get(p.page, []) if sentences[i].text in text]
        if not held:
            pooled.append(None)
            continue
        mean = matrix[held].mean(axis=0)
        pooled.append((mean / max(float(np.linalg.norm(mean)), 1e-12)).tolist())
    alone = [i for i, v in enumerate(pooled) if v is None]
    for i, vector in zip(alone, embed([passages[i].text for i in alone]) if alone else []):
        pooled[i] = vector
    return pooled


def sentences_of(pages: Sequence[Page]) -> list[str]:
    """The texts :func:`store_sentences` stores for these pages, in order (to embed them first)."""
    return [s.text for s in split_page_sentences(pages)]


class SentenceMatrices:
    """Per-process cache: (document, model) -> its sentences and their unit vectors."""

    def __init__(self, size: int = CACHE_DOCUMENTS) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[int, str], tuple[list[tuple[int, str]], np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, broker, user_id: int, document_id: int, model: str):
        key = (int(document_id), model)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        rows = db.many_on(broker, "source_sentences_many", user_id=user_id, document_id=document_id, model=model)
        if not rows:
            return None  # not embedded yet: nothing is cached, the next call reads again
        matrix = np.asarray([r[3] for r in rows], dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        entry = ([(r[1], r[2]) for r in rows], matrix)
        with self._lock:
            self._entries[key] = entry
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_matrices = SentenceMatrices()


class PageChunks:
    """Per-process cache: (database, user, document, page) -> the page's passages, as
    ``document_page_chunks_many`` reads them. A document's passages never change once written,
    and the evidence sentences of a source's claims fall on a few of its pages: the read costs a
    round trip per claim without it (issue 29). Kept per broker, so two databases whose ids
    coincide (tests clone one template) never see each other's passages."""

    def __init__(self, size: int = CACHE_PAGES) -> None:
        self.size = size
        self._by_broker: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, broker, user_id: int, document_id: int, page: int) -> list[tuple]:
        key = (int(user_id), int(document_id), int(page))
        with self._lock:
            entries = self._by_broker.setdefault(broker, OrderedDict())
            if key in entries:
                entries.move_to_end(key)
                return entries[key]
        rows = db.many_on(broker, "document_page_chunks_many", user_id=user_id, document_id=document_id, page=page)
        if rows:  # none: not (or not yet) the user's passages; nothing is cached
            with self._lock:
                entries[key] = rows
                while len(entries) > self.size:
                    entries.popitem(last=False)
        return rows

    def clear(self) -> None:
        with self._lock:
            self._by_broker.clear()


_page_chunks = PageChunks()


def nearest_sentence(broker, *, user_id: int, document_id: int, query: Sequence[float], embedder: Embedder,
                     in_postgres: bool) -> Focus | None:
    """The sentence of the user's document nearest ``query`` (a claim's query vector), or None
    when the document has no sentence long enough. Embeds and stores the document's sentences
    first when this model has not embedded them yet."""
    nearest = _nearest_in_postgres if in_postgres else _nearest_in_worker
    found = nearest(broker, user_id, document_id, query, embedder.name)
    # Nothing found: perhaps not embedded yet. Asked only then, not before every claim (issue 29).
    if found is None and not db.one_on(broker, "source_sentences_embedded_one", user_id=user_id,
                                       document_id=document_id, model=embedder.name)[0]:
        _fill(broker, user_id, document_id, embedder)
        found = nearest(broker, user_id, document_id, query, embedder.name)
    return found


def _nearest_in_postgres(broker, user_id: int, document_id: int, query: Sequence[float], model: str) -> Focus | None:
    row = db.one_on(broker, "source_sentence_nearest_one", user_id=user_id, document_id=document_id,
                    model=model, embedding=vector_literal(query))
    return None if row is None else Focus(text=row[2], page=row[1], similarity=round(float(row[3]), 4))


def _nearest_in_worker(broker, user_id: int, document_id: int, query: Sequence[float], model: str) -> Focus | None:
    entry = _matrices.get(broker, user_id, document_id, model)
    if entry is None:
        return None
    sentences, matrix = entry
    q = np.asarray(query, dtype=np.float32)
    if matrix.shape[1] != q.shape[0] or not np.linalg.norm(q):
        return None
    scores = matrix @ (q / np.linalg.norm(q))
    best = int(np.argmax(scores))  # the first of equal scores: reading order, as in Postgres
    page, text = sentences[best]
    return Focus(text=text, page=page, similarity=round(float(scores[best]), 4))


def _fill(broker, user_id: int, document_id: int, embedder: Embedder) -> None:
    """Embed and store the sentences of a document parsed before its sentences were (or by
    another model). Two workers doing it at once both compute; the first write wins."""
    pages = [Page(number=p, text=t) for p, t in
             db.many_on(broker, "document_pages_many", user_id=user_id, document_id=document_id)]
    texts = sentences_of(pages)
    if not texts:
        return
    vectors = embedder.embed(texts)
    with broker.transaction() as cur:
        stored = store_sentences(cur, document_id=document_id, user_id=user_id, model=embedder.name,
                                 pages=pages, vectors=vectors)
    logger.info("source sentences embedded on first use", extra={
        "action": "sentences_embedded", "user_id": user_id, "document_id": document_id, "sentences": stored})


def passage_holding(broker, *, user_id: int, document_id: int, focus: Focus) -> Hit | None:
    """The passage of the focus sentence's page that holds it (most of its words, the first such
    passage when neighbours overlap): the passage a judge must read for the sentence."""
    rows = _page_chunks.get(broker, user_id, document_id, focus.page)
    if not rows:
        return None
    squashed = " ".join(focus.text.split())
    words = set(tokenize(focus.text))

    def holds(row) -> tuple[bool, int]:
        return squashed in " ".join(row[3].split()), len(words & set(tokenize(row[3])))

    best = max(rows, key=holds)  # max keeps the first of equals: reading order
    return Hit(passage_id=best[0], source_id=str(best[1]), page=best[2], text=best[3], score=0.0)


def with_focus(hits: list[Hit], focus: Focus, holding: Hit | None, k: int) -> list[Hit]:
    """The hits with the passage holding the focus sentence among them (in place of the last
    when ``k`` are there already) and the focus on the first hit."""
    hits = list(hits)
    if holding is not None and all(h.passage_id != holding.passage_id for h in hits):
        hits = hits[:max(k - 1, 0)] + [holding] if len(hits) >= k else hits + [holding]
    if not hits:
        return hits
    hits[0] = hits[0].model_copy(update={"focus": focus.text, "focus_page": focus.page,
                                         "focus_similarity": focus.similarity})
    return hits


def clear_cache() -> None:
    """Drop this process's cached sentence matrices and page passages."""
    _matrices.clear()
    _page_chunks.clear()
