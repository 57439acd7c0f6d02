"""Sending Dramatiq messages from the domain, by actor name.

The analysis modules (queue, uploads, parsing, pipeline, sweepers) send on the broker
they are given, or Dramatiq's global one, and never import the actors themselves (they
live in ``actors/``, above this layer). A send inside a broker transaction (or a bound
connection) becomes visible on commit and is gone on rollback.
"""

from __future__ import annotations

import uuid

import dramatiq


def broker_or_global(broker) -> dramatiq.Broker:
    """``broker``, or Dramatiq's global broker when it is None."""
    return broker if broker is not None else dramatiq.get_broker()


def new_message_id() -> str:
    """A message id to record on a row before its message is sent (a job's own message)."""
    return str(uuid.uuid4())


def send(broker, actor_name: str, *, args: tuple, message_id: str | None = None, **options) -> None:
    """Send a message to the actor named ``actor_name`` (with that id, when given)."""
    message = broker.get_actor(actor_name).message_with_options(args=args, **options)
    if message_id is not None:
        message = message.copy(message_id=message_id)
    broker.enqueue(message)
