"""Run a function in a child process under a CPU-time, memory and wall-clock budget.

Parsing hostile documents is the use: an 18.5 kB PDF whose pages share one compressed
content stream cost 36 s of worker CPU for 4 pages (issue 11). A budget enforced inside
the worker's own process cannot stop a C loop or a runaway allocation, so the work runs in
a child with ``RLIMIT_CPU`` and ``RLIMIT_AS`` set, and the parent waits at most
``wall_seconds`` for its answer::

    pages = run_limited(extract_pages, data, name, cpu_seconds=30, memory_bytes=1 << 30,
                        wall_seconds=60)

Children come from a ``forkserver`` (a clean single-threaded process started once and
forked per call): forking the multi-threaded worker itself would copy its locks in
whatever state its other threads hold them. The function's module, the program's main
module and the modules named in ``preload`` are imported once into the fork server, so a
call pays for a fork, not for imports (the first caller's choice counts: the fork server
starts then). As with any ``spawn``/``forkserver`` program, a script that calls this must
keep its top-level work under ``if __name__ == "__main__":``.

The function and its arguments must be picklable (a module-level function), and so must
its result. An exception it raises is raised again in the caller when it pickles; one that
does not becomes :class:`SandboxCrashed`.
"""

from __future__ import annotations

import multiprocessing
import resource
import signal
import threading
from collections.abc import Callable, Sequence
from typing import Any

_lock = threading.Lock()
_context = None
#: True in a sandboxed child only: :func:`limit_cpu` never touches any other process.
_in_child = False


class SandboxError(Exception):
    """The sandboxed work did not return a result."""


class ResourceLimitExceeded(SandboxError):
    """The work went over its CPU-time, memory or wall-clock budget and was stopped."""

    def __init__(self, limit: str, detail: str) -> None:
        #: ``cpu``, ``memory`` or ``wall``: which budget ran out.
        self.limit = limit
        super().__init__(detail)

    def __reduce__(self):
        return (type(self), (self.limit, str(self)))


class SandboxCrashed(SandboxError):
    """The child process died without an answer, or its answer could not be read."""


def run_limited(fn: Callable[..., Any], *args: Any, cpu_seconds: float, memory_bytes: int | None,
                wall_seconds: float, preload: Sequence[str] = ()) -> Any:
    """``fn(*args)`` in a child process under the given budgets; its result.

    Raises :class:`ResourceLimitExceeded` when a budget runs out (the child is killed),
    :class:`SandboxCrashed` when the child dies otherwise, and whatever ``fn`` raised.
    ``memory_bytes=None`` leaves the address space unlimited.
    """
    ctx = _forkserver([fn.__module__, *preload])
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(sender, fn, args, cpu_seconds, memory_bytes), daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(wall_seconds):
            raise ResourceLimitExceeded("wall", f"gave no answer within {wall_seconds:g} s of wall-clock time")
        try:
            outcome, value = receiver.recv()
        except (EOFError, OSError):
            child.join(timeout=5)
            raise _death(child.exitcode, cpu_seconds) from None
        except Exception as exc:  # noqa: BLE001 - an answer that does not unpickle
            raise SandboxCrashed(f"the answer could not be read: {type(exc).__name__}: {exc}") from None
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        child.join(timeout=5)
    if outcome == "ok":
        return value
    raise value


def _forkserver(modules: list[str]):
    global _context
    with _lock:
        if _context is None:
            _context = multiprocessing.get_context("forkserver")
            # Effective only before the fork server starts: the first caller's modules.
            # "__main__" imports the main module once there, not once per child.
            _context.set_forkserver_preload(["__main__", "analysis.pipeline.documents.sandbox", *modules])
        return _context


def _death(exitcode: int | None, cpu_seconds: float) -> SandboxError:
    if exitcode in (-signal.SIGXCPU, -signal.SIGKILL):
        return ResourceLimitExceeded("cpu", f"stopped at its CPU-time allowance (at most {cpu_seconds:g} s, "
                                            "less for a small document)")
    return SandboxCrashed(f"the child process ended without an answer (exit code {exitcode})")


def limit_cpu(seconds: float) -> float | None:
    """In a sandboxed call, lower its CPU-time budget to ``seconds`` in all (counted from the
    child's start; never below what it has used plus half a second, never above the budget
    it was given): work that learns its size as it goes (a PDF's page count) allows itself
    what that size needs. The budget now in force, or None outside a sandbox (a no-op)."""
    if not _in_child:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    wanted = max(1, int(max(seconds, used + 0.5) + 0.999))
    if soft == resource.RLIM_INFINITY or wanted < soft:
        resource.setrlimit(resource.RLIMIT_CPU, (wanted, hard))
        soft = wanted
    return float(soft)


def _child(sender, fn, args, cpu_seconds: float, memory_bytes: int | None) -> None:
    """In the child: set the limits, run, send ("ok", result) or ("error", exception)."""
    global _in_child
    _in_child = True
    soft = max(1, int(cpu_seconds + 0.999))
    # SIGXCPU at the soft limit ends the process (default action); SIGKILL one second on.
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    if memory_bytes is not None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    try:
        answer = ("ok", fn(*args))
    except MemoryError:
        answer = ("error", ResourceLimitExceeded("memory", f"went over {memory_bytes // (1 << 20)} MB of memory"))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the caller
        answer = ("error", exc)
    try:
        sender.send(answer)
    except MemoryError:
        sender.send(("error", ResourceLimitExceeded("memory", "the answer did not fit in the memory budget")))
    except Exception as exc:  # noqa: BLE001 - an unpicklable result or exception
        sender.send(("error", SandboxCrashed(f"the answer could not be sent: {type(exc).__name__}: {exc}")))
    finally:
        sender.close()
