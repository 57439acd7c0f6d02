"""A real PgBouncer (Debian's package) in front of a test PostgreSQL, in session or
transaction mode: for the topology tests, the e2e suites run through it
(``CITEQ_TEST_PGBOUNCER=session|transaction``, tests/conftest.py) and
scripts/bench_pgbouncer.py.

PgBouncer refuses to run as root, as PostgreSQL does: as root it runs as the embedded
server's user (``citeq-pg``). It listens on a Unix socket in a folder of its own (no port
to collide with), and reaches the server over the server's Unix socket.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg2

from citeq.devdb import SYSTEM_USER

#: Where Debian puts it (/usr/sbin is not on every PATH).
CANDIDATES = ("pgbouncer", "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")
PORT = 6432


class PgBouncerUnavailable(RuntimeError):
    """PgBouncer is not installed here (``apt-get install pgbouncer``; ``make test`` does as root)."""


def find_pgbouncer() -> str:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise PgBouncerUnavailable("pgbouncer not found on PATH or in /usr/sbin: apt-get install pgbouncer "
                               "(`make test` installs it when run as root)")


def _server_socket(server_url: str) -> tuple[str, int]:
    dsn = psycopg2.extensions.parse_dsn(server_url)
    return dsn["host"], int(dsn.get("port") or 5432)


class PgBouncer:
    """One PgBouncer process in ``mode`` in front of the server that ``server_url`` reaches
    by its Unix socket; :meth:`url` is a URL through it."""

    def __init__(self, server_url: str, mode: str, *, pool_size: int = 40) -> None:
        if mode not in ("session", "transaction"):
            raise ValueError(f"pool mode must be session or transaction, not {mode!r}")
        self.binary = find_pgbouncer()
        self.mode = mode
        self.server_host, self.server_port = _server_socket(server_url)
        self.pool_size = pool_size
        self.dir = Path(tempfile.mkdtemp(prefix=f"citeq-pgb-{mode[0]}-"))
        self.proc: subprocess.Popen | None = None

    @property
    def user(self) -> pwd.struct_passwd | None:
        return pwd.getpwnam(SYSTEM_USER) if os.geteuid() == 0 else None

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@/{dbname}?host={self.dir}&port={PORT}"

    def _write_config(self) -> Path:
        (self.dir / "userlist.txt").write_text('"postgres" ""\n')
        ini = self.dir / "pgbouncer.ini"
        # ignore_startup_parameters: libpq sends none of these unless asked, but psycopg2
        # users do set options/extra_float_digits; PgBouncer would refuse the connection.
        ini.write_text(f"""[databases]
* = host={self.server_host} port={self.server_port}

[pgbouncer]
pool_mode = {self.mode}
listen_addr =
unix_socket_dir = {self.dir}
listen_port = {PORT}
auth_type = trust
auth_file = {self.dir}/userlist.txt
admin_users = postgres
max_client_conn = 1000
default_pool_size = {self.pool_size}
reserve_pool_size = 0
server_login_retry = 1
ignore_startup_parameters = extra_float_digits,options
logfile = {self.dir}/pgbouncer.log
pidfile = {self.dir}/pgbouncer.pid
""")
        user = self.user
        if user is not None:
            for path in (self.dir, *self.dir.iterdir()):
                os.chown(path, user.pw_uid, user.pw_gid)
        return ini

    def start(self, timeout: float = 30.0) -> PgBouncer:
        ini = self._write_config()
        kwargs: dict = {}
        user = self.user
        if user is not None:
            kwargs.update(user=user.pw_uid, group=user.pw_gid, extra_groups=[])
        self.proc = subprocess.Popen([self.binary, str(ini)], stdout=subprocess.DEVNULL,
                                     stderr=(self.dir / "stderr.log").open("w"), cwd="/",
                                     start_new_session=True, **kwargs)
        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg2.connect(self.url(), connect_timeout=2).close()
                return self
            except psycopg2.OperationalError as exc:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"pgbouncer ({self.mode}) did not start: {exc}\n{self.log()}") from exc
                time.sleep(0.05)

    def log(self) -> str:
        out = []
        for name in ("stderr.log", "pgbouncer.log"):
            try:
                out.append((self.dir / name).read_text()[-4000:])
            except OSError:
                pass
        return "\n".join(out)

    def show(self, what: str) -> list[tuple]:
        """Rows of the admin console's ``SHOW <what>`` (POOLS, CLIENTS, SERVERS, STATS)."""
        conn = psycopg2.connect(self.url("pgbouncer"))
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                cur.execute(f"SHOW {what}")  # an admin-console keyword from this module, not input
                return cur.fetchall()
        finally:
            conn.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # an immediate shutdown: clients are cut
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not os.environ.get("CITEQ_KEEP_PGBOUNCER_LOG"):
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> PgBouncer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
