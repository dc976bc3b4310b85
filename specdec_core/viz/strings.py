"""Figure strings: every builder takes its words from the caller (lessons/<lang>/<page>.toml).

There are no English defaults in :mod:`specdec_core.viz`: the TOML files are the only source,
so what a test checks is what a user reads. Each figure module lists the keys each builder
reads in a ``KEYS`` mapping; :func:`pick` checks them on entry and hands the builder only
those, so a key missing from a language fails at once, and a key a builder reads without
listing it fails in every test of that builder.
"""

from __future__ import annotations

from collections.abc import Mapping


def pick(text: Mapping[str, str], keys: Mapping[str, tuple[str, ...]], builder: str) -> dict[str, str]:
    """The strings ``keys[builder]`` names, taken from `text`; KeyError naming any missing one."""
    wanted = keys[builder]
    missing = [key for key in wanted if key not in text]
    if missing:
        raise KeyError(f"{builder} needs the figure strings {', '.join(missing)}")
    return {key: text[key] for key in wanted}
