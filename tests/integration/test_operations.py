"""The operator overview, queue pause/resume over HTTP and the CLI, and what the web process
sends over the wire (gzip, cache headers), on a real PostgreSQL."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from analysis.settings import QueueSettings
from analysis.surface import accounts, operations
from broker import admin
from tests.conftest import query
from tests.integration.conftest import add_documents, open_account, queue_broker, run  # noqa: F401
from web.app import create_app


@pytest.fixture
def client(queue_broker):  # noqa: F811
    with TestClient(create_app(broker=queue_broker)) as c:
        yield c


@pytest.fixture
def ops(queue_broker):  # noqa: F811
    return {"Authorization": f"Bearer {accounts.mint_token(queue_broker, None, operator=True)}"}


def queue(overview: dict, name: str) -> dict:
    return next(q for q in overview["queues"] if q["queue_name"] == name)


def test_the_overview_lists_empty_queues_and_flags_ready_work_without_a_worker(client, ops, queue_broker, conn):  # noqa: F811
    from actors.queue import stall_sweep

    empty = client.get("/api/ops/overview", headers=ops).json()
    declared = {q for q in queue_broker.get_declared_queues() if not q.endswith((".DQ", ".XQ"))}
    assert declared <= {q["queue_name"] for q in empty["queues"]}
    assert not any(q["stalled"] for q in empty["queues"])

    stall_sweep.send()
    found = client.get("/api/ops/overview", headers=ops).json()
    assert queue(found, "maintenance")["ready"] == 1 and queue(found, "maintenance")["stalled"] is True

    # paused on purpose is not stalled
    assert client.post("/api/ops/queues/maintenance/pause", headers=ops).json()["paused"] is True
    assert queue(client.get("/api/ops/overview", headers=ops).json(), "maintenance")["stalled"] is False
    assert client.post("/api/ops/queues/maintenance/resume", headers=ops).json()["paused"] is False
    assert query(conn, "SELECT count(*) FROM citeq_queue_pauses")[0][0] == 0


def test_pausing_an_unknown_queue_is_404(client, ops):
    r = client.post("/api/ops/queues/no-such-queue/pause", headers=ops)
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_queue"


def test_running_analyses_are_listed_oldest_first(client, ops, queue_broker, conn):  # noqa: F811
    from analysis.queue import userqueue

    for user in (1, 2):
        open_account(conn, user)
        thesis, sources = add_documents(conn, user)
        userqueue.admit(user, thesis, sources, broker=queue_broker, settings=QueueSettings())
    analyses = client.get("/api/ops/overview", headers=ops).json()["analyses"]
    assert [(a["user_id"], a["status"]) for a in analyses] == [(1, "pending"), (2, "pending")]


def test_dead_letters_read_by_their_last_line_and_show_no_server_paths():
    letter = admin.DeadLetter(id=1, message_id="m", queue_name="q", actor_name="a", attempts=3,
                              enqueued_at="2026-01-01T00:00:00Z", finished_at=None, reason=(
                                  "Traceback (most recent call last):\n"
                                  '  File "/home/ci/app/.venv/lib/python3.11/site-packages/dramatiq/worker.py", line 5\n'
                                  '  File "/home/ci/app/analysis/pipeline/judges.py", line 9, in judge\n'
                                  "OSError: [Errno 2] No such file: '/home/ci/app/.citeq/blob'\n"))
    view = operations.dead_letter(letter)
    assert view.last_line == "OSError: [Errno 2] No such file: 'blob'"
    assert 'File "dramatiq/worker.py"' in view.traceback and 'File "analysis/pipeline/judges.py"' in view.traceback
    assert "/home" not in view.traceback
    one_line = operations.dead_letter(letter.model_copy(update={"reason": "ValueError: bad"}))
    assert one_line.last_line == "ValueError: bad" and one_line.traceback is None


def test_me_says_what_an_analysis_costs(client, queue_broker, conn, monkeypatch):  # noqa: F811
    monkeypatch.setenv("CITEQ_JOB_COST", "2")
    open_account(conn, 1, credits=5)
    with TestClient(create_app(broker=queue_broker)) as c:
        me = c.get("/api/me", headers={"Authorization": f"Bearer {accounts.mint_token(queue_broker, 1)}"}).json()
    assert (me["credits"], me["analysis_cost"]) == (5, 2)


def test_static_files_and_large_json_are_gzipped_and_static_files_cached(client, ops, queue_broker, conn):  # noqa: F811
    page = client.get("/")
    assert page.headers["cache-control"] == "no-cache"
    script = next(part.split('"')[0] for part in page.text.split('src="')[1:] if "dashboard.js" in part)
    assert "?v=" in script

    r = client.get(script, headers={"Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip"
    assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert int(r.headers["content-length"]) < len(r.content) / 2  # httpx decoded it; the wire carried less
    assert client.get("/static/dashboard.js").headers["cache-control"] == "no-cache"  # unversioned: revalidate

    docs = client.get("/docs/assets/swagger-ui-bundle.js", headers={"Accept-Encoding": "gzip"})
    assert docs.headers["content-encoding"] == "gzip" and "max-age" in docs.headers["cache-control"]

    for user in range(1, 40):
        query(conn, "INSERT INTO accounts (user_id, credits) VALUES (%s, 1)", user)
    from actors.queue import stall_sweep
    for _ in range(40):
        stall_sweep.send()
    query(conn, "UPDATE citeq_messages SET state = 'dead', dead_reason = 'ValueError: x', finished_at = now()")
    raw = client.get("/api/ops/overview", headers={**ops, "Accept-Encoding": "gzip"})
    assert raw.headers["content-encoding"] == "gzip"
    small = client.get("/healthz", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers  # not worth compressing


def test_cli_pauses_and_resumes_a_queue(run, queue_broker, conn):  # noqa: F811
    status, out, _ = run("queues", "pause", "maintenance")
    assert status == 0 and "paused" in out
    assert query(conn, "SELECT queue_name, paused_by FROM citeq_queue_pauses") == [("maintenance", "cli")]
    status, listed, _ = run("queues", "--json")
    assert status == 0 and next(q for q in listed if q["queue_name"] == "maintenance")["paused"] is True
    status, table, _ = run("queues")
    assert status == 0 and next(line for line in table.splitlines() if line.startswith("maintenance")).split()[1] == "paused"
    assert run("queues", "resume", "maintenance", "--json")[1] == {"queue_name": "maintenance", "paused": False}
    assert query(conn, "SELECT count(*) FROM citeq_queue_pauses")[0][0] == 0
    status, _, err = run("queues", "pause", "nope")
    assert status == 1 and "unknown_queue" in err


def test_a_worker_shows_busy_with_its_current_message_then_idle(broker, worker, conn):
    import threading

    import dramatiq

    from tests.conftest import wait_for

    release = threading.Event()

    @dramatiq.actor(queue_name="slow")
    def slow():
        release.wait(30)

    worker.stop()  # a worker that consumes the queue declared above
    w = dramatiq.Worker(broker, worker_threads=1, worker_timeout=100)
    w.start()
    try:
        slow.send()

        def busy():
            found = operations.overview(broker).workers
            return found and found[0].busy and found[0].current
        wait_for(busy, message="worker busy")
        current = operations.overview(broker).workers[0].current
        assert [(m.actor_name, m.queue_name) for m in current] == [("slow", "slow")]
        release.set()
        wait_for(lambda: not operations.overview(broker).workers[0].busy, message="worker idle again")
        slow_queue = next(q for q in operations.overview(broker).queues if q.queue_name == "slow")
        assert (slow_queue.processed_last_hour, slow_queue.consumers) == (1, 1)
    finally:
        release.set()
        w.stop()


def test_the_ops_route_shows_a_workers_threads_busy_and_idle_and_its_current_message(broker, conn):
    """A real worker registration (the lease keeper's heartbeat) holding a real running message,
    read through /api/ops/overview with an operator token."""
    import threading

    import dramatiq

    from tests.conftest import wait_for

    release = threading.Event()

    @dramatiq.actor(queue_name="slow")
    def slow():
        release.wait(30)

    w = dramatiq.Worker(broker, worker_threads=3, worker_timeout=100)
    w.start()
    try:
        with TestClient(create_app(broker=broker)) as client:
            ops = {"Authorization": f"Bearer {accounts.mint_token(broker, None, operator=True)}"}
            message = slow.send()
            wait_for(lambda: query(conn, "SELECT state::text FROM citeq_messages")[0][0] == "running",
                     message="message claimed")
            broker._lease_keeper.renew()  # the heartbeat registers the process and its threads now
            [worker] = client.get("/api/ops/overview", headers=ops).json()["workers"]
            assert worker["worker_id"] == broker.worker_id and worker["pid"] > 0 and worker["hostname"]
            assert (worker["threads"], worker["busy_threads"], worker["idle_threads"], worker["waiting"]) == (3, 1, 2, 0)
            [current] = worker["current"]
            row = query(conn, "SELECT id, started_at FROM citeq_messages WHERE message_id = %s", message.message_id)[0]
            assert (current["actor_name"], current["queue_name"], current["id"]) == ("slow", "slow", row[0])
            assert current["started_at"] is not None and current["running_seconds"] >= 0
            [registered] = client.get("/api/ops/workers", headers=ops).json()
            assert registered["threads"] == 3

            release.set()
            wait_for(lambda: client.get("/api/ops/overview", headers=ops).json()["workers"][0]["busy_threads"] == 0,
                     message="idle again")
            assert client.get("/api/ops/overview").status_code == 401  # the ops routes' auth
    finally:
        release.set()
        w.stop()
