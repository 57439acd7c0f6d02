"""Providers: the HTTP client for any OpenAI-compatible endpoint, its typed errors and redaction,
its settings, and the global concurrency slots and daily budget kept in PostgreSQL."""
