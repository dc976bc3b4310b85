"""A class on several app processes behind nginx, on loopback, sharing one PostgreSQL database:
what the replica tests (tests/browser/test_replicas_browser.py) and ``python -m bench.classroom``
start.

The proxy runs the shipped site file, ``assets/deploy/nginx-specdec.conf`` (the one the README
shows), with only its upstream ports, its listening port and its log's path changed
(:func:`site_config`), inside a minimal main configuration of its own: a folder made with
``mkdtemp``, its pid file, error log and temporary folders there, ``daemon off`` so it is a child
process stopped by its id. Run as root, nginx's workers run as ``nobody``, so that folder is made
readable to them. Where nginx is missing or does not start, :class:`ProxyUnavailable` says why.

Each app process is ``streamlit run app.py`` in classroom mode in one working folder holding the
README's ``.streamlit/secrets.toml`` (its URL pointed at the test cluster) and the repository's
``.streamlit/config.toml``: a process reads both from its working folder, as a deployment would.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from support.browser import ROOT, free_port, serve, streamlit_cmd
from support.postgres import Cluster

#: The shipped nginx site file: the README shows it, the tests and the bench run it.
SITE = ROOT / "assets" / "deploy" / "nginx-specdec.conf"
PASSCODE = "owl-42"
_UPSTREAM = re.compile(r"^(    server 127\.0\.0\.1:\d+;\n)+", re.M)
_LISTEN = re.compile(r"^    listen 8080;$", re.M)
_ACCESS_LOG = re.compile(r"^    access_log (\S+) specdec;$", re.M)
_LINE = re.compile(
    r'"(?P<method>\S+) (?P<path>\S+) [^"]*" (?P<status>\d+) route=(?P<route>\S*) upstream=(?P<up>.*)$'
)


class ProxyUnavailable(RuntimeError):
    """nginx cannot be started here; the message says why and what to do."""


def site_config(listen_port: int, app_ports: list[int], access_log: Path) -> str:
    """The shipped site file listening on 127.0.0.1:`listen_port`, its upstream `app_ports`,
    its access log at `access_log`; nothing else changed."""
    text = SITE.read_text("utf-8")
    servers = "".join(f"    server 127.0.0.1:{p};\n" for p in app_ports)
    for pattern, new in ((_UPSTREAM, servers), (_LISTEN, f"    listen 127.0.0.1:{listen_port};"),
                         (_ACCESS_LOG, f"    access_log {access_log} specdec;")):  # fmt: skip
        text, n = pattern.subn(new.replace("\\", "\\\\"), text)
        if n != 1:
            raise AssertionError(f"{SITE} has {n} places matching {pattern.pattern!r}, not one")
    return text


def nginx_bin() -> str:
    """nginx's executable; :class:`ProxyUnavailable` when there is none."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found is None:
        raise ProxyUnavailable(
            "nginx is not installed: run `bash .ci/setup.sh --test` (it installs Debian's nginx "
            "package) as root or with sudo that asks no password"
        )
    return found


@dataclass(frozen=True)
class Request:
    """One line of the proxy's access log."""

    method: str
    path: str
    status: int
    route: str
    upstream: str  # "127.0.0.1:8601", or several comma-separated when nginx tried more than one


