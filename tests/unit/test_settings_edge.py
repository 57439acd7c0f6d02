"""Settings are read at the edge (issue 24): no module of analysis/ or broker/ reads the
environment for its settings; the entry points (actors/config.py for the worker and the
scheduler, web/app.py's factory, the CLI, the demo) read them once and pass them down.

Read from the source (ast), like tests/unit/test_layers.py, so a call inside a function
counts as much as one at import.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The settings modules themselves define ``from_env``; they may name it.
SETTINGS_MODULES = {"broker/settings.py"}
#: Reads below the edge not moved yet, each with its reason (the report of issue 24 names them).
KNOWN = {
    # CITEQ_SCHEMA_DIR: where the migration files are, a fact of the installation rather than a
    # setting; every process that migrates reads it the same way.
    "broker/migrate.py",
    # PostgresBroker() built without settings: the application's own edge (the module Dramatiq
    # imports), where `PostgresBroker()` reads DATABASE_URL and CITEQ_* once, as before issue 24.
    "broker/postgres.py",
}


def _reads_the_environment(node: ast.AST) -> bool:
    """``….from_env()`` without a mapping to read (it reads the process's environment), or any
    use of ``os.environ`` / ``os.getenv``. ``judge_from_env(env)`` and ``X.from_env(env)`` read the
    mapping they are handed by their caller, an entry point: they are functions of an argument."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "from_env":
        return not node.args and not any(k.arg == "env" for k in node.keywords)
    return (isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv")
            and isinstance(node.value, ast.Name) and node.value.id == "os")


def _readers(package: str) -> dict[str, list[int]]:
    """{module path: lines} of every read of the process's environment in ``package``."""
    found: dict[str, list[int]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        for node in ast.walk(tree):
            if _reads_the_environment(node):
                found.setdefault(rel, []).append(node.lineno)
    return found


def test_no_module_below_the_entry_points_reads_settings_from_the_environment():
    found = {path: lines for package in ("analysis", "broker") for path, lines in _readers(package).items()
             if path not in SETTINGS_MODULES | KNOWN}
    assert not found, "settings read below the entry points (take them as arguments):\n" + "\n".join(
        f"{path}:{line}" for path, lines in sorted(found.items()) for line in lines)


def test_every_known_exception_still_reads_the_environment():
    """A reader moved to the edge leaves KNOWN, so the list never hides a new one."""
    found = {path for package in ("analysis", "broker") for path in _readers(package)}
    assert KNOWN <= found, f"no longer read below the edge, drop from KNOWN: {sorted(KNOWN - found)}"


def test_the_scan_finds_a_reader(tmp_path, monkeypatch):
    """The check itself: a from_env call below the edge is reported."""
    (tmp_path / "analysis").mkdir()
    (tmp_path / "analysis" / "x.py").write_text(
        "import os\n\ndef f(env):\n    return Settings.from_env(), Settings.from_env(env), os.environ['X']\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert _readers("analysis") == {"analysis/x.py": [4, 4]}
