"""The HTTP client for any OpenAI-compatible provider, with `parse_retry_after` and `redact`.

Provider error text is clipped and redacted where it is raised, so no log line, failure reason or
dead letter shows a key.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Sequence

import httpx

from analysis.pipeline.providers.errors import (ProviderAuthFailed, ProviderModelNotFound,
    ProviderRateLimited, ProviderRejected, ProviderUnavailable)

def clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: How much of a provider's error body reaches a log line, an exception or a failure reason.
ERROR_BODY_LIMIT = 300
_SECRET_PATTERNS = (
    (re.compile(r"(?i)\bbearer\s+[^\s\"',;]+"), "Bearer [redacted]"),
    (re.compile(r"\b(?:sk|key|pk|rk|api)-[A-Za-z0-9_\-]{6,}"), "[redacted]"),
    (re.compile(r"(?i)\b(api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret|password)"
                r"(\"?\s*[:=]\s*\"?)[^\s\"'&,;}]+"), r"\1\2[redacted]"),
)
_MODEL_MISSING = re.compile(r"(?i)model.{0,80}(?:not\s+found|does\s+not\s+exist|unknown|not\s+exist|invalid)|"
                            r"(?:unknown|invalid|no\s+such)\s+model")


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def redact(text: str, secrets: Sequence[str] = (), *, limit: int = ERROR_BODY_LIMIT) -> str:
    """`text` with the configured secrets, bearer tokens, ``sk-…``/``key-…`` tokens and
    ``api_key=…`` values replaced by ``[redacted]``, then clipped to `limit` characters.
    Every provider text bound for a log, an exception or a failure reason passes here."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return clip(text, limit)


class OpenAICompatibleClient:
    """The HTTP side of an OpenAI-compatible provider: base URL, bearer key, timeout and
    pooled connections (shared by the judge and the embedder). Every error it raises is
    typed, and its text is clipped and redacted (`redact`)."""

    #: what the provider is called in error messages
    role = "provider"

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self._secrets = (api_key,) if api_key else ()
        self._client = httpx.Client(
            base_url=base_url.rstrip("/") + "/", headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _safe(self, text: str, limit: int = ERROR_BODY_LIMIT) -> str:
        return redact(text, self._secrets, limit=limit)

    def _post(self, path: str, body: dict) -> httpx.Response:
        """POST and check the status; raises a typed `ProviderError` with a redacted message."""
        try:
            response = self._client.post(path, json=body)
        except httpx.TransportError as exc:  # connect, read, timeouts, broken protocol
            raise ProviderUnavailable(self._safe(f"{self.role} unreachable: {exc!r}")) from None
        self._raise_for_status(response)
        return response

    def _raise_for_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        body = self._safe(response.text)
        if status == 429:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            raise ProviderRateLimited(f"{self.role} rate-limited us (429), retry after {retry_after}s", retry_after)
        if status in (401, 403):
            raise ProviderAuthFailed(f"{self.role} refused the API key: HTTP {status} {body}")
        if status == 404 or (status in (400, 422) and _MODEL_MISSING.search(response.text)):
            raise ProviderModelNotFound(f"{self.role} does not know model {self.model!r} (or the endpoint): "
                                        f"HTTP {status} {body}")
        if status >= 500 or status in (408, 409):
            raise ProviderUnavailable(f"{self.role} failed with HTTP {status} {body}")
        raise ProviderRejected(f"{self.role} rejected the request: HTTP {status} {body}")
