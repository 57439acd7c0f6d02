"""Run Dramatiq's own test suite against citeq's PostgresBroker.

    .venv/bin/python scripts/dramatiq_suite.py            # what `make dramatiq-suite` runs
    .venv/bin/python scripts/dramatiq_suite.py -x -k join # extra arguments go to pytest
    .venv/bin/python scripts/dramatiq_suite.py --repo-tests /path/to/dramatiq/tests

The sdist of the installed Dramatiq version ships its tests. This script fetches it with pip
(``pip download --no-binary :all: --no-deps dramatiq==X``), unpacks its ``tests/`` into a
scratch folder (.citeq/dramatiq-suite/<version>/, never committed: it is Dramatiq's code),
adds citeq's fixtures (tests/dramatiq_suite/suite_conftest.py as ``conftest.py``: the
``stub_broker`` fixture and the result and rate-limiter backends become citeq's Postgres
ones) and runs the broker-generic files below. Tests listed in
tests/dramatiq_suite/exclusions.txt (each reaches into StubBroker's internals; the file says
why for each) are deselected; every other test must pass.

``--repo-tests DIR`` (``make dramatiq-suite DRAMATIQ_REPO_TESTS=DIR``) also runs the test files
that Dramatiq's git repository has and its sdist lacks: ``DIR`` is the ``tests/`` folder of a
local checkout, and its ``middleware/test_*.py`` (retries, time limits, shutdown notifications,
threading, asyncio, prometheus) are copied next to the sdist's tests, under ``middleware/``.
Nothing is fetched from GitHub (CI has no access to it); get the tests of the commit the
installed version was released from by any means, e.g. from a mirror (2.2.1 has no tag: its
sources and its sdist's tests are those of 848b35f, the newest commit; v2.2.0's test_asyncio.py
is older)::

    mkdir -p .citeq/dramatiq-repo
    git -C /path/to/dramatiq.git archive 848b35f tests | tar -x -C .citeq/dramatiq-repo
    make dramatiq-suite DRAMATIQ_REPO_TESTS=.citeq/dramatiq-repo/tests

The script says which of the checkout's top-level test files differ from the sdist's (a sign
that the checkout is of another version) and which fixtures of the checkout's conftest.py
citeq's suite_conftest.py lacks (Redis', RabbitMQ's and memcached's: the broker-generic ones
are all there, the stub ones as citeq's).

Their deselected tests and reasons are in tests/dramatiq_suite/exclusions-repo.txt. The
checkout's own ``common.py`` is not used (it imports pika and connects to RabbitMQ at import):
citeq's suite_common.py stands in for it, and the run stops if the checkout's defines a name
that citeq's lacks.

The database is DATABASE_URL's server when set, else the embedded test server.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "tests" / "dramatiq_suite"
SCRATCH = ROOT / ".citeq" / "dramatiq-suite"

#: Dramatiq's test files that exercise a broker through its public API.
FILES = (
    "test_actors.py",
    "test_barrier.py",
    "test_broker.py",
    "test_callbacks.py",
    "test_composition.py",
    "test_encoders.py",
    "test_generic_actors.py",
    "test_messages.py",
    "test_results.py",
    "test_stub_broker.py",
    "test_worker.py",
    "test_window_rate_limiter.py",
    "test_concurrent_rate_limiter.py",
    "test_bucket_rate_limiter.py",
)

PYTEST_INI = """\
[pytest]
# Dramatiq's tests, citeq's fixtures (conftest.py); not the project's pytest settings.
timeout = 180
addopts = -p no:cacheprovider
"""


def say(msg: str) -> None:
    print(msg, flush=True)


#: Where a checkout's extra test files go, inside the sdist's tests folder.
REPO_DIR = "middleware"


def exclusions(path: Path = HERE / "exclusions.txt") -> dict[str, str]:
    """``{node id: reason}`` of the tests not run (one file of them)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        node, sep, reason = line.partition(" -- ")
        if not sep or not reason.strip():
            raise SystemExit(f"{path.name}: every line needs ' -- <reason>': {line!r}")
        out[node.strip()] = reason.strip()
    return out


