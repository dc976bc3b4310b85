"""A race with a tree shape races every draft twice: as a chain and as that tree."""

from specdec_core.live.race import BASELINE, TREE_SUFFIX, Race, RaceSettings
from specdec_core.models import MarkovChainLM

TARGET = MarkovChainLM.random(8, seed=1, concentration=0.5)
DRAFT = TARGET.blend(MarkovChainLM.random(8, seed=2), 0.4)


def test_tree_variants_run_beside_the_chains():
    race = Race(
        TARGET, [("toy_draft", DRAFT)], [0], RaceSettings(tree=(2, 2), max_new_tokens=24, temperature=0.0)
    )
    for _ in race:
        pass
    assert race.keys == [BASELINE, "toy_draft", "toy_draft" + TREE_SUFFIX]
    chain, tree = race.records["toy_draft"], race.records["toy_draft" + TREE_SUFFIX]
    assert all(e.tree is None for e in chain.events) and all(e.tree is not None for e in tree.events)
    text = [t for e in race.records[BASELINE].events for t in e.committed]
    assert (
        [t for e in chain.events for t in e.committed]
        == text
        == [t for e in tree.events for t in e.committed]
    )
    plain = Race(TARGET, [("toy_draft", DRAFT)], [0], RaceSettings(max_new_tokens=8))
    assert plain.keys == [BASELINE, "toy_draft"]


def test_the_race_page_lists_each_tree_variant_beside_its_chain():
    from support.apptest import open_page, rerun

    at = open_page("race", state={"race_target": "toy", "race_max": 30, "race_t": 0.0, "race_shape": "2-2"})
    at.button(key="race_run").click()
    rerun(at)
    result = at.session_state["race_results"]["copy"]
    assert [r.key for r in result.rows] == ["toy_draft", "toy_draft~tree", "ngram", "ngram~tree"]
    assert list(at.dataframe[0].value["draft"]) == [
        "toy draft",
        "toy draft · tree 2-2",
        "n-gram",
        "n-gram · tree 2-2",
    ]
    assert all(r.same_text for r in result.rows)
