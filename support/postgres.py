"""A throwaway PostgreSQL cluster for the tests: Debian's server binaries, a folder of its own,
a free port on 127.0.0.1, stopped and deleted at the end.

``initdb`` and ``postgres`` refuse to run as root (CI runs as root), and Debian keeps them off
PATH (``/usr/lib/postgresql/<version>/bin``). So, as /work/shared/TESTING.md says: the cluster
lives in a ``mkdtemp`` folder outside pytest's own temporary folder (that one is mode 0700 for
root), owned by the ``postgres`` user, and every server command runs through
``runuser -u postgres``; run as any other user, the commands run as that user. Where the
cluster cannot be started, :class:`Unavailable` says why (the tests then fail with it).

The README's ``.streamlit/secrets.toml`` example is the one the tests use:
:func:`readme_secrets` reads it from the README, and :meth:`Cluster.secrets_toml` gives that
text with only the example's host, port and database replaced by the test cluster's.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from sqlalchemy.engine import make_url

from support.browser import ROOT, free_port

#: Debian's server binaries, one folder per installed version.
BIN_GLOB = "/usr/lib/postgresql/*/bin"
#: Names another folder of server binaries (``initdb``, ``pg_ctl``) to use instead.
BIN_ENV = "SPECDEC_POSTGRES_BIN"
#: The role and password of the README's example URL; the test cluster has them too.
TEACHER = "teacher"
_README_TOML = re.compile(r"```toml\n(# \.streamlit/secrets\.toml.*?)```", re.S)


class Unavailable(RuntimeError):
    """PostgreSQL cannot be started here; the message says why and what to do."""


def readme_secrets() -> str:
    """The README's ``.streamlit/secrets.toml`` example, exactly as the README shows it."""
    found = _README_TOML.findall((ROOT / "README.md").read_text("utf-8"))
    if len(found) != 1:
        raise AssertionError(f"the README shows {len(found)} .streamlit/secrets.toml examples, not one")
    return found[0]


def readme_url() -> str:
    """The database URL of the README's secrets example."""
    [url] = re.findall(r'^url = "([^"]+)"$', readme_secrets(), re.M)
    return url


def server_bin() -> Path:
    """The newest installed PostgreSQL's binaries (or those in ``$SPECDEC_POSTGRES_BIN``);
    :class:`Unavailable` when there are none."""
    where = os.environ.get(BIN_ENV) or BIN_GLOB
    found = sorted(glob.glob(where), key=lambda p: [int(x) for x in re.findall(r"\d+", p)])
    found = [p for p in found if os.access(Path(p) / "initdb", os.X_OK)]
    if not found:
        raise Unavailable(
            f"no PostgreSQL server binaries (initdb) in {where}: run `bash .ci/setup.sh --test` "
            "(it installs Debian's postgresql package) as root or with sudo that asks no password"
        )
    return Path(found[-1])


class Cluster:
    """One running PostgreSQL cluster on 127.0.0.1:`port`, trusting local connections."""

    def __init__(self) -> None:
        self.bin = server_bin()
        self.root = Path(tempfile.mkdtemp(prefix="specdec-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self._databases = 0
        self._roles = 0
        self._as_root = os.geteuid() == 0
        try:
            if self._as_root:
                try:
                    owner = pwd.getpwnam("postgres")
                except KeyError as exc:
                    raise Unavailable("there is no 'postgres' user to run the server as") from exc
                os.chown(self.root, owner.pw_uid, owner.pw_gid)
            self._server("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
                         "--locale=C", "--no-sync")  # fmt: skip
            self.start()
            self.sql(f"CREATE ROLE {TEACHER} LOGIN PASSWORD 'secret'")
        except BaseException:
            self.remove()
            raise

    def _server(self, tool: str, *args: str) -> str:
        cmd = [str(self.bin / tool), *args]
        if self._as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise Unavailable(f"`{' '.join(cmd)}` failed ({done.returncode}): {done.stderr[-2000:]}{log}")
        return done.stdout

    def start(self) -> None:
        """Start the server (again) and wait until it accepts connections."""
        options = f"-k {self.root} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._server("pg_ctl", "-D", str(self.data), "-o", options, "-w", "-l", str(self.log), "start")

    def stop(self) -> None:
        """Stop the server (fast: open connections are closed), as a database restart does."""
        self._server("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def running(self) -> bool:
        """Whether the server is up."""
        return (self.data / "postmaster.pid").exists()

    def remove(self) -> None:
        """Stop the server if it runs and delete the cluster's folder."""
        try:
            if self.running():
                self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        """A SQLAlchemy URL (psycopg driver) of `database` as `user`."""
        return f"postgresql+psycopg://{user}@127.0.0.1:{self.port}/{database}"

    def sql(self, *statements: str, database: str = "postgres") -> None:
        """Run `statements` as the superuser, each in its own autocommitted transaction."""
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname=database,
                             autocommit=True) as conn:  # fmt: skip
            for statement in statements:
                conn.execute(statement)

    def new_database(self, owner: str = TEACHER) -> str:
        """A new empty database owned by `owner`; its name."""
        self._databases += 1
        name = f"specdec_{self._databases}"
        self.sql(f"CREATE DATABASE {name} OWNER {owner}")
        return name

    def new_role(self, options: str = "") -> str:
        """A new login role with the README's password and `options` (e.g. ``CONNECTION LIMIT 0``);
        its name (roles belong to the whole cluster, so each test makes its own)."""
        self._roles += 1
        name = f"role_{self._roles}"
        self.sql(f"CREATE ROLE {name} LOGIN PASSWORD 'secret' {options}")
        return name

    def readme_url(self, database: str) -> str:
        """The README's example URL (its driver, user and password) pointed at `database` here."""
        return (
            make_url(readme_url())
            .set(host="127.0.0.1", port=self.port, database=database)
            .render_as_string(hide_password=False)
        )

    def secrets_toml(self, database: str) -> str:
        """The README's ``.streamlit/secrets.toml`` text, its URL pointed at `database` here."""
        text = readme_secrets()
        return text.replace(readme_url(), self.readme_url(database))
