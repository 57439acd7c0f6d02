"""Run Dramatiq's own test suite against citeq's PostgresBroker.

    .venv/bin/python scripts/dramatiq_suite.py            # what `make dramatiq-suite` runs
    .venv/bin/python scripts/dramatiq_suite.py -x -k join # extra arguments go to pytest

The sdist of the installed Dramatiq version ships its tests. This script fetches it with pip
(``pip download --no-binary :all: --no-deps dramatiq==X``), unpacks its ``tests/`` into a
scratch folder (.citeq/dramatiq-suite/<version>/, never committed: it is Dramatiq's code),
adds citeq's fixtures (tests/dramatiq_suite/suite_conftest.py as ``conftest.py``: the
``stub_broker`` fixture and the result and rate-limiter backends become citeq's Postgres
ones) and runs the broker-generic files below. Tests listed in
tests/dramatiq_suite/exclusions.txt (each reaches into StubBroker's internals; the file says
why for each) are deselected; every other test must pass.

The database is DATABASE_URL's server when set, else the embedded test server.
"""

from __future__ import annotations

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


def exclusions(path: Path = HERE / "exclusions.txt") -> dict[str, str]:
    """``{node id: reason}`` of the tests not run."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        node, sep, reason = line.partition(" -- ")
        if not sep or not reason.strip():
            raise SystemExit(f"exclusions.txt: every line needs ' -- <reason>': {line!r}")
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


def main(argv: list[str]) -> int:
    import dramatiq

    version = dramatiq.__version__
    tests = fetch_tests(version)
    prepare(tests)
    excluded = exclusions()
    missing = [f for f in FILES if not (tests / f).exists()]
    if missing:
        raise SystemExit(f"dramatiq {version}'s sdist lacks {', '.join(missing)}")
    for node in excluded:
        if node.split("::")[0] not in FILES:
            raise SystemExit(f"exclusions.txt names a file that is not run: {node}")
    say(f"Dramatiq {version}'s own tests against citeq's PostgresBroker: {len(FILES)} files, "
        f"{len(excluded)} tests excluded (tests/dramatiq_suite/exclusions.txt)")
    args = [sys.executable, "-m", "pytest", "-q", "--rootdir", str(tests.parent),
            *[f"tests/{f}" for f in FILES]]
    for node in excluded:
        args += ["--deselect", f"tests/{node}"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([*args, *argv], cwd=tests.parent, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