class Proxy:
    """nginx on 127.0.0.1:`port` in front of the app processes on `app_ports`."""

    def __init__(self, app_ports: list[int]) -> None:
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="specdec-nginx-"))
        self.root.chmod(0o755)  # the workers (nobody, when started as root) create temp files here
        self.log = self.root / "access.log"
        self.errors = self.root / "error.log"
        (self.root / "site.conf").write_text(site_config(self.port, app_ports, self.log), "utf-8")
        temp = " ".join(f"{kind}_temp_path {self.root / kind};" for kind in ("client_body", "proxy",
                        "fastcgi", "uwsgi", "scgi"))  # fmt: skip
        main = (
            f"daemon off;\nworker_processes 1;\npid {self.root / 'nginx.pid'};\n"
            f"error_log {self.errors} warn;\nevents {{ worker_connections 1024; }}\n"
            f"http {{\n  {temp}\n  include {self.root / 'site.conf'};\n}}\n"
        )
        (self.root / "nginx.conf").write_text(main, "utf-8")
        cmd = [nginx_bin(), "-p", str(self.root), "-e", str(self.errors), "-c", str(self.root / "nginx.conf")]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=5).close()
                break
            except urllib.error.HTTPError:  # nginx answered (whatever the app processes said)
                break
            except OSError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                self.close()
                said = self.errors.read_text(errors="replace")[-2000:] if self.errors.exists() else ""
                raise ProxyUnavailable(
                    f"`{' '.join(cmd)}` did not start: {self.proc.stderr.read()[-2000:]}{said}"
                )  # type: ignore[union-attr]
            time.sleep(0.2)

    def requests(self) -> list[Request]:
        """Every request the proxy has logged so far (a websocket is logged once it closes)."""
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text("utf-8", errors="replace").splitlines():
            m = _LINE.search(line)
            if m:
                out.append(Request(m["method"], m["path"], int(m["status"]), m["route"], m["up"]))
        return out

    def upstreams(self, route: str) -> set[str]:
        """The app processes ("127.0.0.1:<port>") that served the browser with this route cookie."""
        return {r.upstream for r in self.requests() if r.route == route and r.upstream != "-"}

    def close(self) -> None:
        """Stop nginx (fast: open websockets are closed) and delete its folder."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        shutil.rmtree(self.root, ignore_errors=True)


class Replicas:
    """`processes` classroom app processes sharing `database` of `cluster`, behind a :class:`Proxy`.

    ``url``: the proxy, where learners go; ``app_urls``: each process directly; ``upstream(i)``:
    process `i` as the proxy's log names it. `preload`: the models each process offers
    (``SPECDEC_PRELOAD``); `logs`: the folder of the processes' output."""

    def __init__(self, cluster: Cluster, database: str, processes: int = 2, preload: str = "toy",
                 logs: Path = ROOT / "artifacts" / "replicas") -> None:  # fmt: skip
        self._stack = contextlib.ExitStack()
        try:
            self.cwd = Path(tempfile.mkdtemp(prefix="specdec-replicas-"))
            self._stack.callback(shutil.rmtree, self.cwd, True)
            (self.cwd / ".streamlit").mkdir()
            (self.cwd / ".streamlit" / "secrets.toml").write_text(cluster.secrets_toml(database), "utf-8")
            shutil.copy(ROOT / ".streamlit" / "config.toml", self.cwd / ".streamlit" / "config.toml")
            env = {
                "SPECDEC_CLASSROOM": "1",
                "SPECDEC_PRELOAD": preload,
                "SPECDEC_TEACHER_PASSCODE": PASSCODE,
                "SPECDEC_ANSWERS_DB": str(self.cwd / "not-used.sqlite"),  # the secrets' database wins
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            }
            #: The database the processes share, as their secrets name it.
            self.database_url = cluster.readme_url(database)
            self.ports = [free_port() for _ in range(processes)]
            self.app_urls = [
                self._stack.enter_context(
                    serve(streamlit_cmd(port), port, logs / f"process-{i}.log", env, cwd=self.cwd)
                )
                for i, port in enumerate(self.ports)
            ]
            self.proxy = Proxy(self.ports)
            self._stack.callback(self.proxy.close)
            self.url = self.proxy.url
        except BaseException:
            self._stack.close()
            raise

    def upstream(self, i: int) -> str:
        return f"127.0.0.1:{self.ports[i]}"

    def process_of(self, route: str) -> int | None:
        """The one process that served this route so far (None: none yet); AssertionError when
        its requests went to more than one."""
        seen = self.proxy.upstreams(route)
        if len(seen) > 1:
            raise AssertionError(f"route {route} was served by {sorted(seen)}, not one process")
        return self.ports.index(int(seen.pop().rsplit(":", 1)[1])) if seen else None

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Replicas:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
