"""The prompt set the head is distilled on, and its held-out evaluation split.

Prompts are built from templates (chat, explanation, code, lists, copying, Chinese) filled
with topics. The split is by topic: the training prompts use the topics of ``TRAIN_WAVES``
and the evaluation prompts ``HELD_OUT_TOPICS`` (disjoint lists, checked), so no evaluation prompt
shares its subject with a training prompt. Neither list mentions what bench/speedup.py's
prompts are about (robots, painting, a lighthouse keeper), and ``check_disjoint`` rejects
any training or held-out prompt that contains one of those words, so the benchmark's chat
and copy prompts stay unseen too.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

#: Content words of bench/speedup.py's prompts; no prompt here may contain them.
BENCH_WORDS = ("robot", "paint", "lighthouse", "lantern", "keeper", "spiral")

TRAIN_TOPICS = (
    "volcanoes",
    "the water cycle",
    "black holes",
    "honeybees",
    "the Roman Empire",
    "photosynthesis",
    "climate change",
    "the stock market",
    "vaccines",
    "coral reefs",
    "the printing press",
    "electric cars",
    "the moon landing",
    "sleep",
    "coffee",
    "the internet",
    "earthquakes",
    "friendship",
    "learning a new language",
    "gardening",
    "chess",
    "the human heart",
    "rainbows",
    "dinosaurs",
    "recycling",
    "the French Revolution",
    "machine learning",
    "bread baking",
    "the solar system",
    "democracy",
    "antibiotics",
    "glaciers",
    "jazz music",
    "the Silk Road",
    "public speaking",
    "time management",
    "owls",
    "submarines",
    "the immune system",
    "tea",
    "bicycles",
    "deserts",
    "the Great Wall of China",
    "magnets",
    "mushrooms",
    "rivers",
    "a rainy afternoon",
    "a lost cat",
    "an old library",
    "a mountain village",
    "a night train",
    "a birthday party",
    "a job interview",
    "moving to a new city",
    "a thunderstorm",
    "the ocean",
    "a first day at school",
    "a forgotten letter",
    "a busy kitchen",
    "winter",
)
HELD_OUT_TOPICS = (
    "octopuses",
    "the Industrial Revolution",
    "tornadoes",
    "chocolate",
    "the Olympic Games",
    "penguins",
    "nuclear energy",
    "the Renaissance",
    "wolves",
    "a desert island",
    "a snowy forest",
    "a broken clock",
    "kites",
    "bridges",
    "the piano",
)

CODE_TASKS_TRAIN = (
    "reverses a string",
    "checks whether a number is prime",
    "counts the words in a text",
    "computes the factorial of n",
    "finds the largest number in a list",
    "merges two sorted lists",
    "removes duplicates from a list",
    "converts Celsius to Fahrenheit",
    "computes Fibonacci numbers",
    "checks whether a word is a palindrome",
    "sorts a list with bubble sort",
    "sums the digits of a number",
    "reads a file and prints its lines",
    "counts the vowels in a string",
    "flattens a nested list",
    "computes the average of a list",
    "finds the greatest common divisor",
    "capitalises every word",
)
CODE_TASKS_HELD_OUT = (
    "rotates a list by k places",
    "counts how often each letter appears",
    "checks whether brackets balance",
    "finds the second smallest number",
    "converts a binary string to an integer",
)
LANGUAGES = ("Python", "JavaScript", "C", "Rust", "SQL", "Bash")

ZH_TOPICS_TRAIN = (
    "春节",
    "熊猫",
    "长城",
    "茶",
    "月亮",
    "学习",
    "友谊",
    "秋天",
    "大海",
    "电脑",
    "音乐",
    "家乡",
)
ZH_TOPICS_HELD_OUT = ("饺子", "雪", "图书馆")

#: Wave 2: new subjects, answered after wave 1's prompts.
TRAIN_TOPICS_2 = (
    "volcanic islands",
    "the Amazon rainforest",
    "bees and flowers",
    "the history of money",
    "origami",
    "the Moon's phases",
    "electricity",
    "the printing of books",
    "ancient Egypt",
    "the Vikings",
    "whales",
    "elephants",
    "the northern lights",
    "soap",
    "a picnic by the lake",
    "a school science fair",
    "a power cut in the city",
    "an old photograph",
    "a long bus journey",
    "a market in the morning",
    "a grandmother's recipe",
    "a football match",
    "a camping trip",
    "learning to swim",
    "the first snow of the year",
    "a letter to a future self",
    "a quiet village café",
    "a lost umbrella",
    "a new neighbour",
    "a museum at night",
    "solar panels",
    "wind turbines",
    "the human brain",
    "bones and muscles",
    "healthy breakfasts",
    "the alphabet",
    "maps and compasses",
    "clouds",
    "seasons",
    "ants",
    "butterflies",
    "sharks",
    "the Arctic",
    "the Sahara",
    "trains",
    "airplanes",
    "rockets",
    "satellites",
    "smartphones",
    "video games",
    "board games",
    "libraries",
    "newspapers",
    "podcasts",
    "saving money",
    "kindness",
    "patience",
    "teamwork",
    "curiosity",
    "writing a good essay",
    "preparing for an exam",
    "cooking rice",
    "growing tomatoes",
    "caring for a dog",
    "the speed of light",
    "gravity",
    "atoms",
    "DNA",
)
CODE_TASKS_TRAIN_2 = (
    "counts the lines of a file",
    "checks whether a year is a leap year",
    "converts a number to Roman numerals",
    "finds the median of a list",
    "returns the unique words of a sentence",
    "computes the power of a number",
    "checks whether two words are anagrams",
    "prints a multiplication table",
    "computes the sum of a list",
    "finds the index of an item in a list",
)
ZH_TOPICS_TRAIN_2 = ("中秋节", "自行车", "下雨天", "老师", "公园", "早餐", "黄河", "星星", "书法", "运动")

#: The training split's waves, answered in this order: (topics, code tasks, Chinese topics).
TRAIN_WAVES = (
    (TRAIN_TOPICS, CODE_TASKS_TRAIN, ZH_TOPICS_TRAIN),
    (TRAIN_TOPICS_2, CODE_TASKS_TRAIN_2, ZH_TOPICS_TRAIN_2),
)
ALL_TRAIN_TOPICS = tuple(topic for topics, _, _ in TRAIN_WAVES for topic in topics)

TEMPLATES = {
    "chat": (
        "Write a short story about {t}.",
        "Tell me something interesting about {t}.",
        "Write a poem about {t}.",
        "What do you think about {t}?",
        "Describe {t} to a child.",
        "Write a diary entry about {t}.",
        "Give me some advice related to {t}.",
        "Write a short dialogue between two friends about {t}.",
    ),
    "explain": (
        "Explain {t} in simple terms.",
        "What is the history of {t}?",
        "Why is {t} important?",
        "How does {t} work?",
        "What are the main facts everyone should know about {t}?",
        "Explain {t} to a high school student.",
    ),
    "list": (
        "List five facts about {t}.",
        "Give me a numbered list of ten words related to {t}.",
        "List the pros and cons of {t}.",
        "Make a bullet list of questions a student might ask about {t}.",
        "List three books or films about {t} and say why.",
    ),
    "copy": (
        "Repeat the following sentence exactly: {s}",
        "Summarise this text in one sentence: {s}",
        "Rewrite this text in a more formal tone: {s}",
        "Translate into French: {s}",
        "Correct the grammar of this text and repeat it: {s}",
    ),
    "code": (
        "Write a {lang} function that {task}.",
        "Show me {lang} code that {task}, with comments.",
        "Explain how to write a program that {task} in {lang}.",
    ),
    "zh": (
        "请写一段关于{z}的短文。",
        "用简单的话介绍一下{z}。",
        "写一首关于{z}的小诗。",
        "列出关于{z}的五个事实。",
        "请用中文回答：你对{z}有什么看法？",
    ),
}

SENTENCE_PARTS = (
    (
        "The morning market",
        "Our small team",
        "The old bridge",
        "Every student",
        "The city council",
        "My grandmother",
    ),
    ("opened early", "worked late", "needed repairs", "read the notes", "voted on the plan", "told a story"),
    (
        "because of the festival.",
        "to finish the report.",
        "after the storm last week.",
        "before the exam began.",
        "despite the heavy rain.",
        "about her childhood by the river.",
    ),
)


@dataclass(frozen=True)
class Prompt:
    """One user message with its kind (chat, explain, list, copy, code, zh) and split."""

    text: str
    kind: str
    split: str


def _sentences(rng: random.Random, topic: str) -> str:
    parts = [" ".join(rng.choice(p) for p in SENTENCE_PARTS) for _ in range(rng.randint(2, 4))]
    return " ".join(parts) + f" Later, everyone talked about {topic}."


def build(split: str, seed: int = 0) -> list[Prompt]:
    """All prompts of a split ("train" or "held_out"), shuffled with ``seed``; checked disjoint.

    The training split comes in waves (``TRAIN_WAVES``), each shuffled on its own and
    appended after the ones before, so a later wave never reorders the prompts (and the
    generated shards) of an earlier one.
    """
    if split not in ("train", "held_out"):
        raise ValueError(f"split must be 'train' or 'held_out', not {split!r}")
    waves = TRAIN_WAVES if split == "train" else ((HELD_OUT_TOPICS, CODE_TASKS_HELD_OUT, ZH_TOPICS_HELD_OUT),)
    out: list[Prompt] = []
    for number, (topics, tasks, zh) in enumerate(waves, start=1):
        rng = random.Random(f"{split}-{seed}" if number == 1 else f"{split}-{seed}-wave{number}")
        out += _wave(split, topics, tasks, zh, rng)
    check_disjoint(out)
    return out


def _wave(
    split: str, topics: tuple[str, ...], tasks: tuple[str, ...], zh: tuple[str, ...], rng: random.Random
) -> list[Prompt]:
    out: list[Prompt] = []
    for kind in ("chat", "explain", "list"):
        out += [Prompt(tpl.format(t=t), kind, split) for tpl in TEMPLATES[kind] for t in topics]
    out += [
        Prompt(tpl.format(s=_sentences(rng, t)), "copy", split) for tpl in TEMPLATES["copy"] for t in topics
    ]
    out += [
        Prompt(tpl.format(lang=lang, task=task), "code", split)
        for tpl in TEMPLATES["code"]
        for lang in LANGUAGES
        for task in tasks
    ]
    out += [Prompt(tpl.format(z=z), "zh", split) for tpl in TEMPLATES["zh"] for z in zh]
    rng.shuffle(out)
    return out


def check_disjoint(prompts: list[Prompt]) -> None:
    """Raise ValueError if a prompt mentions the benchmark's subjects or the other split's topics."""
    for p in prompts:
        low = p.text.lower()
        if any(w in low for w in BENCH_WORDS):
            raise ValueError(f"prompt mentions a benchmark subject: {p.text!r}")
        other = (
            HELD_OUT_TOPICS + CODE_TASKS_HELD_OUT + ZH_TOPICS_HELD_OUT
            if p.split == "train"
            else tuple(item for wave in TRAIN_WAVES for part in wave for item in part)
        )
        if any(re.search(rf"\b{re.escape(t.lower())}\b", low) for t in other):
            raise ValueError(f"{p.split} prompt uses a topic of the other split: {p.text!r}")
    if set(ALL_TRAIN_TOPICS) & set(HELD_OUT_TOPICS):
        raise ValueError("train and held-out topics overlap")
