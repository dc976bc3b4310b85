"""An exercise sheet and its key as Markdown (KaTeX formulas), in the words of the caller's
templates (``[sheet]`` of lessons/<lang>/exercises.toml).

A template names a value as ``{name}`` or ``{name:spec}`` (a Python format spec); only names the
problem provides are filled in, so every other brace (``\\alpha^{\\gamma}``) is left to KaTeX.
Choosing which sentence to print follows the key's own record (accepted, rejected, bonus); no
number is computed here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from specdec_core.course.exercises import Problem, Sheet

Text = Mapping[str, Any]
Part = Literal["sheet", "key", "both"]
_FIELD = re.compile(r"\{(\w+)(:[^{}]*)?\}")


def fill(template: str, values: Mapping[str, Any]) -> str:
    """`template` with every ``{name}`` / ``{name:spec}`` of a known name replaced."""

    def one(match: re.Match[str]) -> str:
        name, spec = match.group(1), match.group(2)
        if name not in values:
            return match.group(0)
        return format(values[name], spec[1:] if spec else "")

    return _FIELD.sub(one, template)


def _num(value: float, digits: int = 3) -> str:
    return f"{value:.{digits}f}"


def _list(values: Sequence[float], digits: int = 3) -> str:
    return ", ".join(_num(v, digits) for v in values)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table (every cell already a string; '|' in a cell is escaped)."""
    cells = [list(header), *[list(r) for r in rows]]
    lines = ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
    lines.insert(1, "|" + "---|" * len(header))
    return "\n".join(lines)


def _sampling(pr: Problem, t: Text, s: Text) -> tuple[dict[str, Any], dict[str, Any]]:
    g, a = pr.given, pr.answer
    labels = g["labels"]
    given = {
        "logit_table": table([s["token"], *labels], [[t["col_logit"], *(f"{v:g}" for v in g["logits"])]]),
        "rule_text": fill(t["rules"][g["rule"]], {"setting": g["setting"]}),
    }
    key_rows = [[t["col_softmax"], *map(_num, a["softmax"])], [t["col_after"], *map(_num, a["probs"])]]
    answer = {
        "key_table": "(a) " + t["col_softmax"] + "\n\n" + table([s["token"], *labels], key_rows),
        "support": ", ".join(a["support"]),
        "support_size": len(a["support"]),
        "greedy": a["greedy"],
        "verdict": s["yes"] if a["collapsed"] else s["no"],
    }
    return given, answer


def _decompose(pr: Problem, t: Text, s: Text) -> tuple[dict[str, Any], dict[str, Any]]:
    g, a = pr.given, pr.answer
    rows = [[x, _num(p, 2), _num(q, 2)] for x, p, q in zip(g["labels"], g["p"], g["q"], strict=True)]
    given = {"labels": ", ".join(g["labels"]), "pq_table": table([s["token"], "p", "q"], rows)}
    columns = ("overlap", "deficit", "surplus", "accept", "residual")
    header = [s["token"], *(t[f"col_{c}"] for c in ("min", "deficit", "surplus", "accept", "residual"))]
    key_rows = [[x, *(_num(a[c][i]) for c in columns)] for i, x in enumerate(g["labels"])]
    answer = {
        "key_table": "(a)\n\n" + table(header, key_rows),
        "R": a["R"],
        "alpha": a["alpha"],
        "residual": _list(a["residual"]),
        "p_list": _list(g["p"], 2),
    }
    return given, answer


def _plain(pr: Problem, t: Text, s: Text) -> tuple[dict[str, Any], dict[str, Any]]:
    answer = dict(pr.answer)
    if "faster" in answer:
        answer["verdict"] = s["yes"] if answer["faster"] else s["no"]
    return dict(pr.given), answer


def _tokens(pr: Problem, t: Text, s: Text) -> tuple[dict[str, Any], dict[str, Any]]:
    """As :func:`_plain`, and the sentence for "every draft stands": "both" for two drafts."""
    given, answer = _plain(pr, t, s)
    gamma = int(pr.given["gamma"])
    answer["all_stand"] = t["both_stand"] if gamma == 2 else fill(t["all_stand"], {"gamma": gamma})
    return given, answer


