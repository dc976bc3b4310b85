"""The nginx site file for several app processes (assets/deploy/nginx-specdec.conf) is the one
the README shows, and the replica tests and bench change only its ports and its log's path."""

from __future__ import annotations

import re
from pathlib import Path

from support.browser import ROOT
from support.replicas import SITE, site_config

README = (ROOT / "README.md").read_text("utf-8")


def test_replica_readme_shows_the_shipped_site_file():
    shown = re.findall(r"```nginx\n(.*?)```", README, re.S)
    assert shown == [SITE.read_text("utf-8")]


def test_replica_readme_starts_the_processes_the_site_file_names():
    ports = re.findall(r"^    server 127\.0\.0\.1:(\d+);$", SITE.read_text("utf-8"), re.M)
    started = re.findall(r"streamlit run app\.py --server\.port (\d+) --server\.headless true &", README)
    assert ports == started and len(ports) >= 2
    [listen] = re.findall(r"^    listen (\d+);$", SITE.read_text("utf-8"), re.M)
    assert f"http://<server>:{listen}/" in README


def test_replica_config_changes_only_the_ports_and_the_log():
    log = Path("/tmp/x/access.log")
    ours = site_config(4100, [4101, 4102, 4103], log).splitlines()
    shipped = SITE.read_text("utf-8").splitlines()
    assert [line for line in ours if line not in shipped] == [
        "    server 127.0.0.1:4101;",
        "    server 127.0.0.1:4102;",
        "    server 127.0.0.1:4103;",
        "    listen 127.0.0.1:4100;",
        f"    access_log {log} specdec;",
    ]
    assert [line for line in shipped if line not in ours] == [
        "    server 127.0.0.1:8601;",
        "    server 127.0.0.1:8602;",
        "    listen 8080;",
        "    access_log /var/log/nginx/specdec.log specdec;",
    ]
