"""Lexical retrieval of source passages for a claim (BM25), plus rank fusion.

BM25 comes from `bm25s`: actively maintained, depends only on numpy, and
scores with Lucene's IDF, which stays positive. The older `rank-bm25` (last
release 2022) uses Okapi IDF, which turns negative for terms found in more than
half of the passages; with a thesis's handful of sources that happens to the very
terms a claim is about, and floors them to an arbitrary epsilon.

The index is a per-process cache (see DESIGN "Durable state"): built from
passages persisted elsewhere, rebuilt on a miss, never the source of truth.

Default k = 3 passages per claim. Passages are ~120 words, so three are ~360
words (~500 tokens): cheap enough to send to an HTTP judge for every citation,
and enough to cover the usual case where the evidence sits in one passage but
BM25's top hit is a near-miss (an abstract or a summary restating the claim's
words). More passages dilute a judge's attention and cost tokens; neighbouring
passages already overlap, so a statement split by a cut is found whole.

Hybrid retrieval (when chunks carry embeddings, see analysis/pipeline/retrieval/embeddings.py) ranks the
cited source's passages twice — BM25 and cosine similarity to the claim's embedding —
takes the best `FUSION_DEPTH` of each and fuses the two rankings (`fuse_ranks`): BM25
catches exact terms and numbers, vectors catch paraphrase. The cosine ranking is done by
pgvector where it is installed; `PassageIndex.vector_search` is the fallback over the
vectors a worker already holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import bm25s
import numpy as np
from pydantic import BaseModel

DEFAULT_K = 3
RRF_K = 60
#: Candidates of each ranking that enter the fusion: deep enough that a passage ranked
#: well by one method and modestly by the other can still win, shallow enough to stay cheap.
FUSION_DEPTH = 10

#: Short English and German stopword list; enough to stop "the"/"der" dominating.
STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been
    being this that these those it its their there here which who whom what when where
    how than then so such not no nor can could may might will would shall should do does
    did has have had into over under about between also more most very we our they them
    he she his her i you your us et al
    der die das den dem des ein eine einer eines einem einen und oder aber wenn als wie
    ist sind war waren wird werden wurde wurden zu zum zur im in am an auf aus bei mit
    nach von vor für über unter durch auch nicht kein keine sich es er sie wir ihr dass
    daß so noch nur schon""".split()
)
_WORD = re.compile(r"\w+")


class PassageRecord(BaseModel):
    """A passage as stored: what the index is built from."""

    passage_id: int | str
    source_id: str
    page: int
    text: str
    #: The chunk's embedding, when loaded for vector search in this process.
    embedding: list[float] | None = None


class Hit(BaseModel):
    """A retrieved passage with its score (BM25, or fused RRF score).

    Retrieval sets ``focus`` on the first hit of a claim when there is an embedder: the
    sentence of the whole cited source closest to the claim (analysis/pipeline/retrieval/evidence.py),
    its page and its cosine; the passage holding it is among the hits.
    """

    passage_id: int | str
    source_id: str
    page: int
    text: str
    score: float
    focus: str | None = None
    focus_page: int | None = None
    focus_similarity: float | None = None


def tokenize(text: str) -> list[str]:
    """Lowercase unicode word tokens without stopwords (and without 1-letter tokens)."""
    return [t for t in _WORD.findall(text.lower()) if len(t) > 1 and t not in STOPWORDS]


