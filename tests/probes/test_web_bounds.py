"""Probes of the web process's bounds (issue 29) against a real `citeq web` on loopback:
idle connections, the caps and their 503s, the server's own refusals, the head cap, JSON
bombs, and clients that ask for a 16 MB report and never read it. Every socket count and
wait is bounded; waits poll a condition with a deadline."""

from __future__ import annotations

import json
import select
import socket
import time

import httpx
import psutil
import pytest

from analysis.surface import accounts
from tests.conftest import query, wait_for
from tests.e2e.test_web_limits import citeq_web, closed_by_server, connect, response_of
from tests.integration.conftest import add_documents, queue_broker  # noqa: F401

pytestmark = pytest.mark.e2e

SECURITY = ("content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy")


def head_and_body(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


def assert_typed(status: int, headers: dict, body: bytes, want_status: int, code: str | None = None) -> dict:
    """An answer in the API's error shape with the security headers."""
    assert status == want_status, body
    assert headers["content-type"].startswith("application/json")
    for name in SECURITY:
        assert name in headers, name
    error = json.loads(body)["error"]
    assert error["message"] and (code is None or error["code"] == code)
    return error


def raw_answer(addr, request: bytes) -> tuple[int, dict[str, str], bytes]:
    s = connect(addr, request)
    try:
        return head_and_body(response_of(s, deadline=time.monotonic() + 10))
    finally:
        s.close()


def get_all(url: str, n: int) -> int:
    """How many of ``n`` GETs of ``url`` answered 200."""
    answered = 0
    with httpx.Client(timeout=5) as client:
        for _ in range(n):
            try:
                answered += client.get(url, headers={"Connection": "close"}).status_code == 200
            except httpx.TransportError:
                pass
    return answered


# -- connections --------------------------------------------------------------------------------


def test_200_idle_connections_leave_normal_requests_answered_and_are_closed_soon(db, tmp_path):
    with citeq_web(db, tmp_path) as addr:  # the shipped limits: 200 connections, 3 s idle
        idle = [socket.create_connection(addr, timeout=5) for _ in range(200)]
        try:
            answered = get_all(f"http://{addr[0]}:{addr[1]}/healthz", 40)
            assert answered >= 38, f"{answered} of 40 answered"  # the target: >= 95 %
            deadline = time.monotonic() + 20
            open_ = list(idle)
            while open_ and time.monotonic() < deadline:
                ready, _, _ = select.select(open_, [], [], 0.5)
                open_ = [s for s in open_ if not (s in ready and closed_by_server(s))]
            assert not open_, f"{len(open_)} idle connections still open"
        finally:
            for s in idle:
                s.close()


def test_at_the_connection_cap_with_none_idle_a_503_carries_the_error_shape_and_headers(db, tmp_path):
    with citeq_web(db, tmp_path, CITEQ_WEB_MAX_CONNECTIONS="3") as addr:
        # three connections that are not idle (a request has begun) fill the cap
        started = [connect(addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n") for _ in range(3)]
        try:
            status, headers, body = busy_answer(addr, "connections")
            assert_typed(status, headers, body, 503, "server_busy")
            assert headers["retry-after"] == "1"
        finally:
            for s in started:
                s.close()
        wait_for(lambda: raw_answer(addr, HEALTHZ)[0] == 200, timeout=10, interval=0.1,
                 message="served again once the connections left")


def test_at_the_request_cap_a_503_carries_the_error_shape_and_headers(db, tmp_path, queue_broker):  # noqa: F811
    token = accounts.mint_token(queue_broker, accounts.create(queue_broker, "alice"))
    with citeq_web(db, tmp_path, CITEQ_WEB_MAX_REQUESTS="1") as addr:
        # one request in progress: its headers are in, its body is not
        slow = connect(addr, f"POST /api/analyses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                             f"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{".encode())
        try:
            status, headers, body = busy_answer(addr, "requests in progress")
            assert_typed(status, headers, body, 503, "server_busy")
            assert headers["retry-after"] == "1"
        finally:
            slow.close()
        wait_for(lambda: raw_answer(addr, HEALTHZ)[0] == 200, timeout=10, interval=0.1,
                 message="served again once the slow request left")


HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


def busy_answer(addr, cap: str) -> tuple[int, dict[str, str], bytes]:
    """The first answer to a GET that names ``cap`` as the reason it was refused (10 s at most)."""
    answers = []
    # (the server reads the sockets in its own order: asked until it has read them)
    wait_for(lambda: answers.append(raw_answer(addr, HEALTHZ))
             or cap.encode() in answers[-1][2], timeout=10, interval=0.05, message=f"a 503 for {cap}")
    return answers[-1]


# -- what the server refuses itself ---------------------------------------------------------


@pytest.mark.parametrize("request_bytes", [
    b"POST /api/analyses HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\n",
    b"POST /api/analyses HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n",
    b"GET /heal\x00thz HTTP/1.1\r\nHost: x\r\n\r\n",
    # a smuggling attempt: the chunked body ends at once, what follows would be a second request
    b"POST /api/analyses HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"0\r\n\r\nGET /api/ops/queues HTTP/1.1\r\nHost: x\r\n\r\n",
], ids=["content-length-not-a-number", "content-length-twice", "nul-in-header", "nul-in-path",
        "content-length-and-transfer-encoding"])
def test_requests_the_server_refuses_get_the_error_shape_and_headers(db, tmp_path, request_bytes):
    with citeq_web(db, tmp_path) as addr:
        status, headers, body = raw_answer(addr, request_bytes)
        assert_typed(status, headers, body, 400, "bad_request")
        assert headers["connection"] == "close"  # nothing after it on this connection is read


@pytest.mark.parametrize("size", [20 * 1024, 120 * 1024])
def test_a_request_head_over_16_kb_is_refused_typed(db, tmp_path, size):
    with citeq_web(db, tmp_path) as addr:
        status, headers, body = raw_answer(
            addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size + b"\r\n\r\n")
        assert status in (400, 431)
        assert_typed(status, headers, body, status)
        ok, _, _ = raw_answer(addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Fits: " + b"a" * 8000 + b"\r\n\r\n")
        assert ok == 200


@pytest.mark.parametrize("body, code", [
    (b"[" * 1500 + b"]" * 1500, "json_too_deep"),
    (b'{"thesis_id": 1, "source_ids": [' + b"[" * 40 + b"]" * 40 + b"]}", "json_too_deep"),
    (b'{"thesis_id": ' + b"9" * 5000 + b', "source_ids": [1]}', "json_number_too_long"),
], ids=["1500-arrays", "nested-in-a-field", "5000-digits"])
def test_json_bombs_get_a_typed_400(db, tmp_path, queue_broker, body, code):  # noqa: F811
    token = accounts.mint_token(queue_broker, accounts.create(queue_broker, "alice"))
    with citeq_web(db, tmp_path) as addr:
        answer = httpx.post(f"http://{addr[0]}:{addr[1]}/api/analyses", content=body, timeout=10,
                            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        assert_typed(answer.status_code, dict(answer.headers), answer.content, 400, code)


# -- slow readers -----------------------------------------------------------------------------


def given_a_16_mb_report(conn, user_id: int) -> int:
    """A job of the (existing) user with 11,000 citations of about 1.5 KB each (a 16 MB HTML
    report): its id."""
    thesis, sources = add_documents(conn, user_id, sources=1)
    job = query(conn, "INSERT INTO analysis_jobs (user_id, thesis_id, status, cost, message_id) "
                      "VALUES (%s, %s, 'pending', 1, 'probe') "
                      "RETURNING id", user_id, thesis)[0][0]
    query(conn, """
        INSERT INTO job_citations (job_id, user_id, ordinal, claim, sentence, marker, page, source_document_id,
                                   verdict, confidence, evidence, evidence_page, rationale, judged_at)
        SELECT %s, %s, i, repeat('claim text ', 30) || i, 'sentence', '(Author, 2020)', 1, %s,
               'uncertain', 0.5, repeat('evidence ', 50), 2, repeat('rationale ', 20), now()
        FROM generate_series(0, 10999) AS i""", job, user_id, sources[0])
    return job


def rss(pid: int) -> int:
    return psutil.Process(pid).memory_info().rss


def test_20_clients_that_never_read_a_16_mb_report_cost_bounded_memory_and_are_cut(
        db, tmp_path, conn, queue_broker):  # noqa: F811
    user = accounts.create(queue_broker, "reader")
    job = given_a_16_mb_report(conn, user)
    token = accounts.mint_token(queue_broker, user)
    with citeq_web(db, tmp_path, CITEQ_WEB_WRITE_TIMEOUT="4") as addr:
        url = f"http://{addr[0]}:{addr[1]}"
        size = len(httpx.get(f"{url}/api/analyses/{job}/report", timeout=60,
                             headers={"Authorization": f"Bearer {token}"}).content)
        assert size > 15_000_000
        before = rss(addr.pid)
        request = (f"GET /api/analyses/{job}/report HTTP/1.1\r\nHost: x\r\n"
                   f"Authorization: Bearer {token}\r\n\r\n").encode()
        clients = []
        for _ in range(20):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # and never read
            s.connect(addr)
            s.sendall(request)
            clients.append(s)
        try:
            peak = before
            deadline = time.monotonic() + 40
            healthy = 0
            while time.monotonic() < deadline:
                peak = max(peak, rss(addr.pid))
                healthy += httpx.get(f"{url}/healthz", timeout=5).status_code == 200
                if all(hung_up(s) for s in clients):
                    break
            assert all(hung_up(s) for s in clients), "non-reading clients still connected"
            assert healthy >= 1
            assert peak - before <= 200 * 2**20, f"web RSS grew {(peak - before) / 2**20:.0f} MB"
        finally:
            for s in clients:
                s.close()


def hung_up(s: socket.socket) -> bool:
    """Whether the server reset or closed the connection, seen without reading from it."""
    poller = select.poll()
    poller.register(s, select.POLLRDHUP | select.POLLHUP | select.POLLERR)
    return any(events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))
