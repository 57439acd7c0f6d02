"""The `citeq` command, run in-process against the real test database."""

from __future__ import annotations

import json
import shutil

import pytest

from analysis.surface import accounts
from citeq import cli
from tests.conftest import ROOT, query
from tests.integration.conftest import add_documents


@pytest.fixture
def alice(run, conn):
    """A user 'alice' with 3 credits and a parsed thesis and two sources: (user id, thesis, sources)."""
    status, out, _ = run("users", "create", "alice", "--credits", "3", "--json")
    assert status == 0
    thesis, sources = add_documents(conn, out["user_id"])
    return out["user_id"], thesis, sources


def test_migrate_says_the_schema_is_current(run):
    status, out, _ = run("migrate", "--json")
    assert (status, out) == (0, {"applied": []})


def test_users_create_show_and_token(run, queue_broker):
    status, out, _ = run("users", "create", "bob", "--credits", "7", "--email", "bob@example.org", "--json")
    assert status == 0 and out["name"] == "bob" and out["credits"] == 7

    status, shown, _ = run("users", "show", "bob", "--json")
    assert status == 0 and shown["user_id"] == out["user_id"] and shown["jobs"] == {}
    assert run("users", "show", str(out["user_id"]), "--json")[1]["name"] == "bob"

    status, token, _ = run("users", "token", "bob", "--json")
    assert status == 0
    holder = accounts.authenticate(queue_broker, token["token"])
    assert (holder.user_id, holder.operator) == (out["user_id"], False)

    status, op, _ = run("users", "token", "--operator", "--json")
    assert status == 0 and accounts.authenticate(queue_broker, op["token"]).operator


def test_users_refusals_exit_1_with_the_code(run):
    run("users", "create", "carol")
    status, _, err = run("users", "create", "carol")
    assert status == 1 and "name_taken" in err
    status, _, err = run("users", "show", "nobody")
    assert status == 1 and "unknown_user" in err
    status, _, err = run("users", "token")
    assert status == 1 and "--operator" in err


def test_analyze_pending_then_queued_with_position(run, alice):
    user, thesis, sources = alice
    src = [a for s in sources for a in ("--source", str(s))]
    status, first, _ = run("analyze", "alice", "--thesis", str(thesis), *src, "--json")
    assert status == 0 and first["status"] == "pending" and first["position"] is None
    status, second, _ = run("analyze", "alice", "--thesis", str(thesis), *src, "--idempotency-key", "k1", "--json")
    assert status == 0 and (second["status"], second["position"], second["created"]) == ("queued", 1, True)
    again = run("analyze", "alice", "--thesis", str(thesis), *src, "--idempotency-key", "k1", "--json")[1]
    assert (again["id"], again["created"]) == (second["id"], False)

    status, text, _ = run("analyze", "alice", "--thesis", str(thesis), *src)
    assert status == 0 and "position 2" in text


def test_analyze_refused_exits_1_with_the_typed_error(run, alice, conn):
    user, thesis, sources = alice
    src = [a for s in sources for a in ("--source", str(s))]
    query(conn, "UPDATE accounts SET credits = 0 WHERE user_id = %s", user)
    status, out, err = run("analyze", "alice", "--thesis", str(thesis), *src, "--json")
    assert status == 1
    assert out["error"]["code"] == "insufficient_credits" and "insufficient_credits" in err
    assert query(conn, "SELECT count(*) FROM analysis_jobs")[0][0] == 0

    query(conn, "UPDATE accounts SET credits = 3 WHERE user_id = %s", user)
    status, _, err = run("analyze", "alice", "--thesis", "999999", *src)
    assert status == 1 and "unknown_document" in err


