"""A primary failing over to its streaming standby mid-batch (issue 26).

A primary and a standby made from it by ``pg_basebackup`` (the binaries every test uses),
streaming; every process — two workers, a scheduler, and this test process, which admits
like the web process does — has the multi-host URL
``host=<primary>,<standby>&target_session_attrs=read-write``. While judge calls are in
flight the primary stops at once (``pg_ctl stop -m immediate``) and the standby is
promoted. Then:

* every process reconnects by itself: each worker heartbeats on the new primary, the
  scheduler's next tick lands there, and this process admits one more analysis there, all
  within :data:`RECONNECT_DEADLINE`;
* every admitted job ends exactly once and is charged once; no verdict is written twice;
* what the standby held at the moment of the promotion is compared with what the clients had
  been told was committed just before the crash (a snapshot read on the primary): messages
  enqueued, messages acked, jobs admitted. With synchronous replication, and the workers'
  acks made synchronous as the operating how-to says to (``CITEQ_SYNCHRONOUS_ACKS=1``),
  nothing of it may be missing; with asynchronous replication the test reports what was
  missing (the tally line), and the after-checks show what the sweeps and the leases recovered.
"""

from __future__ import annotations

import shutil
import time

import psycopg2
import pytest

from analysis.settings import PipelineSettings, QueueSettings
from analysis.queue import userqueue
from citeq.devdb import EmbeddedPostgres, ensure_database, with_dbname
from tests.conftest import query, wait_for
from tests.faults import harness
from tests.integration.conftest import documents_by_name
from tests.topologies import cluster, tally

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(harness.BATCH_DEADLINE + 300)]

DB = "citeq_topo_failover"
#: Every process finds the new primary within this many seconds of the promotion (the
#: scheduler's first tick on it included: periodiq ticks once a minute).
RECONNECT_DEADLINE = 90.0


def _fresh(name: str) -> EmbeddedPostgres:
    pg = EmbeddedPostgres.for_name(name)
    pg.stop(mode="immediate")
    shutil.rmtree(pg.data_dir, ignore_errors=True)
    return pg


@pytest.fixture
def pair(request):
    """(primary, standby), streaming; with ``synchronous`` the primary waits for the standby."""
    synchronous = request.param == "synchronous"
    primary = _fresh("topo-failover-primary")
    primary.start()
    standby = _fresh("topo-failover-standby")
    standby.bindir = primary.bindir
    try:
        primary._run(str(primary.bindir / "pg_basebackup"), "-D", str(standby.data_dir), "-h",
                     str(primary.socket_dir), "-U", "postgres", "-R", "-X", "stream", "-c", "fast")
        for copied in standby.data_dir.glob(".s.PGSQL.*"):  # the primary's socket lock, copied along
            copied.unlink()
        standby.start()
        admin = psycopg2.connect(primary.url())
        admin.autocommit = True
        with admin.cursor() as cur:
            if synchronous:
                cur.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
                cur.execute("SELECT pg_reload_conf()")
            want = "sync" if synchronous else "async"
            wait_for(lambda: query(admin, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' "
                                          "AND sync_state = %s", want)[0][0] == 1,
                     timeout=30, message=f"the standby streaming ({want})")
        admin.close()
        yield primary, standby
    finally:
        for pg in (standby, primary):
            pg.stop(mode="immediate")
            shutil.rmtree(pg.data_dir, ignore_errors=True)


#: The standby's replay position counts as settled when it has not moved for this long after
#: its WAL receiver lost the primary.
REPLAY_SETTLED_SECONDS = 2.0


def _wait_replayed(standby_conn) -> None:
    """Wait until the standby has replayed all it will ever replay of the dead primary's WAL.

    Usually that is everything it received. But the primary streams up to its flush position,
    which can end inside a record (the WAL writer flushes whole pages, not whole records); a
    torn last record is never replayed, so "replayed >= received" may never come true. Once the
    WAL receiver is gone nothing more arrives: then a replay position that stays put for
    :data:`REPLAY_SETTLED_SECONDS` is final."""
    last: list = [None, time.monotonic()]

    def settled() -> bool:
        (replayed, caught_up), = query(
            standby_conn, "SELECT pg_last_wal_replay_lsn(), "
                          "pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn()")
        if caught_up:
            return True
        receiving = query(standby_conn, "SELECT count(*) FROM pg_stat_wal_receiver "
                                        "WHERE status = 'streaming'")[0][0]
        if receiving or replayed != last[0]:
            last[:] = [replayed, time.monotonic()]
            return False
        return time.monotonic() - last[1] >= REPLAY_SETTLED_SECONDS

    wait_for(settled, timeout=30, interval=0.1, message="the standby replayed what it received")


def _snapshot(conn) -> dict:
    return {
        "messages": dict(query(conn, "SELECT id, state::text FROM citeq_messages")),
        "jobs": dict(query(conn, "SELECT id, status::text FROM analysis_jobs")),
        "charges": query(conn, "SELECT count(*) FROM credit_ledger WHERE kind = 'charge'")[0][0],
        "verdicts": query(conn, "SELECT count(*) FROM job_citations WHERE verdict IS NOT NULL")[0][0],
    }


