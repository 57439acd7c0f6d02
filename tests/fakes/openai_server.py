"""A fake OpenAI-compatible chat-completions and embeddings server on 127.0.0.1.

A real HTTP server (stdlib `http.server`, one thread per request) so the judge's
real `httpx` client, headers, status handling and JSON parsing are exercised.
Behaviour is switched by setting `mode` (both routes obey it); every request is recorded.
Embeddings are a hashed bag of words (`fake_embedding`): deterministic, and texts that
share words are near, which is all retrieval tests need of them.

    with FakeChatServer() as server:
        server.mode = "rate_limited"
        judge = OpenAIJudge(base_url=server.base_url, model="m")
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: normal answers | HTTP 500 | HTTP 429 with Retry-After | 200 with unparseable content
MODES = ("answer", "server_error", "rate_limited", "garbage")

#: Dimension of the fake embeddings.
EMBEDDING_DIM = 256
_WORD = re.compile(r"\w{3,}")


def fake_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A unit vector counting the text's words (3+ letters, first 6 letters) into hashed buckets."""
    vector = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        vector[int(hashlib.md5(word[:6].encode()).hexdigest(), 16) % dim] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def default_rule(body: dict[str, Any]) -> dict[str, Any]:
    """Answer "supported", citing passage 1, for any request."""
    return {"verdict": "supported", "confidence": 0.9, "evidence_index": 1, "rationale": "fake: passage 1 says so"}


class FakeChatServer:
    """Serves ``POST /v1/chat/completions`` and ``POST /v1/embeddings``; `base_url` ends in ``/v1``."""

    def __init__(self, rule: Callable[[dict[str, Any]], dict[str, Any] | str] = default_rule) -> None:
        self.mode = "answer"
        self.retry_after = "7"
        self.rule = rule
        #: answers served before `rule` is consulted, first in first out (dict or raw string)
        self.script: deque[dict[str, Any] | str] = deque()
        #: (path, headers, parsed JSON body) of every request, in arrival order
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # A short poll interval makes stop() quick; the default 0.5 s adds up over many tests.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def start(self) -> FakeChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _record(self, path: str, headers: dict[str, str], body: Any) -> None:
        with self._lock:
            self.requests.append((path, headers, body))

    def _next_answer(self, body: dict[str, Any]) -> dict[str, Any] | str:
        with self._lock:
            if self.script:
                return self.script.popleft()
        return self.rule(body)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (stdlib naming)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                server._record(self.path, dict(self.headers), body)
                route = self.path.rstrip("/")
                if route not in ("/v1/chat/completions", "/v1/embeddings"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                if server.mode == "server_error":
                    return self._send(500, {"error": {"message": "fake internal error"}})
                if server.mode == "rate_limited":
                    return self._send(429, {"error": {"message": "slow down"}}, {"Retry-After": server.retry_after})
                if route == "/v1/embeddings":
                    if server.mode == "garbage":
                        return self._send(200, {"object": "list", "data": "no vectors today"})
                    return self._send(200, _embeddings(body))
                if server.mode == "garbage":
                    return self._send(200, _completion(body, "I think it is probably fine?! {not json"))
                answer = server._next_answer(body or {})
                content = answer if isinstance(answer, str) else json.dumps(answer)
                return self._send(200, _completion(body, content))

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        return Handler


def _embeddings(request: Any) -> dict[str, Any]:
    inputs = request.get("input", []) if isinstance(request, dict) else []
    inputs = [inputs] if isinstance(inputs, str) else inputs
    return {
        "object": "list",
        # Last first: a client must order by "index", not by position.
        "data": [{"object": "embedding", "index": i, "embedding": fake_embedding(str(t))}
                 for i, t in reversed(list(enumerate(inputs)))],
        "model": request.get("model", "fake") if isinstance(request, dict) else "fake",
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }


def _completion(request: Any, content: str) -> dict[str, Any]:
    model = request.get("model", "fake") if isinstance(request, dict) else "fake"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }
