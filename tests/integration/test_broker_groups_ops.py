"""Operators see message groups: `citeq groups`, the ops API route and the metrics, over
held and in-flight messages of real sends."""

from __future__ import annotations

import uuid

from dramatiq.message import Message

from tests.conftest import query
from tests.integration.test_metrics_exposition import parse
from tests.integration.test_web import client, ops, settings  # noqa: F401 - fixtures
from web import metrics as exposition

QUEUE = "groups_ops"


def send(broker, key: str, n: int) -> None:
    broker.enqueue(Message(queue_name=QUEUE, actor_name="not_declared_here", args=(n,), kwargs={},
                           options={"group_key": key}, message_id=str(uuid.uuid4())))


def given_groups(broker, conn) -> None:
    """Key a: one in flight and two held; key b: one in flight; the oldest held is aged."""
    broker.declare_queue(QUEUE)
    for n in range(3):
        send(broker, "a", n)
    send(broker, "b", 0)
    query(conn, "UPDATE citeq_messages SET enqueued_at = now() - interval '90 seconds' "
                "WHERE group_key = 'a' AND state = 'held'")


def test_citeq_groups_counts_and_lists_one_key(run, queue_broker, conn):
    given_groups(queue_broker, conn)
    status, stats, _ = run("groups", "--json")
    assert status == 0
    (mine,) = [s for s in stats if s["queue_name"] == QUEUE]
    assert (mine["waiting_keys"], mine["held"], mine["in_flight"], mine["busy_keys"]) == (1, 2, 2, 2)
    assert mine["oldest_held_age_seconds"] >= 90

    status, messages, _ = run("groups", "--queue", QUEUE, "--key", "a", "--json")
    assert status == 0
    assert [m["state"] for m in messages] == ["queued", "held", "held"]
    assert [m["group_seq"] for m in messages] == sorted(m["group_seq"] for m in messages)
    assert "held" in run("groups")[1]
    assert run("groups", "--key", "a")[0] == 1  # a key needs its queue

    status, keys, _ = run("groups", "--keys", "--queue", QUEUE, "--json")
    assert status == 0
    assert [(k["group_key"], k["held"], k["in_flight"]) for k in keys] == [("a", 2, 1), ("b", 0, 1)]  # waiting first
    listing = run("groups", "--keys", "--queue", QUEUE)[1]
    assert "oldest held" in listing.splitlines()[0]
    assert listing.splitlines()[-1].split()[1:] == ["b", "0", "1", "-"]  # b waits for nothing
    assert "no keys" in run("groups", "--keys", "--queue", "nothing_here")[1]


def test_ops_route_and_metrics_show_groups(client, ops, queue_broker, conn):  # noqa: F811
    given_groups(queue_broker, conn)
    stats = client.get("/api/ops/groups", headers=ops).json()
    (mine,) = [s for s in stats if s["queue_name"] == QUEUE]
    assert (mine["waiting_keys"], mine["held"], mine["in_flight"]) == (1, 2, 2)
    listed = client.get(f"/api/ops/groups/{QUEUE}/messages", params={"key": "a"}, headers=ops).json()
    assert [m["state"] for m in listed] == ["queued", "held", "held"]
    assert client.get("/api/ops/groups").status_code in (401, 403)

    keys = client.get("/api/ops/groups/keys", params={"queue": QUEUE}, headers=ops).json()
    assert [(k["group_key"], k["held"], k["in_flight"]) for k in keys] == [("a", 2, 1), ("b", 0, 1)]  # waiting first
    assert keys[0]["oldest_held_age_seconds"] >= 90 and keys[1]["oldest_held_age_seconds"] is None
    assert client.get("/api/ops/groups/keys", params={"queue": "nothing_here"}, headers=ops).json() == []

    _, samples = parse(exposition.render(queue_broker))
    assert samples[("citeq_group_held_messages", (("queue", QUEUE),))] == 2
    assert samples[("citeq_group_waiting_keys", (("queue", QUEUE),))] == 1
    assert samples[("citeq_group_in_flight_messages", (("queue", QUEUE),))] == 2
    assert samples[("citeq_group_oldest_held_age_seconds", (("queue", QUEUE),))] >= 90


def test_citeq_groups_shows_the_analysis_queues_users(run, queue_broker, conn):
    from analysis.queue import userqueue
    from analysis.settings import QueueSettings
    from tests.integration.conftest import given_user

    for user in (1, 2):
        thesis, sources = given_user(conn, user)
        for _ in range(user + 1):
            userqueue.admit(user, thesis, sources, settings=QueueSettings())

    status, keys, _ = run("groups", "--keys", "--queue", "analysis", "--json")
    assert status == 0
    assert sorted((k["group_key"], k["held"], k["in_flight"]) for k in keys) == [("user:1", 1, 1), ("user:2", 2, 1)]
    status, messages, _ = run("groups", "--queue", "analysis", "--key", "user:2", "--json")
    assert [m["state"] for m in messages] == ["queued", "held", "held"]
