"""The settings reference in docs/ is what the settings classes say (regenerate it with
``.venv/bin/python scripts/settings_reference.py``)."""

from __future__ import annotations

from citeq.reference import REFERENCE, settings_classes, settings_markdown


def test_the_committed_reference_is_current():
    assert REFERENCE.read_text(encoding="utf-8") == settings_markdown(), \
        "docs/reference/settings.md is stale: run .venv/bin/python scripts/settings_reference.py"


def test_every_variable_of_every_settings_class_is_in_the_reference():
    text = settings_markdown()
    variables = {v for cls in settings_classes() for v in cls.variables().values()}
    assert "DATABASE_URL" in variables and "CITEQ_LEASE_SECONDS" in variables
    assert all(f"`{v}`" in text for v in variables)
