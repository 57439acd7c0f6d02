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

#: How the server answers (both routes obey the HTTP errors; the answer modes are for chat):
MODES = (
    "answer",          # `script`, else `rule`: a verdict quoting passage 1 (default)
    "server_error",    # HTTP 500
    "rate_limited",    # HTTP 429 with Retry-After
    "garbage",         # 200, content that is not JSON
    "truncated",       # 200, half an answer, finish_reason "length"
    "refusal",         # 200, message.refusal set and no content
    "content_filter",  # 200, finish_reason "content_filter"
    "bad_quote",       # 200, a well-formed answer quoting words no passage holds
    "bad_page",        # 200, a well-formed answer citing page 999
    "unauthorized",    # HTTP 401, the body echoing the Authorization header (as some providers do)
    "forbidden",       # HTTP 403, the same
    "unknown_model",   # HTTP 404, "The model `...` does not exist"
    "echo_key",        # HTTP 500 whose body echoes the API key: a transient error that leaks
)

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


_PASSAGE = re.compile(r"Passage 1 \(page (\d+)\):\n(.+?)(?:\n\nPassage \d+ \(page|\Z)", re.S)


def first_passage(body: dict[str, Any]) -> tuple[int, str]:
    """(page, text) of passage 1 in a chat-completions request of the judge."""
    messages = body.get("messages") or [{}]
    match = _PASSAGE.search(str(messages[-1].get("content", "")))
    return (int(match.group(1)), match.group(2)) if match else (1, "")


def default_rule(body: dict[str, Any]) -> dict[str, Any]:
    """Answer "supported", quoting the first sentence of passage 1 with its page."""
    page, text = first_passage(body)
    quote = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return {"verdict": "supported", "evidence_quote": quote, "evidence_page": page,
            "rationale": "fake: passage 1 says so", "confidence": 0.9}


class FakeChatServer:
    """Serves ``POST /v1/chat/completions`` and ``POST /v1/embeddings``; `base_url` ends in ``/v1``."""

    def __init__(self, rule: Callable[[dict[str, Any]], dict[str, Any] | str] = default_rule, *,
                 host: str = "127.0.0.1") -> None:
        self.mode = "answer"
        self.retry_after = "7"
        #: usage.total_tokens reported per chat answer (prompt and completion split 4:1)
        self.tokens_per_answer = 120
        self.rule = rule
        #: answers served before `rule` is consulted, first in first out (dict or raw string)
        self.script: deque[dict[str, Any] | str] = deque()
        #: (path, headers, parsed JSON body) of every request, in arrival order
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, 0), self._handler_class())
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

    def _error(self, authorization: str) -> tuple | None:
        """(status, body, headers) of an HTTP error mode, else None."""
        key = authorization.removeprefix("Bearer ")
        if self.mode == "server_error":
            return 500, {"error": {"message": "fake internal error"}}
        if self.mode == "rate_limited":
            return 429, {"error": {"message": "slow down"}}, {"Retry-After": self.retry_after}
        if self.mode in ("unauthorized", "forbidden"):
            status = 401 if self.mode == "unauthorized" else 403
            return status, {"error": {"message": f"Incorrect API key provided: {key}. Header was {authorization}",
                                      "type": "invalid_request_error", "code": "invalid_api_key"}}
        if self.mode == "unknown_model":
            return 404, {"error": {"message": "The model `no-such-model` does not exist or you do not have "
                                              "access to it.", "code": "model_not_found"}}
        if self.mode == "echo_key":
            return 500, {"error": {"message": f"upstream failed for api_key={key} ({authorization})"}}
        return None

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat-completions answer of the current mode."""
        page, _ = first_passage(body)
        if self.mode == "garbage":
            return _completion(body, "I think it is probably fine?! {not json", tokens=self.tokens_per_answer)
        if self.mode == "truncated":
            return _completion(body, '{"verdict": "supported", "evidence_quote": "Green ro',
                               finish_reason="length", tokens=self.tokens_per_answer)
        if self.mode == "refusal":
            return _completion(body, None, refusal="I can't help with that.", tokens=self.tokens_per_answer)
        if self.mode == "content_filter":
            return _completion(body, "", finish_reason="content_filter", tokens=self.tokens_per_answer)
        if self.mode == "bad_quote":
            answer = {"verdict": "supported", "evidence_quote": "Unicorns cooled every street in Berlin.",
                      "evidence_page": page, "rationale": "made up", "confidence": 0.95}
            return _completion(body, json.dumps(answer), tokens=self.tokens_per_answer)
        if self.mode == "bad_page":
            answer = dict(default_rule(body), evidence_page=999)
            return _completion(body, json.dumps(answer), tokens=self.tokens_per_answer)
        answer = self._next_answer(body)
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return _completion(body, content, tokens=self.tokens_per_answer)

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
                error = server._error(self.headers.get("Authorization") or "")
                if error is not None:
                    return self._send(*error)
                if route == "/v1/embeddings":
                    if server.mode == "garbage":
                        return self._send(200, {"object": "list", "data": "no vectors today"})
                    return self._send(200, _embeddings(body))
                return self._send(200, server._chat(body or {}))

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


def _completion(request: Any, content: str | None, *, finish_reason: str = "stop", refusal: str | None = None,
                tokens: int = 0) -> dict[str, Any]:
    model = request.get("model", "fake") if isinstance(request, dict) else "fake"
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    completion = tokens // 5
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": tokens - completion, "completion_tokens": completion, "total_tokens": tokens},
    }
