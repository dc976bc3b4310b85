"""bench/fragment_reruns.py: AppTest runs scoped to a control's fragment, as the server runs them."""

from bench.fragment_reruns import fragment_reruns
from support.apptest import open_page, shared_link


def _first_run_fragments(scope):
    return [e["fragment_ids_this_run"] for e in scope.runner.event_data if "fragment_ids_this_run" in e]


def test_a_scoped_rerun_runs_the_controls_fragment_alone_and_redraws_its_figures():
    with fragment_reruns() as scope:
        at = open_page("overlap")
        whole_page = len(scope.runner.forward_msgs())
        scope.fragment_id = scope.fragment_of("ov_preset")
        at.selectbox(key="ov_preset").set_value("random")
        at.run()
        assert not at.exception
        assert _first_run_fragments(scope) == [[scope.fragment_id]]
        assert at.selectbox(key="ov_preset").value == "random"
        assert scope.plotly_charts() >= 4
        # the quiz sits below the fragment: a scoped run sends none of its radios
        assert len(at.radio) < 9 and len(scope.runner.forward_msgs()) < whole_page
        scope.fragment_id = None
        at.run()
        assert _first_run_fragments(scope) == [None] and len(at.radio) >= 9


def test_a_widget_outside_every_fragment_is_refused():
    with fragment_reruns() as scope:
        open_page("overlap")
        try:
            scope.fragment_of("no_such_widget")
        except LookupError:
            return
    raise AssertionError("fragment_of found a widget that is not there")


def test_the_monte_carlo_runs_in_a_fragment_of_its_own_and_its_link_carries_its_settings():
    with fragment_reruns() as scope:
        at = open_page("overlap", query={"ov_n": "100000", "ov_mc_seed": "3"})
        lesson, monte_carlo = scope.fragment_of("ov_preset"), scope.fragment_of("ov_mc_run")
        assert monte_carlo != lesson
        scope.fragment_id = monte_carlo
        at.number_input(key="ov_mc_seed").set_value(5)
        at.run()
        at.button(key="ov_mc_run").click()
        at.run()
        assert not at.exception
        assert _first_run_fragments(scope) == [[monte_carlo]]
        assert scope.plotly_charts() == 1  # the trials' chart alone: the lesson's are not redrawn
        assert any(m.label == "p-value" and float(m.value) > 1e-3 for m in at.metric)
        assert at.query_params["ov_mc_seed"] == "3"  # the address moves only when a link is asked for
        scope.fragment_id = None  # a whole run again: the sidebar's link button is drawn
        at.run()
        assert shared_link(at)["ov_mc_seed"] == "5"
