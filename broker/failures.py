"""The exception a dead-lettered message died of, stored with it and raised again by join.

Dramatiq's StubBroker keeps the exception object of a failed message and ``join(fail_fast=True)``
re-raises it, so tests are written as ``with pytest.raises(TimeLimitExceeded): broker.join(q)``.
Here the worker and the joining process are different processes (or at least different
connections), so the worker stores what is needed to rebuild it: the type's import path
(``module:qualname``), its ``args`` and its attributes as JSON. The joining process imports
the type, rebuilds the exception from its args, sets its attributes again (``MyError(5)``
whose text is "code 5" comes back with ``.code == 5``) and chains a :class:`DeadLettered`
carrying the worker's traceback text as its cause. A type that cannot be imported by name (a
class defined inside a function, as tests do) is found when the worker that stored it runs in
the joining process.
"""

from __future__ import annotations

import importlib
import json
import logging
import weakref

from .errors import DeadLettered

logger = logging.getLogger(__name__)

#: Exception types this process's workers described, by path: how a join in the same process
#: finds again a type that cannot be imported (``<locals>`` in its qualname). Weak: a type
#: nothing else holds is gone, and then the join raises DeadLettered.
_described: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def describe(exc: BaseException | None) -> tuple[str | None, str | None]:
    """(``module:qualname``, JSON of ``args``) of an exception; Nones when there is none.
    Arguments JSON cannot carry are replaced by the exception's text. When the exception has
    attributes of its own (``exc.__dict__``), the JSON is ``{"args": [...], "attrs": {...}}``
    with those JSON can carry (dunder names such as ``__notes__`` left out)."""
    if exc is None:
        return None, None
    cls = type(exc)
    path = f"{cls.__module__}:{cls.__qualname__}"
    try:
        _described[path] = cls
    except TypeError:  # a type that takes no weak reference
        pass
    try:
        args = json.dumps(list(exc.args))
    except (TypeError, ValueError):
        args = json.dumps([str(exc)])
    attrs = _attributes(exc)
    if attrs:
        args = f'{{"args": {args}, "attrs": {attrs}}}'
    return path, args


#: An attribute whose JSON is longer is not stored (a response body kept on an error, say).
MAX_ATTRIBUTE_CHARS = 10_000


def _attributes(exc: BaseException) -> str | None:
    """JSON of the exception's own attributes that JSON can carry, or None when none."""
    kept = {}
    for name, value in vars(exc).items():
        if name.startswith("__"):
            continue
        try:
            if len(json.dumps(value)) > MAX_ATTRIBUTE_CHARS:
                continue
        except (TypeError, ValueError):
            continue
        kept[name] = value
    return json.dumps(kept) if kept else None


def _import(path: str) -> type[BaseException] | None:
    if path in _described:
        return _described.get(path)
    module_name, _, qualname = path.partition(":")
    if not module_name or not qualname or "<locals>" in qualname:
        return None  # a class defined inside a function cannot be found again by name
    try:
        obj = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except Exception:  # noqa: BLE001 - any import failure means: fall back to DeadLettered
        return None
    return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None


def rebuild(path: str | None, stored) -> BaseException | None:
    """The exception of type ``path`` from what :func:`describe` stored (its args, or its
    args and attributes), or None when it cannot be had."""
    cls = _import(path) if path else None
    if cls is None:
        return None
    attrs = {}
    if isinstance(stored, dict):
        stored, attrs = stored.get("args"), stored.get("attrs") or {}
    args = tuple(stored) if isinstance(stored, list) else ()
    exc = _construct(cls, args)
    if exc is not None and attrs:
        try:
            vars(exc).update(attrs)
        except Exception:  # noqa: BLE001 - the type and args are what matter most
            pass
    return exc


def _construct(cls: type[BaseException], args: tuple) -> BaseException | None:
    """``cls(*args)`` when that gives back the same ``args``; else (a constructor with another
    signature, or one that formats its text: ``MyError(5)`` whose args are ``("code 5",)``)
    an instance made without calling the constructor, with ``args`` set directly."""
    try:
        exc = cls(*args)
        if exc.args == args:
            return exc
    except Exception:  # noqa: BLE001
        pass
    try:
        exc = cls.__new__(cls, *args)
        exc.args = args
        return exc
    except Exception:  # noqa: BLE001
        return None


def dead_letter_exception(row_id: int, actor_name: str, reason: str | None, path: str | None,
                          args) -> BaseException:
    """What ``join(fail_fast=True)`` raises for a dead letter: its own exception where it can
    be rebuilt, else :class:`DeadLettered`; either way carrying the stored traceback text."""
    dead = DeadLettered(f"message {row_id} of {actor_name} was dead-lettered: {reason}",
                        message_row=row_id, actor_name=actor_name, exception=path)
    exc = rebuild(path, args)
    if exc is None:
        return dead
    # The worker's traceback as the cause (shown above it), not as a note: a note would
    # become part of what pytest.raises(match=...) matches.
    exc.__cause__ = dead
    return exc
