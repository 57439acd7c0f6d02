"""The broker's errors: one base class, a flat hierarchy, the docstring is the message."""

from __future__ import annotations

import dramatiq.errors
from dramatiq.middleware import MiddlewareError


class CiteqBrokerError(dramatiq.errors.BrokerError):
    """The Postgres broker failed."""

    def __init__(self, message: str | None = None, **context: object) -> None:
        self.context = context
        super().__init__(message or (self.__doc__ or "").strip())


class ConfigurationError(CiteqBrokerError):
    """The broker is not configured: DATABASE_URL is not set and no url= was given."""


class MessageTooLarge(CiteqBrokerError):
    """The encoded message is larger than the broker accepts (CITEQ_MAX_MESSAGE_BYTES)."""


class DeadLettered(CiteqBrokerError):
    """A message was dead-lettered while joining its queue."""


class PoolExhausted(dramatiq.errors.BrokerConnectionError):
    """No database connection became free in time (CITEQ_POOL_SIZE, CITEQ_POOL_TIMEOUT)."""


class DatabaseUnavailable(dramatiq.errors.BrokerConnectionError):
    """The database could not be reached or the connection broke."""


class InvalidGroupOption(MiddlewareError, ValueError):
    """A message-group option is invalid: group_by must be callable, group_concurrency an int
    >= 1, a group key a non-empty str or None. (A MiddlewareError, so that Dramatiq raises it
    to the caller instead of logging it.)"""
