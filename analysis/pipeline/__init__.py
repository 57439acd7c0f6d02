"""The pipeline: uploads, readers and parsing, citations, retrieval, judges, the analysis."""