class PassageIndex:
    """BM25 over a fixed set of passages, optionally filtered by source at query time."""

    def __init__(self, passages: Iterable[PassageRecord | tuple[int | str, str, int, str]]) -> None:
        records = [_record(p) for p in passages]
        self._vectors, self._has_vector = _unit_rows([p.embedding for p in records])
        # The vectors live in one matrix; records keep only what a Hit shows.
        self._passages = [p.model_copy(update={"embedding": None}) if p.embedding else p for p in records]
        self._sources = np.array([p.source_id for p in self._passages], dtype=object)
        self._bm25 = None
        if self._passages:
            self._bm25 = bm25s.BM25()
            # create_empty_token keeps a passage with no tokens from breaking the index.
            self._bm25.index([tokenize(p.text) for p in self._passages], show_progress=False)

    def __len__(self) -> int:
        return len(self._passages)

    def search(self, query: str, source_id: str | None = None, k: int = DEFAULT_K) -> list[Hit]:
        """The `k` best passages for `query` (only from `source_id` if given).

        Passages sharing no term with the query are never returned, so fewer than
        `k` hits (or none) is a meaningful answer, not padding.
        """
        tokens = tokenize(query)
        if self._bm25 is None or not tokens or k <= 0:
            return []
        scores = self._bm25.get_scores(tokens)
        if source_id is not None:
            scores = np.where(self._sources == source_id, scores, 0.0)
        # Stable sort keeps document order among equal scores: deterministic output.
        order = np.argsort(-scores, kind="stable")[:k]
        return [self._hit(i, float(scores[i])) for i in order if scores[i] > 0]

    def opening(self, source_id: str, k: int = DEFAULT_K) -> list[Hit]:
        """The first `k` passages of `source_id` in document order (score 0): what a reader
        looks at when a claim shares no word with the source, as when a German thesis cites an
        English paper."""
        found = [i for i, p in enumerate(self._passages) if p.source_id == source_id][:max(k, 0)]
        return [self._hit(i, 0.0) for i in found]

    def has_vectors(self, source_id: str | None = None) -> bool:
        """Whether any passage (of `source_id`, if given) carries an embedding."""
        mask = self._has_vector if source_id is None else self._has_vector & (self._sources == source_id)
        return bool(mask.any())

    def vector_search(self, query: Sequence[float], source_id: str | None = None, k: int = DEFAULT_K) -> list[Hit]:
        """The `k` passages whose embeddings are nearest `query` (cosine); passages without
        an embedding of the query's dimension are never returned."""
        q = np.asarray(query, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if k <= 0 or norm == 0 or self._vectors.shape[1] != q.shape[0]:
            return []
        mask = self._has_vector if source_id is None else self._has_vector & (self._sources == source_id)
        scores = np.where(mask, self._vectors @ (q / norm), -np.inf)
        order = np.argsort(-scores, kind="stable")[:k]
        return [self._hit(i, float(scores[i])) for i in order if mask[i]]

    def _hit(self, i: int, score: float) -> Hit:
        p = self._passages[i]
        return Hit(passage_id=p.passage_id, source_id=p.source_id, page=p.page, text=p.text, score=score)


def fuse_ranks(bm25_hits: Sequence[Hit], vector_hits: Sequence[Hit], k: int = RRF_K) -> list[Hit]:
    """Reciprocal-rank fusion: score = sum over lists of 1 / (k + rank), rank from 1.

    Only ranks matter, so BM25 and cosine scores need no common scale; k = 60 is
    the constant of Cormack et al. (2009). Returned hits carry the fused score.
    """
    fused: dict[tuple[str, int | str], float] = {}
    first_seen: dict[tuple[str, int | str], Hit] = {}
    for hits in (bm25_hits, vector_hits):
        for rank, hit in enumerate(hits, start=1):
            key = (hit.source_id, hit.passage_id)
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(key, hit)
    # sorted() is stable: ties keep first-seen order, BM25's list first.
    ranked = sorted(fused, key=lambda key: -fused[key])
    return [first_seen[key].model_copy(update={"score": fused[key]}) for key in ranked]


def _unit_rows(embeddings: list[list[float] | None]) -> tuple[np.ndarray, np.ndarray]:
    """Unit-length rows of the embeddings (dimension of the first one; others count as
    missing, as after a model change) and the mask of rows that have one."""
    dim = next((len(e) for e in embeddings if e), 0)
    matrix = np.zeros((len(embeddings), dim), dtype=np.float32)
    has = np.zeros(len(embeddings), dtype=bool)
    for i, e in enumerate(embeddings):
        if e and len(e) == dim:
            row = np.asarray(e, dtype=np.float32)
            norm = float(np.linalg.norm(row))
            if norm > 0:
                matrix[i], has[i] = row / norm, True
    return matrix, has


def _record(p: PassageRecord | tuple[int | str, str, int, str]) -> PassageRecord:
    if isinstance(p, PassageRecord):
        return p
    passage_id, source_id, page, text = p
    return PassageRecord(passage_id=passage_id, source_id=source_id, page=page, text=text)