def fetch_tests(version: str) -> Path:
    """Dramatiq ``version``'s tests, unpacked under the scratch folder; the tests folder."""
    where = SCRATCH / version
    tests = where / "tests"
    if (where / ".unpacked").exists():
        return tests
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    say(f"fetching the sdist of dramatiq {version} with pip")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                    "--no-binary", ":all:", "--no-deps", "--dest", str(where), f"dramatiq=={version}"],
                   check=True)
    sdist = next(where.glob("dramatiq-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        prefix = f"{sdist.name[:-len('.tar.gz')]}/tests/"
        members = [m for m in tar.getmembers() if m.name.startswith(prefix) and m.isfile()]
        if not members:
            raise SystemExit(f"{sdist.name} has no tests/ folder")
        for m in members:
            m.name = m.name[len(prefix) - len("tests/"):]
        tar.extractall(where, members=members, filter="data")
    (where / ".unpacked").touch()
    return tests


def prepare(tests: Path) -> None:
    """Put citeq's fixtures and helpers next to Dramatiq's tests (refreshed on every run)."""
    shutil.copyfile(HERE / "suite_conftest.py", tests / "conftest.py")
    shutil.copyfile(HERE / "suite_common.py", tests / "common.py")
    (tests / "__init__.py").touch()
    (tests.parent / "pytest.ini").write_text(PYTEST_INI)


def copy_repo_tests(checkout: Path, tests: Path) -> list[str]:
    """Copy the checkout's ``middleware/test_*.py`` into ``tests/middleware/``; their paths
    relative to ``tests``. Files of an earlier run that the checkout lacks go."""
    found = sorted((checkout / REPO_DIR).glob("test_*.py"))
    if not found:
        raise SystemExit(f"--repo-tests: {checkout / REPO_DIR} has no test_*.py (is {checkout} a tests/ folder?)")
    missing = sorted(public_names(checkout / "common.py") - public_names(HERE / "suite_common.py"))
    if missing:
        raise SystemExit(f"{checkout / 'common.py'} defines {', '.join(missing)}, which "
                         "tests/dramatiq_suite/suite_common.py lacks: add them there")
    absent = sorted(fixtures(checkout / "conftest.py") - fixtures(HERE / "suite_conftest.py"))
    if absent:
        say(f"note: citeq's suite_conftest.py has none of the checkout's fixtures {', '.join(absent)} "
            "(a test that asks for one errors)")
    differ = [f.name for f in sorted(checkout.glob("test_*.py"))
              if (tests / f.name).exists() and (tests / f.name).read_bytes() != f.read_bytes()]
    if differ:
        say(f"note: the checkout's {', '.join(differ)} differ from the sdist's: is it of another version?")
    target = tests / REPO_DIR
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    (target / "__init__.py").touch()
    for f in found:
        shutil.copyfile(f, target / f.name)
    return [f"{REPO_DIR}/{f.name}" for f in found]


def public_names(module: Path) -> set[str]:
    """Top-level names a module defines (functions, classes, assignments), not imports."""
    if not module.exists():
        return set()
    names = set()
    body = list(ast.parse(module.read_text(encoding="utf-8")).body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.If, ast.Try)):  # names defined under `try:` / `if` count too
            body += [*node.body, *node.orelse, *getattr(node, "finalbody", []),
                     *[s for h in getattr(node, "handlers", []) for s in h.body]]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def fixtures(module: Path) -> set[str]:
    """Names of the functions a conftest decorates with ``pytest.fixture``."""
    if not module.exists():
        return set()
    return {node.name for node in ast.parse(module.read_text(encoding="utf-8")).body
            if isinstance(node, ast.FunctionDef)
            and any("fixture" in ast.unparse(d) for d in node.decorator_list)}


def checked_exclusions(path: Path, files: list[str]) -> dict[str, str]:
    excluded = exclusions(path)
    for node in excluded:
        if node.split("::")[0] not in files:
            raise SystemExit(f"{path.name} names a file that is not run: {node}")
    return excluded


def main(argv: list[str]) -> int:
    import dramatiq

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--repo-tests", type=Path, metavar="DIR",
                        help="the tests/ folder of a Dramatiq checkout: also run its middleware/ tests")
    opts, pytest_args = parser.parse_known_args(argv)
    version = dramatiq.__version__
    tests = fetch_tests(version)
    prepare(tests)
    files = list(FILES)
    missing = [f for f in files if not (tests / f).exists()]
    if missing:
        raise SystemExit(f"dramatiq {version}'s sdist lacks {', '.join(missing)}")
    excluded = checked_exclusions(HERE / "exclusions.txt", files)
    say(f"Dramatiq {version}'s own tests against citeq's PostgresBroker: {len(files)} files, "
        f"{len(excluded)} tests excluded (tests/dramatiq_suite/exclusions.txt)")
    if opts.repo_tests is not None:
        repo_files = copy_repo_tests(opts.repo_tests.resolve(), tests)
        repo_excluded = checked_exclusions(HERE / "exclusions-repo.txt", repo_files)
        say(f"and {len(repo_files)} files of the checkout {opts.repo_tests} ({', '.join(repo_files)}), "
            f"{len(repo_excluded)} tests excluded (tests/dramatiq_suite/exclusions-repo.txt)")
        files += repo_files
        excluded.update(repo_excluded)
    args = [sys.executable, "-m", "pytest", "-q", "--rootdir", str(tests.parent),
            *[f"tests/{f}" for f in files]]
    for node in excluded:
        args += ["--deselect", f"tests/{node}"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([*args, *pytest_args], cwd=tests.parent, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
