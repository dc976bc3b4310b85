"""One Chinese term per concept: lessons/zh/glossary.toml names each concept's zh term and the
variants that must not come back; every lesson text and UI string of lessons/zh is checked."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from pages.common.i18n import LESSONS

GLOSSARY_PATH = LESSONS / "zh" / "glossary.toml"
GLOSSARY = tomllib.loads(GLOSSARY_PATH.read_text("utf-8"))

#: What a learner does not read as Chinese prose: code (spans and fenced blocks other than the
#: ```text pseudocode), URLs and link targets, format placeholders, HTML comments, and titles in
#: quotes or italics written wholly in ASCII (a paper's "Prompt Lookup Decoding").
_NOT_PROSE = [
    re.compile(r"```(?!text\n).*?```", re.S),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"<!--.*?-->", re.S),
    re.compile(r"https?://\S+"),
    re.compile(r"\]\([^)\s]*\)"),
    re.compile(r"\{[A-Za-z_][\w.]*(?::[^{}]*)?\}"),
    re.compile(r"“[\x20-\x7e]+”|\"[\x20-\x7e]+\""),
    re.compile(r"\*[A-Z][\x20-\x7e]*?[ :][\x20-\x7e]*?\*"),
]


def prose(text: str) -> str:
    """`text` with what is not prose blanked out (see _NOT_PROSE)."""
    for pattern in _NOT_PROSE:
        text = pattern.sub(" ", text)
    return text


def _strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


def zh_texts(folder: Path = LESSONS / "zh") -> dict[str, str]:
    """Page → its prose: the .md lesson text, and every string value (never a key) of its .toml."""
    texts: dict[str, list[str]] = {}
    for path in sorted(folder.iterdir()):
        if path.name == GLOSSARY_PATH.name:
            continue
        if path.suffix == ".md":
            texts.setdefault(path.stem, []).append(path.read_text("utf-8"))
        elif path.suffix == ".toml":
            texts.setdefault(path.stem, []).extend(_strings(tomllib.loads(path.read_text("utf-8"))))
    return {page: prose("\n".join(parts)) for page, parts in texts.items()}


def variant_pattern(variant: str) -> re.Pattern[str]:
    """An ASCII variant matches as a whole word (any case, plural too: `head` finds "Heads" but not
    `assets/head/`, `head_chat` or "ahead"); a Chinese one matches anywhere. A word ends at any
    character that is no ASCII letter, digit, `_`, `/`, `.` (before it) or `-`: a Chinese
    character beside it, as in "prompt在", ends it too (`\\w` would count it as part of the word)."""
    if variant.isascii():
        words = r"\s+".join(re.escape(w) for w in variant.split())
        return re.compile(rf"(?<![A-Za-z0-9_/.\-]){words}(?:e?s)?(?![A-Za-z0-9_/\-])", re.I)
    return re.compile(re.escape(variant))


def _entries() -> list[dict]:
    return GLOSSARY["term"] + GLOSSARY["english"]


def find_variants(entry: dict, texts: dict[str, str]) -> dict[str, list[str]]:
    """Page → the variants of `entry` it uses (with some context), outside the phrases `allow` keeps."""
    found: dict[str, list[str]] = {}
    for page, text in texts.items():
        if entry.get("pages") and page not in entry["pages"]:
            continue
        for phrase in entry.get("allow", []):
            text = text.replace(phrase, " ")
        for variant in entry.get("avoid", []):
            for m in variant_pattern(variant).finditer(text):
                found.setdefault(page, []).append(text[max(0, m.start() - 12) : m.end() + 12])
    return found


def _id(entry: dict) -> str:
    return entry.get("en") or entry["term"]


def test_the_glossary_is_well_formed():
    terms = GLOSSARY["term"]
    assert len(terms) >= 20 and len(GLOSSARY["english"]) >= 5
    for entry in terms:
        assert entry["en"].strip() and entry["zh"].strip(), entry
        assert entry.get("avoid") or entry.get("note"), f"{entry['en']}: no variant, and no note why"
        assert not find_variants(entry, {"glossary": entry["zh"]}), f"{entry['en']}: its term is a variant"
    for entry in GLOSSARY["english"]:
        assert entry["term"].strip() and entry["why"].strip(), entry
    zh = [entry["zh"] for entry in terms]
    assert len(set(zh)) == len(zh), "one concept per zh term"
    pages = {p.stem for p in (LESSONS / "zh").iterdir() if p.suffix in (".md", ".toml")}
    assert all(set(entry.get("pages", [])) <= pages for entry in _entries())


@pytest.mark.parametrize("entry", _entries(), ids=_id)
def test_no_variant_of_a_glossary_term_in_the_zh_course(entry):
    found = find_variants(entry, zh_texts())
    assert not found, f"write {entry.get('zh') or entry['term']!r}: {found}"


@pytest.mark.parametrize("entry", GLOSSARY["term"], ids=_id)
def test_every_glossary_term_is_used(entry):
    texts = zh_texts()
    assert any(entry["zh"] in t for t in texts.values()), f"{entry['zh']} ({entry['en']}) is never used"


@pytest.mark.parametrize("entry", GLOSSARY["english"], ids=_id)
def test_every_term_kept_in_english_is_used(entry):
    texts = zh_texts()
    assert any(variant_pattern(entry["term"]).search(t) for t in texts.values()), entry["term"]


def test_the_check_catches_a_variant_in_lesson_text_and_in_a_ui_string(tmp_path):
    """A variant that comes back fails, in a .md as in a .toml value, and what is not prose does not."""
    draft, head, prompt = (
        next(e for e in GLOSSARY["term"] if e["zh"] == zh) for zh in ("草稿", "草稿头", "提示词")
    )
    (tmp_path / "page.md").write_text("一个 Draft 提出 γ 个 token，由 `draft_cost` 算成本。\n", "utf-8")
    (tmp_path / "page.toml").write_text('head_line = "训练好的 head：{head}"\n', "utf-8")
    texts = zh_texts(tmp_path)
    assert [[c.strip()[:8] for c in v] for v in find_variants(draft, texts).values()] == [["一个 Draft"]]
    assert list(find_variants(head, texts)) == ["page"]
    (tmp_path / "page.toml").write_text('prompt = "提示词"\nerror = "{prompt} 太长"\n', "utf-8")
    assert not find_variants(prompt, zh_texts(tmp_path))
    (tmp_path / "other.md").write_text("Saxena，“Prompt Lookup Decoding”；见 `assets/head/`。\n", "utf-8")
    assert not find_variants(prompt, zh_texts(tmp_path)) and not find_variants(head, zh_texts(tmp_path))
    (tmp_path / "other.md").write_text("在聊天提示上，prompt 很短。\n", "utf-8")
    assert sorted(len(v) for v in find_variants(prompt, zh_texts(tmp_path)).values()) == [2]


def test_an_ascii_variant_is_caught_right_beside_chinese_characters(tmp_path):
    """ "prompt在" and "个target随" are English words in Chinese prose, not parts of longer words."""
    pattern = variant_pattern("prompt")
    for text in ("创作类 prompt在高温下", "创作类prompt在", "两个prompts。", "（Prompt）"):
        assert pattern.search(text), text
    for text in ("prompter", "assets/prompt", "prompt_len", "prompt-lookup", "prompt2", ".prompt"):
        assert not pattern.search(text), text
    prompt = next(e for e in GLOSSARY["term"] if e["zh"] == "提示词")
    (tmp_path / "page.md").write_text("创作类 prompt在高温下往往更难猜。\n", "utf-8")
    (tmp_path / "page.toml").write_text('line = "第二个prompt随附"\n', "utf-8")
    assert {page: len(v) for page, v in find_variants(prompt, zh_texts(tmp_path)).items()} == {"page": 2}
    target = next(e for e in GLOSSARY["term"] if e["zh"] == "目标模型")
    (tmp_path / "page.md").write_text(
        "作为第二个target随附，由 Target 模型验证；见 `<target>/x.jsonl`。\n", "utf-8"
    )
    (tmp_path / "page.toml").write_text('line = "大的**目标模型**（target model）：{target}"\n', "utf-8")
    assert {page: len(v) for page, v in find_variants(target, zh_texts(tmp_path)).items()} == {"page": 2}
