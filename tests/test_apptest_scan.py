"""support/apptest.py keeps Streamlit's scan of the installed packages for components once per
process: a release of Streamlit whose AppTest no longer calls that scan fails here, so the
speed-up cannot vanish silently."""

from __future__ import annotations

from streamlit.components.v2 import manifest_scanner

from support.apptest import open_page


def test_new_apptests_reuse_the_first_component_scan():
    scan = manifest_scanner.scan_component_manifests
    assert hasattr(scan, "cache_info"), "support/apptest.py did not keep the scan"
    open_page("cost")
    before = scan.cache_info()
    open_page("cost")
    open_page("overlap", "zh")
    after = scan.cache_info()
    assert after.misses == before.misses == 1  # scanned once in this process
    assert after.hits == before.hits + 2  # each new AppTest asked for it again