def test_jobs_job_and_cancel(run, alice):
    user, thesis, sources = alice
    src = [a for s in sources for a in ("--source", str(s))]
    first = run("analyze", "alice", "--thesis", str(thesis), *src, "--json")[1]
    second = run("analyze", "alice", "--thesis", str(thesis), *src, "--json")[1]

    status, jobs, _ = run("jobs", "alice", "--json")
    assert status == 0 and [(j["id"], j["status"], j["position"]) for j in jobs] == [
        (second["id"], "queued", 1), (first["id"], "pending", None)]
    assert run("jobs", "alice")[1].count("\n") >= 3

    status, job, _ = run("job", str(first["id"]), "--json")
    assert status == 0
    for field in ["id", "user_id", "status", "position", "delta_of", "created_at", "started_at", "finished_at",
                  "error", "verdicts"]:
        assert field in job
    assert job["created_at"].endswith("Z")
    assert run("job", "424242")[0] == 1

    status, canceled, _ = run("cancel", str(second["id"]), "--json")
    assert status == 0 and canceled["status"] == "canceled"
    status, _, err = run("cancel", str(second["id"]))
    assert status == 1 and "not_cancelable" in err
    assert run("cancel", "424242")[0] == 1


def test_queues_workers_and_dead_letters(run, queue_broker, conn):
    from actors.queue import stall_sweep

    stall_sweep.send()
    stall_sweep.send()
    query(conn, "UPDATE citeq_messages SET state = 'dead', dead_reason = 'boom', finished_at = now()")

    status, queues, _ = run("queues", "--json")
    assert status == 0 and {q["queue_name"]: q["dead"] for q in queues}["maintenance"] == 2
    status, workers, _ = run("workers", "--json")
    assert status == 0 and isinstance(workers, list)

    status, letters, _ = run("dead", "list", "--json")
    assert status == 0 and len(letters) == 2 and letters[0]["reason"] == "boom"
    assert run("dead", "retry")[0] == 1  # neither ids nor --all
    assert run("dead", "retry", "--id", str(letters[0]["id"]), "--json")[1] == {"retried": 1}
    assert run("dead", "purge", "--all", "--json")[1] == {"purged": 1}
    assert run("dead", "list")[1].strip() == "no dead letters"


def test_upload_without_files_is_a_usage_error(run):
    with pytest.raises(SystemExit) as exc:
        cli.main(["upload", "alice"])
    assert exc.value.code == 2


@pytest.mark.parametrize("command", [
    ["migrate"], ["db", "url"], ["users", "create"], ["upload"], ["analyze"], ["jobs"], ["job"], ["cancel"],
    ["queues"], ["workers"], ["dead"], ["demo"], ["web"]])
def test_every_command_has_help_naming_the_environment(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([*command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--json" in out or command[0] == "users"
    if command[0] != "users":
        assert "DATABASE_URL" in out


def test_db_start_url_stop_on_a_private_embedded_server(monkeypatch, capsys):
    home = ROOT / ".citeq" / "cli-test"
    monkeypatch.setenv("CITEQ_HOME", str(home))
    shutil.rmtree(home, ignore_errors=True)
    try:
        assert cli.main(["db", "url"]) == 1  # not running yet
        assert cli.main(["db", "start", "--json"]) == 0
        started = json.loads(capsys.readouterr().out)
        assert started["running"] and started["url"].endswith(f"/citeq?host={started['url'].split('host=')[1]}")
        assert cli.main(["db", "url"]) == 0
        assert capsys.readouterr().out.strip() == started["url"]
        assert cli.main(["db", "stop"]) == 0
    finally:
        from citeq.devdb import EmbeddedPostgres

        EmbeddedPostgres.for_name("main").stop()
        shutil.rmtree(home, ignore_errors=True)


def test_upload_waits_for_parsing_and_shows_each_item(run, alice, queue_worker, tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    status, out, _ = run("upload", "alice", str(ROOT / "sample_data" / "thesis_urban_heat.pdf"),
                         str(ROOT / "sample_data" / "nakamura_heat_notes.txt"), str(bad), "--wait", "--json")
    assert status == 0 and out["status"] == "partial"
    items = {i["filename"]: i for i in out["items"]}
    assert items["thesis_urban_heat.pdf"]["kind"] == "thesis" and items["thesis_urban_heat.pdf"]["document_id"]
    assert items["nakamura_heat_notes.txt"]["status"] == "parsed"
    assert items["broken.pdf"]["status"] == "failed" and items["broken.pdf"]["error"]["code"]

    status, out, _ = run("upload", "alice", str(bad), "--json")
    assert status == 0 and out["status"] == "queued" and out["items"] is None
    status, _, err = run("upload", "alice", str(tmp_path / "missing.pdf"))
    assert status == 1 and "unreadable_file" in err
