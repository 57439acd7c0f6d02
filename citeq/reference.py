"""The settings reference (docs/reference/settings.md), generated from the settings classes.

Every setting is a field of an :class:`~broker.settings.EnvSettings` subclass that names its
environment variable and its meaning; this module lists them all, grouped by class, so the
reference cannot drift from the code: ``tests/unit/test_settings_reference.py`` fails when the
committed file differs from what :func:`settings_markdown` writes.

    .venv/bin/python scripts/settings_reference.py        # rewrite docs/reference/settings.md
"""

from __future__ import annotations

import importlib
from pathlib import Path

from pydantic_core import PydanticUndefined

from broker.settings import EnvSettings

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference" / "settings.md"

#: Modules that declare settings classes; importing them registers every subclass.
MODULES = ("broker.settings", "analysis.settings", "analysis.surface.accounts", "web.settings", "citeq.demo",
           "citeq.devdb")


def settings_classes() -> list[type[EnvSettings]]:
    """Every settings class with at least one variable of its own, in a stable order."""
    for name in MODULES:
        importlib.import_module(name)
    found, todo = [], list(EnvSettings.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith(("broker", "analysis", "web", "citeq")):
            found.append(cls)
    return sorted(set(found), key=lambda c: (c.__module__, c.__qualname__))


def _default(field) -> str:
    if field.default is PydanticUndefined:
        return "required" if field.default_factory is None else "computed"
    if field.default is None:
        return "unset"
    return f"`{field.default}`"


def settings_markdown() -> str:
    """The reference as Markdown: one table per settings class, each variable once (where a
    class inherits a variable, the class that declares it lists it)."""
    out = ["# Settings reference", "",
           "Generated from the settings classes by `scripts/settings_reference.py`; do not edit by hand",
           "(`tests/unit/test_settings_reference.py` fails when this file is stale). Each process reads",
           "its settings from the environment once, at its entry point; an empty variable counts as unset,",
           "and a bad value is a typed error naming the variable.", ""]
    seen: set[str] = set()
    for cls in settings_classes():
        rows = []
        for name, field in cls.model_fields.items():
            variable = field.validation_alias
            if not isinstance(variable, str) or variable in seen:
                continue
            seen.add(variable)
            description = (field.description or name.replace("_", " ")).replace("|", "\\|").replace("\n", " ")
            rows.append(f"| `{variable}` | {_default(field)} | {description} |")
        if not rows:
            continue
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        out += [f"## `{cls.__qualname__}` ({cls.__module__})", "", doc, "", "| variable | default | meaning |",
                "|---|---|---|", *rows, ""]
    return "\n".join(out).rstrip() + "\n"


def write() -> Path:
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE.write_text(settings_markdown(), encoding="utf-8")
    return REFERENCE
