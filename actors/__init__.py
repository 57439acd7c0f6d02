"""citeq's Dramatiq actors and their broker: ``dramatiq actors`` / ``periodiq actors``.

Importing this package is the worker's (and the scheduler's) edge: it reads the process's
settings once (actors/config.py, and the broker's: DATABASE_URL and CITEQ_*), creates the
Postgres broker, adds the serialized-jobs middleware, makes it Dramatiq's global broker and
declares every actor.
"""

import dramatiq

from broker import BrokerSettings, PostgresBroker

from . import config
from .serialized import SerializedJobs

config.configure()

broker = PostgresBroker(settings=BrokerSettings.from_env())
broker.add_middleware(SerializedJobs())
dramatiq.set_broker(broker)

from . import pipeline, queue  # noqa: E402,F401 - declare the actors on the broker above
