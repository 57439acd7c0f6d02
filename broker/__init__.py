"""citeq's Postgres broker for Dramatiq 2.

    from broker import BrokerSettings, PostgresBroker
    # The app module Dramatiq imports is the process's edge: it reads the settings once.
    dramatiq.set_broker(PostgresBroker(settings=BrokerSettings.from_env()))   # url=... wins
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
