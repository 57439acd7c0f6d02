"""The database the benchmarks run on: DATABASE_URL's server or the embedded one."""

from __future__ import annotations

import os
from pathlib import Path


def sql(*args, **kwargs):
    """The benchmarks' one-statement helper (citeq.devdb.sql), imported when called: the bench
    client also runs in the peers' virtual environments (RedisBroker, dramatiq-pg), which have
    no psycopg2 or pydantic for citeq's broker package to import."""
    from citeq.devdb import sql as run

    return run(*args, **kwargs)


def rng(values: list[float], spec: str) -> str:
    """A range of figures as the benchmarks print it ("lo–hi", one figure when they agree;
    None values are left out, "-" when none is left)."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return format(lo, spec) if format(lo, spec) == format(hi, spec) else f"{format(lo, spec)}–{format(hi, spec)}"


#: The embedded server's data directory when :func:`database` started it (its CPU is ours to read).
_embedded_data: Path | None = None


def database(name: str) -> str:
    """A fresh, migrated database ``name`` (dropped first if it exists); its URL."""
    from broker.migrate import migrate
    from citeq.devdb import EmbeddedPostgres, ensure_database, with_dbname

    global _embedded_data
    if os.environ.get("DATABASE_URL"):
        admin = os.environ["DATABASE_URL"]
    else:
        server = EmbeddedPostgres.for_name("main")
        admin, _embedded_data = server.start(), server.data_dir
    ensure_database(admin, name, recreate=True)
    url = with_dbname(admin, name)
    migrate(url)
    return url


class Workers:
    """Real ``dramatiq`` worker processes on ``url``, ready once all have a heartbeat row."""

    def __init__(self, url: str, processes: int, threads: int, *, modules: tuple[str, ...] = ("actors",),
                 env: dict[str, str] | None = None) -> None:
        import subprocess
        import sys
        import time
        from pathlib import Path

        root = Path(__file__).resolve().parent.parent
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "dramatiq"), *modules, "--processes", str(processes),
             "--threads", str(threads), "--path", "."],
            cwd=root, env=dict(os.environ, DATABASE_URL=url, CITEQ_POLL_INTERVAL="0.2", **(env or {})),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while sql(url, "SELECT count(*) FROM citeq_workers")[0][0] < processes:
            if time.monotonic() > deadline:
                raise RuntimeError("worker processes did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        import signal

        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=30)


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one process so far, from /proc (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def server_cpu_seconds() -> float | None:
    """CPU seconds used so far by the embedded PostgreSQL server that :func:`database` started,
    or None when DATABASE_URL named a server that is not ours to see."""
    return None if _embedded_data is None else postgres_cpu_seconds(_embedded_data)


def postgres_cpu_seconds(data_dir: Path) -> float | None:
    """CPU seconds used so far by the PostgreSQL server of ``data_dir`` (postmaster and every
    process under it, from /proc), or None when it cannot be read (psutil missing: the peer
    brokers' virtual environments)."""
    try:
        import psutil
    except ImportError:
        return None
    try:
        pid = int(Path(data_dir, "postmaster.pid").read_text().split()[0])
        root = psutil.Process(pid)
        total = 0.0
        for proc in [root, *root.children(recursive=True)]:
            try:
                t = proc.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total
    except (OSError, ValueError, psutil.Error):
        return None
