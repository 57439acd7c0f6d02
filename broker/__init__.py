"""citeq's Postgres broker for Dramatiq 2.

    from broker import PostgresBroker
    dramatiq.set_broker(PostgresBroker())   # reads DATABASE_URL; url=... wins
"""

from .errors import (
    InvalidGroupOption,
    CiteqBrokerError,
    ConfigurationError,
    DatabaseUnavailable,
    DeadLettered,
    MessageTooLarge,
    PoolExhausted,
)
from .postgres import PostgresBroker
from .settings import BrokerSettings

__all__ = [
    "BrokerSettings",
    "CiteqBrokerError",
    "ConfigurationError",
    "DatabaseUnavailable",
    "DeadLettered",
    "InvalidGroupOption",
    "MessageTooLarge",
    "PoolExhausted",
    "PostgresBroker",
]