def _uniform(u: float) -> str:
    """A given uniform as the problem prints it (two decimals), in its text and in its key alike."""
    return f"{u:.2f}"


def _block_steps(pr: Problem, t: Text) -> str:
    g, a = pr.given, pr.answer
    steps: list[str] = []
    u = g["uniforms"]
    k = 0
    for pos, (x, alpha) in enumerate(zip(g["drafts"], a["accept_probs"], strict=False), start=1):
        values = {"pos": pos, "x": x, "a": alpha, "k": k + 1, "u": _uniform(u[k])}
        k += 1
        if a["kinds"][pos - 1] == "accepted":
            steps.append(fill(t["step_accept"], values))
            continue
        values |= {
            "residual": _list(a["residual"]),
            "k2": k + 1,
            "u2": _uniform(u[k]),
            "token": a["tokens"][pos - 1],
        }
        steps.append(fill(t["step_reject"], values))
        return "\n\n".join(steps)
    bonus = {"k": k + 1, "u": _uniform(u[k]), "token": a["tokens"][-1], "pos": len(g["p_rows"])}
    steps.append(fill(t["step_bonus"], bonus | {"row": _list(g["p_rows"][-1], 2)}))
    return "\n\n".join(steps)


def _block(pr: Problem, t: Text, s: Text) -> tuple[dict[str, Any], dict[str, Any]]:
    g, a = pr.given, pr.answer
    rows: list[list[str]] = []
    for i, p in enumerate(g["p_rows"], start=1):
        rows.append([f"$p_{i}$", *(_num(v, 2) for v in p)])
        if i <= len(g["q_rows"]):
            rows.append([f"$q_{i}$", *(_num(v, 2) for v in g["q_rows"][i - 1])])
    given: dict[str, Any] = {"rows_table": table([t["row_label"], *g["labels"]], rows)}
    given |= {f"y{i}": x for i, x in enumerate(g["drafts"], start=1)}
    given |= {f"u{i}": _uniform(u) for i, u in enumerate(g["uniforms"], start=1)}
    answer = {
        "steps": _block_steps(pr, t),
        "committed": " ".join(a["tokens"]),
        "kinds": ", ".join(t["kinds"][kind] for kind in a["kinds"]),
        "accepted": a["accepted"],
        "used": a["used"],
    }
    return given, answer


def _story(pr: Problem, t: Text, s: Text) -> tuple[dict[str, Any], dict[str, Any]]:
    answer = {f"{part}_{k}": v for part in ("own", "fresh") for k, v in pr.answer[part].items()}
    return dict(pr.given), answer


VALUES: dict[str, Callable[[Problem, Text, Text], tuple[dict[str, Any], dict[str, Any]]]] = {
    "sampling": _sampling,
    "decompose": _decompose,
    "tokens": _tokens,
    "speedup": _plain,
    "block": _block,
    "story": _story,
}


def problem_values(pr: Problem, s: Text) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a problem's text and its key may name: (given values, given and answer values)."""
    given, answer = VALUES[pr.topic](pr, s[pr.topic], s)
    return given, given | answer


def render(sheet: Sheet, s: Text, names: Mapping[str, str], part: Part = "sheet") -> str:
    """The sheet, its key, or both (key after the problems) as Markdown.

    `s` is the ``[sheet]`` table of the page's strings, `names` the topics' display names.
    """
    blocks: list[str] = []
    if part in ("sheet", "both"):
        blocks += [f"# {fill(s['title'], {'seed': sheet.seed})}", s["intro"]]
        for n, pr in enumerate(sheet.problems, start=1):
            given, _ = problem_values(pr, s)
            blocks += [
                f"## {fill(s['problem'], {'n': n, 'name': names[pr.topic]})}",
                fill(s[pr.topic]["text"], given),
            ]
    if part in ("key", "both"):
        blocks.append(f"# {fill(s['key_title'], {'seed': sheet.seed})}")
        for n, pr in enumerate(sheet.problems, start=1):
            _, values = problem_values(pr, s)
            blocks += [
                f"## {fill(s['answer'], {'n': n, 'name': names[pr.topic]})}",
                fill(s[pr.topic]["key"], values),
            ]
    return "\n\n".join(blocks) + "\n"