def _missing(before: dict, after: dict) -> dict[str, int]:
    """What the clients had been told was committed (``before``) and the promoted standby lacks."""
    done_before = {i for i, s in before["messages"].items() if s == "done"}
    return {
        "enqueued": len(before["messages"].keys() - after["messages"].keys()),
        "acked": sum(1 for i in done_before if after["messages"].get(i, "done") != "done"),
        "admitted": len(before["jobs"].keys() - after["jobs"].keys()),
        "charges": max(before["charges"] - after["charges"], 0),
        "verdicts": max(before["verdicts"] - after["verdicts"], 0),
    }


@pytest.mark.parametrize("pair", ["synchronous", "asynchronous"], indirect=True)
def test_the_primary_fails_over_to_its_standby_mid_batch(pair, tmp_path, request):
    primary, standby = pair
    mode = request.node.callspec.params["pair"]
    ensure_database(primary.url(), DB)
    url = (f"postgresql://postgres@/{DB}?host={primary.socket_dir},{standby.socket_dir}"
           f"&target_session_attrs=read-write&connect_timeout=2")
    cluster.prepare_database(with_dbname(primary.url(), DB))
    fleet = cluster.Fleet(tmp_path, {"DATABASE_URL": url, "CITEQ_LEASE_SECONDS": "4",
                                     "CITEQ_SYNCHRONOUS_ACKS": "1" if mode == "synchronous" else "0"})
    with harness.SlowProvider() as provider, cluster.actors_on(url):
        try:
            env = provider.env()
            fleet.worker(env)
            fleet.worker(env)
            fleet.scheduler(env)
            conn = cluster.connect(url)
            jobs = harness.submit_batch(conn)
            user, thesis, sources = _one_more(conn)
            wait_for(lambda: harness.judge_calls_in_flight(conn), timeout=120, message="judging under way")

            before = _snapshot(conn)
            primary.stop(mode="immediate")
            failed_at = time.monotonic()
            conn.close()
            standby_conn = cluster.connect(standby.url(DB))
            _wait_replayed(standby_conn)
            missing = _missing(before, _snapshot(standby_conn))
            standby_conn.close()
            standby._run(str(standby.bindir / "pg_ctl"), "-D", str(standby.data_dir), "-w", "promote")

            conn = cluster.connect(url)
            promoted = query(conn, "SELECT now()")[0][0]
            workers = wait_for(lambda: query(conn, "SELECT count(*) FROM citeq_workers WHERE last_seen_at > %s",
                                             promoted)[0][0] >= 2, timeout=RECONNECT_DEADLINE, interval=0.1,
                               message="both workers heartbeating on the new primary")
            workers_back = time.monotonic() - failed_at
            jobs.append(_admit_as_the_web_would(user, thesis, sources))
            wait_for(lambda: query(conn, "SELECT count(*) FROM citeq_messages WHERE queue_name = 'maintenance' "
                                         "AND enqueued_at > %s", promoted)[0][0], timeout=RECONNECT_DEADLINE,
                     interval=0.2, message="the scheduler's next tick on the new primary")
            scheduler_back = time.monotonic() - failed_at

            before_lost, before_twice = harness.TALLY.lost, harness.TALLY.charged_twice
            before_duplicated = harness.TALLY.verdicts_duplicated
            try:
                harness.check_and_tally(conn, f"failover ({mode})", jobs, 1)
            finally:
                tally.record(f"failover, {mode} replication", faults=1, jobs=len(jobs),
                             messages=len(before["messages"]), lost=harness.TALLY.lost - before_lost,
                             charged_twice=harness.TALLY.charged_twice - before_twice,
                             run_twice=harness.TALLY.verdicts_duplicated - before_duplicated,
                             note=f"missing on the promoted standby: {missing}; workers back in "
                                  f"{workers_back:.1f} s, scheduler's first tick {scheduler_back:.1f} s")
            assert workers
            conn.close()
        finally:
            fleet.stop_all()
    if mode == "synchronous":
        # Every commit waited for the standby, the workers' acks and job transitions included.
        assert missing == dict.fromkeys(missing, 0), f"synchronous replication lost nothing: {missing}"


def _admit_as_the_web_would(user: int, thesis: int, sources: list[int]) -> int:
    """Admit once more; a DatabaseUnavailable (503 from the web) is retried as its client
    would. The pool must replace its dead connections by itself: no restart, no reset."""
    from broker.errors import DatabaseUnavailable

    deadline = time.monotonic() + RECONNECT_DEADLINE
    while True:
        try:
            return userqueue.admit(user, thesis, sources, settings=QueueSettings()).job_id
        except DatabaseUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _one_more(conn) -> tuple[int, int, list[int]]:
    """A user with a parsed thesis and sources, to admit after the failover."""
    user = harness.USERS + 1
    from analysis.pipeline.intake import uploads
    from tests.integration.conftest import open_account, parse_done, sample_files

    open_account(conn, user, credits=3)
    staged = uploads.stage_upload(user, [*sample_files("thesis_urban_heat.pdf", kind="thesis"),
                                         *sample_files("castillo_2018_green_roofs.pdf")], settings=PipelineSettings())
    wait_for(lambda: parse_done(conn, staged.parse_job_id), timeout=120, message="the extra user's upload parsed")
    docs = documents_by_name(conn, staged.session_id)
    return user, docs["thesis_urban_heat.pdf"], [docs["castillo_2018_green_roofs.pdf"]]
