"""The proof handout prints the loop whose lines it cites: the block page's fourteen lines, the
same text without their code references, in both languages."""

from __future__ import annotations

import re

import pytest

from pages.common.i18n import LESSONS


def _loop(text: str) -> list[str]:
    block = re.search(r"```text\n( 1 .*?)```", text, re.S)
    assert block is not None
    return [re.sub(r"\s+#.*$", "", line).rstrip() for line in block.group(1).splitlines()]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_proof_handout_prints_the_block_pages_loop(lang):
    handout = (LESSONS / lang / "handouts.md").read_text("utf-8")
    proof = handout.split("<!-- section: proof_lines -->")[1].split("<!-- section:")[0]
    printed = _loop(proof)
    assert printed == _loop((LESSONS / lang / "block.md").read_text("utf-8"))
    cited = {int(n) for n in re.findall(r"(?:Line|line|第) ?\*?\*?(\d+)", proof)}
    assert {3, 8, 9, 10} <= cited
    assert [int(line.split()[0]) for line in printed] == list(range(1, 15))
