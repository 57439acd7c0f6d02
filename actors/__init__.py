"""citeq's Dramatiq actors and their broker: ``dramatiq actors`` / ``periodiq actors``.

Importing this package is the worker's (and the scheduler's) edge: it reads the process's
settings once (actors/config.py), creates the Postgres broker (DATABASE_URL is read when the
first connection is needed), adds the serialized-jobs middleware, makes it Dramatiq's
global broker and declares every actor.
"""

import dramatiq

from broker import PostgresBroker

from . import config
from .serialized import SerializedJobs

config.configure()

broker = PostgresBroker()
broker.add_middleware(SerializedJobs())
dramatiq.set_broker(broker)

from . import pipeline, queue  # noqa: E402,F401 - declare the actors on the broker above
