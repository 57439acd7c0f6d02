"""Judging: the verdict model, the judge registry, the LLM judge and the deterministic offline judge
(with its lexical evidence in `judging.lexical`)."""
