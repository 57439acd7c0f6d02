"""Tokens expire and can be revoked; the CLI names users unambiguously."""

from __future__ import annotations


import pytest
from fastapi.testclient import TestClient

from analysis.surface import accounts
from analysis.errors import InvalidInput
from tests.conftest import query
from web.app import create_app


@pytest.fixture
def client(queue_broker):
    with TestClient(create_app(broker=queue_broker)) as c:
        yield c


def me(client, token: str) -> int:
    return client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).status_code


def test_a_revoked_token_is_refused_at_the_next_request(run, client, queue_broker):
    run("users", "create", "alice")
    status, minted, _ = run("users", "token", "alice", "--label", "laptop", "--json")
    assert status == 0 and minted["token_id"] >= 1 and minted["expires_at"]
    assert me(client, minted["token"]) == 200

    status, listed, _ = run("users", "tokens", "alice", "--json")
    assert status == 0 and [(t["id"], t["label"], t["revoked_at"]) for t in listed] == [
        (minted["token_id"], "laptop", None)]
    assert listed[0]["last_used_at"] is not None  # the request above used it

    status, revoked, _ = run("users", "revoke", str(minted["token_id"]), "--json")
    assert status == 0 and revoked["revoked_at"]
    assert me(client, minted["token"]) == 401
    assert run("users", "tokens", "alice", "--json")[1][0]["revoked_at"] == revoked["revoked_at"]
    status, _, err = run("users", "revoke", "999999")
    assert status == 1 and "unknown_token" in err
    status, text, _ = run("users", "tokens", "alice")
    assert "laptop" in text and "revoked" in text


def test_an_expired_token_is_refused(client, queue_broker, conn):
    user_id = accounts.create(queue_broker, "bob")
    token = accounts.mint_token(queue_broker, user_id, ttl_days=1)
    assert me(client, token) == 200
    query(conn, "UPDATE api_tokens SET expires_at = now() - interval '1 second'")
    assert me(client, token) == 401


def test_the_ttl_comes_from_the_environment(run, queue_broker, monkeypatch, conn):
    monkeypatch.setenv("CITEQ_TOKEN_TTL_DAYS", "2")  # read by the command, the process's edge
    accounts.create(queue_broker, "carol")
    assert run("users", "token", "carol", "--json")[0] == 0
    days = query(conn, "SELECT extract(epoch FROM expires_at - created_at) / 86400 FROM api_tokens")[0][0]
    assert 1.99 < float(days) < 2.01


def test_operator_tokens_are_listed_and_revoked_too(run, client, queue_broker):
    status, op, _ = run("users", "token", "--operator", "--json")
    assert client.get("/api/ops/queues", headers={"Authorization": f"Bearer {op['token']}"}).status_code == 200
    assert [t["id"] for t in run("users", "tokens", "--operator", "--json")[1]] == [op["token_id"]]
    run("users", "revoke", str(op["token_id"]))
    assert client.get("/api/ops/queues", headers={"Authorization": f"Bearer {op['token']}"}).status_code == 401


# -- user lookup ---------------------------------------------------------------------------------

def test_all_digit_names_are_refused(run, queue_broker):
    for name in ["5", "007", "\u0665"]:  # ASCII and Arabic-Indic digits
        status, _, err = run("users", "create", name)
        assert status == 1 and "invalid_request" in err, err
    with pytest.raises(InvalidInput):
        accounts.create(queue_broker, "42")


def test_a_digit_argument_is_an_id_never_a_name(run, queue_broker, conn):
    first = accounts.create(queue_broker, "alice")
    second = accounts.create(queue_broker, "bob")
    # A user named like the other's id, written before names were checked (an old database).
    query(conn, "UPDATE accounts SET name = %s WHERE user_id = %s", str(first), second)
    status, shown, _ = run("users", "show", str(first), "--json")
    assert status == 0 and shown["user_id"] == first
    status, minted, _ = run("users", "token", str(first), "--json")
    assert minted["user_id"] == first
    status, _, err = run("users", "show", "99999999999999999999")
    assert status == 1 and "unknown_user" in err
    assert run("users", "show", "bob", "--json")[0] == 1  # bob was renamed


def test_tokens_over_http_list_and_revoke_only_your_own(client, queue_broker):
    alice = accounts.create(queue_broker, "alice")
    bob = accounts.create(queue_broker, "bob")
    a1, a2 = accounts.mint(queue_broker, alice, label="one"), accounts.mint(queue_broker, alice, label="two")
    b1 = accounts.mint(queue_broker, bob)
    auth = {"Authorization": f"Bearer {a1[0]}"}
    listed = client.get("/api/tokens", headers=auth).json()
    assert [t["label"] for t in listed] == ["two", "one"] and all("token" not in t for t in listed)
    r = client.post(f"/api/tokens/{b1[1].id}/revoke", headers=auth)  # bob's: not found for alice
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_token"
    assert me(client, b1[0]) == 200
    r = client.post(f"/api/tokens/{a2[1].id}/revoke", headers=auth)
    assert r.status_code == 200 and r.json()["revoked_at"]
    assert me(client, a2[0]) == 401 and me(client, a1[0]) == 200
    ops = {"Authorization": f"Bearer {accounts.mint_token(queue_broker, None, operator=True)}"}
    assert client.post(f"/api/ops/tokens/{b1[1].id}/revoke", headers=ops).status_code == 200
    assert me(client, b1[0]) == 401
    assert client.post(f"/api/ops/tokens/{b1[1].id}/revoke", headers=auth).status_code == 403
