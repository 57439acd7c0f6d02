"""Settings of the web process: read from the environment at the edge."""

from __future__ import annotations

from broker.settings import EnvSettings, env_field


class WebSettings(EnvSettings):
    """How the HTTP API behaves. Every field has an environment variable."""

    host: str = env_field("127.0.0.1", "CITEQ_WEB_HOST", "address the web process listens on")
    port: int = env_field(8000, "PORT", "port the web process listens on", ge=0, le=65535)
    window_seconds: float = env_field(
        60.0, "CITEQ_RATE_WINDOW_SECONDS", "length of the sliding window of the per-user request limits", gt=0)
    #: At least 10: a lecturer's batch of five back-to-back analyses must queue, never be
    #: refused by the limit.
    admit_limit: int = env_field(30, "CITEQ_RATE_ADMITS", "analyses a user may admit per window", ge=10)
    #: Each upload request may carry several files.
    upload_limit: int = env_field(20, "CITEQ_RATE_UPLOADS", "upload requests a user may make per window", ge=5)
    max_upload_bytes: int = env_field(
        50 * 1024 * 1024, "CITEQ_MAX_UPLOAD_BYTES", "largest upload request body (all files together)",
        ge=1024)
    max_json_bytes: int = env_field(64 * 1024, "CITEQ_MAX_JSON_BYTES", "largest JSON request body", ge=1024)
    header_timeout: float = env_field(
        10.0, "CITEQ_WEB_HEADER_TIMEOUT", "seconds a connection has to deliver a request's headers", gt=0)
    #: A 50 MiB upload needs about 0.9 MB/s: behind a buffering proxy that is the proxy's speed.
    body_timeout: float = env_field(
        60.0, "CITEQ_WEB_BODY_TIMEOUT", "seconds a request has to deliver its whole body (then 408)", gt=0)
    keepalive_timeout: float = env_field(
        5.0, "CITEQ_WEB_KEEPALIVE_TIMEOUT", "seconds an idle keep-alive connection is kept", gt=0)
    #: A connection that has sent nothing is idle: it is closed after ``idle_timeout``, and
    #: first, oldest first, when a new connection finds all ``max_connections`` taken.
    idle_timeout: float = env_field(
        3.0, "CITEQ_WEB_IDLE_TIMEOUT", "seconds a new connection may stay silent before its request starts", gt=0)
    max_connections: int = env_field(
        200, "CITEQ_WEB_MAX_CONNECTIONS", "open connections at once (idle ones make room; else 503)", ge=1)
    max_requests: int = env_field(
        100, "CITEQ_WEB_MAX_REQUESTS", "requests in progress at once; beyond it 503 with Retry-After", ge=1)
    #: A client that reads nothing of a long answer (a report) is cut after this long.
    write_timeout: float = env_field(
        30.0, "CITEQ_WEB_WRITE_TIMEOUT", "seconds a client may leave the server's write buffer full", gt=0)
    max_header_bytes: int = env_field(
        16 * 1024, "CITEQ_WEB_MAX_HEADER_BYTES", "largest request head (request line and headers)", ge=1024)
