"""Chaos run of message groups: worker processes SIGKILLed in a loop while keys drain.

    .venv/bin/python scripts/chaos_groups.py                    # 50 keys x 100 messages
    .venv/bin/python scripts/chaos_groups.py --keys 10 --per-key 20 --kill-every 0.5

Each message (citeq/groupsbench/app.py ``recorded``) writes its start and end to the database;
every ``--kill-every`` seconds (jittered) one worker process group is SIGKILLed and a fresh
one started in its place, until every message is done. Then, from the rows:

* order violations: a run that started after a run of a later message of its key;
* overlaps: two runs of a key at the same instant (a killed run ends when it was killed);
* lost: messages of which no run ended; duplicates (at-least-once, reported, allowed):
  messages with more than one finished run.

Database: DATABASE_URL when set, else the embedded server (database ``citeq_chaos``).
tests/e2e/test_groups_processes.py runs it CI-sized.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citeq.groupsbench.chaos import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=50)
    parser.add_argument("--per-key", type=int, default=100)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--kill-every", type=float, default=1.0, help="seconds between kills (jittered)")
    parser.add_argument("--work-ms", type=int, default=5)
    args = parser.parse_args()
    from scripts._benchdb import database

    url = database("citeq_chaos")
    result = run(url, keys=args.keys, per_key=args.per_key, processes=args.processes, threads=args.threads,
                 kill_every=args.kill_every, work_ms=args.work_ms)
    bad = result["order_violations"] + result["overlaps"] + result["lost"]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
