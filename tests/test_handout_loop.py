"""The proof handout prints the loop lines it cites (3, 8, 9 and 10), each as the block page's
loop writes it (without its code reference), in both languages."""

from __future__ import annotations

import re

import pytest

from pages.common.i18n import LESSONS


def _block_loop(text: str) -> dict[int, str]:
    block = re.search(r"```text\n( 1 .*?)```", text, re.S)
    assert block is not None
    lines = (re.sub(r"\s+#.*$", "", line).strip() for line in block.group(1).splitlines())
    return {int(line.split()[0]): line.split(maxsplit=1)[1] for line in lines}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_proof_handout_prints_the_loop_lines_it_cites(lang):
    handout = (LESSONS / lang / "handouts.md").read_text("utf-8")
    proof = handout.split("<!-- section: proof_lines -->")[1].split("<!-- section:")[0]
    printed = {int(n): code for n, code in re.findall(r"\*\*(\d+)\*\* `([^`]+)`", proof)}
    loop = _block_loop((LESSONS / lang / "block.md").read_text("utf-8"))
    assert sorted(printed) == [3, 8, 9, 10]
    assert printed == {n: loop[n] for n in printed}
