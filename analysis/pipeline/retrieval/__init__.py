"""Retrieval: chunking sources into passages, the BM25 and vector index over them, the per-process
source store rebuilt from PostgreSQL, and the embedders."""
