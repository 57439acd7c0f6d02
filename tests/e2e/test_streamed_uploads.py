"""Uploads against a real `citeq web`: caps decided from the headers or as the parts stream in,
before the rest of the body is sent, and a large file never held whole in the web process."""

from __future__ import annotations

import os
import threading
import time

import httpx
import psutil
import pytest

from analysis.surface import accounts
from tests.conftest import query
from tests.e2e.test_web_limits import citeq_web, connect, response_of
from tests.integration.conftest import queue_broker, wait_for  # noqa: F401

pytestmark = pytest.mark.e2e

BOUNDARY = b"citeqboundary"
MB = 1024 * 1024


def multipart_head(filename: bytes = b"big.txt") -> bytes:
    return (b"--" + BOUNDARY + b"\r\nContent-Disposition: form-data; name=\"files\"; filename=\"" + filename
            + b"\"\r\nContent-Type: text/plain\r\n\r\n")


def multipart_tail() -> bytes:
    return b"\r\n--" + BOUNDARY + b"--\r\n"


def upload_head(token: str, length: int) -> bytes:
    return (f"POST /api/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY.decode()}\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


@pytest.fixture
def alice(queue_broker):
    return accounts.mint_token(queue_broker, accounts.create(queue_broker, "alice"))


def test_a_user_without_a_free_parse_slot_is_refused_from_the_headers(db, tmp_path, alice, conn):
    with citeq_web(db, tmp_path, CITEQ_MAX_ACTIVE_PARSE_JOBS="1") as addr:
        files = {"files": ("a.txt", b"some text", "text/plain")}
        first = httpx.post(f"http://{addr[0]}:{addr[1]}/api/uploads", files=files,
                           headers={"Authorization": f"Bearer {alice}"}, timeout=10)
        assert first.status_code == 202, first.text  # no worker: the parse job stays queued
        # 40 MB announced, not one byte of body sent: the answer comes anyway.
        s = connect(addr, upload_head(alice, 40 * MB))
        try:
            answer = response_of(s, deadline=time.monotonic() + 15)
        finally:
            s.close()
    assert answer.startswith(b"HTTP/1.1 409") and b"parse_jobs_limit" in answer, answer[:300]
    assert query(conn, "SELECT count(*) FROM parse_jobs")[0][0] == 1


def test_an_upload_over_the_staged_bytes_room_is_refused_from_the_headers(db, tmp_path, alice):
    with citeq_web(db, tmp_path, CITEQ_MAX_STAGED_BYTES=str(5 * MB)) as addr:
        s = connect(addr, upload_head(alice, 20 * MB))
        try:
            answer = response_of(s, deadline=time.monotonic() + 15)
        finally:
            s.close()
    assert answer.startswith(b"HTTP/1.1 413") and b"staged_bytes_limit" in answer, answer[:300]


def test_a_file_over_the_cap_is_refused_while_it_streams(db, tmp_path, alice, conn):
    with citeq_web(db, tmp_path, CITEQ_MAX_FILE_BYTES=str(1 * MB)) as addr:
        s = connect(addr, upload_head(alice, 30 * MB) + multipart_head())
        sent, answer = 0, b""
        try:
            chunk = b"x" * 65536
            deadline = time.monotonic() + 20
            while not answer and time.monotonic() < deadline and sent < 30 * MB - 1000:
                try:
                    sent += s.send(chunk)
                except BlockingIOError:
                    pass
                except (BrokenPipeError, ConnectionResetError):
                    break
                answer = response_of(s, deadline=time.monotonic() + 0.05)
            answer += response_of(s, deadline=time.monotonic() + 5)
        finally:
            s.close()
    assert b"413" in answer.split(b"\r\n")[0] and b"file_size_limit" in answer, answer[:300]
    assert sent < 10 * MB, f"the server read {sent} bytes before refusing a 1 MB cap"
    assert query(conn, "SELECT count(*) FROM parse_jobs")[0][0] == 0


def test_a_20_mb_upload_does_not_grow_the_web_process_by_twice_its_size(db, tmp_path, alice, conn):
    size = 20 * MB
    with citeq_web(db, tmp_path, CITEQ_MAX_FILE_BYTES=str(60 * MB), CITEQ_MAX_UPLOAD_BYTES=str(60 * MB)) as addr:
        web = psutil.Process(addr.pid)
        peak = [web.memory_info().rss]
        before = peak[0]
        done = threading.Event()

        def sample():
            while not done.is_set():
                try:
                    peak[0] = max(peak[0], web.memory_info().rss)
                except psutil.Error:
                    return
                done.wait(0.01)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            r = httpx.post(f"http://{addr[0]}:{addr[1]}/api/uploads", headers={"Authorization": f"Bearer {alice}"},
                           files={"files": ("big.txt", os.urandom(size), "text/plain")}, timeout=120)
        finally:
            done.set()
            sampler.join()
        assert r.status_code == 202, r.text
    growth = peak[0] - before
    assert growth < 2 * size, f"web RSS grew by {growth / MB:.0f} MB for a {size / MB:.0f} MB upload"
    assert query(conn, "SELECT octet_length(file_bytes), size_bytes FROM parse_items") == [(size, size)]
    assert query(conn, "SELECT count(*) FROM pg_largeobject_metadata")[0][0] == 0


def test_uploads_being_received_hold_their_parse_slots(db, tmp_path, alice, conn):
    """Three uploads whose bodies are still arriving take the three slots: a fourth is refused
    from its headers, before either sends its files (not after all four were read)."""
    with citeq_web(db, tmp_path, CITEQ_MAX_ACTIVE_PARSE_JOBS="3") as addr:
        receiving = [connect(addr, upload_head(alice, 10 * MB) + multipart_head()) for _ in range(3)]
        try:
            wait_for(lambda: query(conn, "SELECT count(*) FROM upload_reservations")[0][0] == 3, timeout=15,
                     message="three reservations")
            fourth = connect(addr, upload_head(alice, 10 * MB))
            answer = response_of(fourth, deadline=time.monotonic() + 15)
            fourth.close()
            assert answer.startswith(b"HTTP/1.1 409") and b"parse_jobs_limit" in answer, answer[:300]
        finally:
            for s in receiving:
                s.close()
        # Abandoned bodies give their reservations back.
        wait_for(lambda: query(conn, "SELECT count(*) FROM upload_reservations")[0][0] == 0, timeout=15,
                 message="reservations released")
