"""Run the fault-injection suite (tests/faults/) and print its tally.

    python scripts/fault_suite.py          # the CI size (also part of `make test`)
    python scripts/fault_suite.py --long   # more users and jobs, the provider down for a
                                           # minute, the scheduler away for ten minutes

Each case starts real worker and scheduler processes on the test database (the embedded
server unless DATABASE_URL is set), runs a batch of several users' analyses against a slow
loopback provider, injects its fault mid-batch and checks that nothing was lost, charged
twice or judged twice. The last line is the tally:

    fault suite (...): faults injected N, jobs J, lost 0, charged twice 0, verdicts duplicated 0
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--long", action="store_true", help="the long size (about half an hour)")
    parser.add_argument("-k", dest="select", help="only the cases matching this pytest -k expression")
    args = parser.parse_args()
    env = dict(os.environ, CITEQ_FAULTS_LONG="1" if args.long else "0")
    command = [sys.executable, "-m", "pytest", "-q", "tests/faults", "-p", "no:cacheprovider"]
    if args.select:
        command += ["-k", args.select]
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
