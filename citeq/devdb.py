"""A private PostgreSQL server for the demo and the tests, used when DATABASE_URL is unset.

Why this shape: the PyPI package ``pgserver`` carries PostgreSQL 16 binaries inside its
wheel, so ``pip install`` is the whole installation on any Linux or macOS machine with
Python 3.9-3.12. We only borrow its binaries and drive ``initdb``/``pg_ctl`` ourselves,
because the tests must be able to stop and restart the server under a running worker.
When that package is missing (Python 3.13+), the server binaries of a system PostgreSQL
(Debian's ``/usr/lib/postgresql/N/bin`` or ``pg_config --bindir``) are used instead.

PostgreSQL refuses to run as root, and CI runs as root: then the server runs as an
unprivileged system user (``citeq-pg``, created on first use). The data lives in a
project-local folder (``.citeq/pg/<name>``); the server listens on a Unix socket only,
so it never collides with another server's port.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SYSTEM_USER = "citeq-pg"
SOCKET_NAME = ".s.PGSQL.5432"
#: Unix socket paths longer than this are refused by the kernel (sun_path is 108 bytes).
MAX_SOCKET_PATH = 100


class EmbeddedPostgresError(RuntimeError):
    """The embedded PostgreSQL server could not be started."""


def project_root() -> Path:
    return Path(__file__).resolve().parent.parent


def default_home() -> Path:
    return Path(os.environ.get("CITEQ_HOME") or project_root() / ".citeq")


def find_bindir() -> Path:
    """Locate PostgreSQL server binaries: pgserver's wheel first, then the system's."""
    candidates: list[Path] = []
    # Found without importing pgserver: its __init__ starts machinery we do not use.
    spec = importlib.util.find_spec("pgserver")
    if spec is not None and spec.submodule_search_locations:
        candidates.append(Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin")
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        if out.returncode == 0:
            candidates.append(Path(out.stdout.strip()))
    for c in candidates:
        if (c / "initdb").exists() and (c / "pg_ctl").exists() and (c / "postgres").exists():
            return c
    raise EmbeddedPostgresError(
        "No PostgreSQL server binaries found. Either set DATABASE_URL to a PostgreSQL you run, "
        "or install them: `pip install pgserver` (Python <= 3.12), or "
        "`apt-get install postgresql` (Debian/Ubuntu), or `brew install postgresql` (macOS)."
    )


def _ensure_system_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    res = subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0 and "already exists" not in res.stderr:
        raise EmbeddedPostgresError(
            f"PostgreSQL refuses to run as root and creating the user {SYSTEM_USER!r} failed: "
            f"{res.stderr.strip()}. Run as a normal user or set DATABASE_URL."
        )
    return pwd.getpwnam(SYSTEM_USER)


@dataclass
class EmbeddedPostgres:
    """One private server: a data folder, a socket folder and the binaries to drive it."""

    data_dir: Path
    bindir: Path
    fsync: bool = True

    @classmethod
    def for_name(cls, name: str = "main", *, fsync: bool = True) -> "EmbeddedPostgres":
        server = cls(data_dir=default_home() / "pg" / name, bindir=find_bindir(), fsync=fsync)
        if not server._reachable_by_server_user(server.data_dir):
            # The checkout sits below a folder the unprivileged server user cannot enter
            # (a 0700 temp dir, a home folder): keep the data in the system temp dir.
            digest = hashlib.sha256(str(project_root()).encode()).hexdigest()[:12]
            server.data_dir = Path(tempfile.gettempdir()) / f"citeq-{digest}" / "pg" / name
        return server

    def _reachable_by_server_user(self, path: Path) -> bool:
        if self._user is None:
            return True
        existing = next(p for p in [path, *path.parents] if p.exists())
        return self._run("/bin/sh", "-c", 'cd "$0"', str(existing), check=False).returncode == 0

    # -- running as a non-root user when we are root -----------------------------------

    @property
    def _user(self) -> pwd.struct_passwd | None:
        return _ensure_system_user() if os.geteuid() == 0 else None

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        user = self._user
        kwargs: dict = {}
        env = dict(os.environ, LC_ALL="C")
        if user is not None:
            kwargs.update(user=user.pw_uid, group=user.pw_gid, extra_groups=[])
            env["HOME"] = str(self.data_dir.parent)
        # pg_ctl's postmaster inherits our stdout: send it to files, never to a pipe we wait on.
        with tempfile.TemporaryFile("w+") as out:
            res = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, text=True, env=env,
                                 cwd="/", **kwargs)
            out.seek(0)
            res.stdout = out.read()
        if check and res.returncode != 0:
            raise EmbeddedPostgresError(f"{' '.join(args)} failed:\n{res.stdout}")
        return res

    def _chown(self, path: Path) -> None:
        user = self._user
        if user is not None:
            os.chown(path, user.pw_uid, user.pw_gid)

    # -- layout ----------------------------------------------------------------------------

    @property
    def socket_dir(self) -> Path:
        if len(str(self.data_dir / SOCKET_NAME)) <= MAX_SOCKET_PATH:
            return self.data_dir
        digest = hashlib.sha256(str(self.data_dir).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"citeq-pg-{digest}"

    @property
    def log_file(self) -> Path:
        return self.data_dir.parent / f"{self.data_dir.name}.log"

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@/{dbname}?host={self.socket_dir}"

    # -- lifecycle -------------------------------------------------------------------------

    def is_running(self) -> bool:
        if not (self.data_dir / "PG_VERSION").exists():
            return False
        return self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "status",
                         check=False).returncode == 0

    def init(self) -> None:
        if (self.data_dir / "PG_VERSION").exists():
            return
        created = [p for p in [self.data_dir, *self.data_dir.parents] if not p.exists()]
        self.data_dir.mkdir(parents=True, exist_ok=True)
        for p in created:
            self._chown(p)
        self._run(str(self.bindir / "initdb"), "-D", str(self.data_dir), "-U", "postgres",
                  "--auth=trust", "--encoding=UTF8", "--no-sync")

    def start(self) -> str:
        """Start the server if it is not running; return a URL for the `postgres` database."""
        self._stop_strays()
        self.init()
        if self.is_running():
            try:
                self._wait_ready(timeout=5)
                return self.url()
            except EmbeddedPostgresError:
                # Running but unreachable (its socket file was removed): start it afresh.
                self.stop(mode="immediate")
        if not self.is_running():
            sock = self.socket_dir
            sock.mkdir(parents=True, exist_ok=True)
            self._chown(sock)
            # autovacuum_naptime: a queue table needs vacuuming within seconds, not a minute.
            opts = [f"-k {sock}", "-h ''", "-c max_connections=300", "-c shared_buffers=256MB",
                    "-c max_locks_per_transaction=256", "-c autovacuum_naptime=5s"]
            if not self.fsync:
                opts += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
            self.log_file.touch()
            self._chown(self.log_file)
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_file),
                      "-o", " ".join(opts), "-w", "-t", "60", "start")
        self._wait_ready()
        return self.url()

    def _stop_strays(self) -> None:
        """End servers still running for this data folder after it was deleted and made anew.

        Such a server notices within a minute that its postmaster.pid is gone and shuts
        down — removing, by path, the socket of the server that now owns the folder. Seen
        after `rm -rf` of a checkout whose test server was still running.
        """
        proc = Path("/proc")
        if not proc.is_dir():
            return
        pid_file = self.data_dir / "postmaster.pid"
        current = pid_file.read_text().split("\n", 1)[0].strip() if pid_file.exists() else ""
        wanted = ["-D", str(self.data_dir)]
        for entry in proc.iterdir():
            if not entry.name.isdigit() or entry.name == current:
                continue
            try:
                argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            if argv and argv[0].endswith("/postgres") and any(argv[i:i + 2] == wanted for i in range(len(argv))):
                try:
                    # SIGKILL, not a shutdown signal: a shutdown would remove the socket by path.
                    os.kill(int(entry.name), signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def stop(self, mode: str = "fast") -> None:
        if self.is_running():
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def _wait_ready(self, timeout: float = 30.0) -> None:
        import psycopg2

        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg2.connect(self.url(), connect_timeout=2).close()
                return
            except psycopg2.OperationalError as exc:
                if time.monotonic() > deadline:
                    raise EmbeddedPostgresError(f"server did not accept connections: {exc}") from exc
                time.sleep(0.05)


def ensure_database(admin_url: str, dbname: str, *, recreate: bool = False) -> None:
    """Create ``dbname`` on the server behind ``admin_url`` (drop it first if ``recreate``)."""
    import psycopg2
    from psycopg2 import sql

    conn = psycopg2.connect(admin_url)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            if recreate:
                cur.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname)))
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,))
            if cur.fetchone() is None:
                cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    finally:
        conn.close()


def with_dbname(url: str, dbname: str) -> str:
    """Return ``url`` pointing at another database on the same server."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + dbname))


def database_url(dbname: str = "citeq") -> str:
    """DATABASE_URL if set, else start the embedded server and return a URL for ``dbname``."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    server = EmbeddedPostgres.for_name("main")
    admin = server.start()
    ensure_database(admin, dbname)
    return with_dbname(admin, dbname)
