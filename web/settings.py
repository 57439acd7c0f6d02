"""Settings of the web process: read from the environment at the edge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from broker.settings import EnvSettings

#: Environment variable for each setting (``citeq web --help`` and README list these).
ENVIRONMENT = {
    "host": "CITEQ_WEB_HOST",
    "port": "PORT",
    "window_seconds": "CITEQ_RATE_WINDOW_SECONDS",
    "admit_limit": "CITEQ_RATE_ADMITS",
    "upload_limit": "CITEQ_RATE_UPLOADS",
    "max_upload_bytes": "CITEQ_MAX_UPLOAD_BYTES",
    "max_json_bytes": "CITEQ_MAX_JSON_BYTES",
    "header_timeout": "CITEQ_WEB_HEADER_TIMEOUT",
    "body_timeout": "CITEQ_WEB_BODY_TIMEOUT",
    "keepalive_timeout": "CITEQ_WEB_KEEPALIVE_TIMEOUT",
    "max_connections": "CITEQ_WEB_MAX_CONNECTIONS",
    "max_header_bytes": "CITEQ_WEB_MAX_HEADER_BYTES",
}


class WebSettings(EnvSettings):
    """How the HTTP API behaves. Every field has an environment variable."""

    environment: ClassVar[Mapping[str, str]] = ENVIRONMENT

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)
    #: Length of the sliding window of the per-user request limits.
    window_seconds: float = Field(60.0, gt=0)
    #: Analyses a user may admit per window. At least 10: a lecturer's batch of five
    #: back-to-back analyses must queue, never be refused by the limit.
    admit_limit: int = Field(30, ge=10)
    #: Upload requests a user may make per window (each may carry several files).
    upload_limit: int = Field(20, ge=5)
    #: Largest upload request body (all files together).
    max_upload_bytes: int = Field(50 * 1024 * 1024, ge=1024)
    #: Largest JSON request body.
    max_json_bytes: int = Field(64 * 1024, ge=1024)
    #: Seconds a connection has to deliver a request's headers (from connecting, or from
    #: its previous response); then it is closed.
    header_timeout: float = Field(10.0, gt=0)
    #: Seconds a request has to deliver its whole body after its headers; then 408.
    #: A 50 MiB upload needs about 0.9 MB/s: behind a buffering proxy that is the proxy's speed.
    body_timeout: float = Field(60.0, gt=0)
    #: Seconds an idle keep-alive connection is kept.
    keepalive_timeout: float = Field(5.0, gt=0)
    #: Connections (and requests in flight) at once; beyond it new requests get 503.
    max_connections: int = Field(200, ge=1)
    #: Largest request head (request line and headers) in bytes.
    max_header_bytes: int = Field(16 * 1024, ge=1024)

