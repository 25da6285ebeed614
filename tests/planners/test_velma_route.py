"""The route agent: gold routes of the real Map2seq/Touchdown data become counted routes that walk them again,
model-written routes are read under a grammar and never run, and a miscounted block still ends somewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import ScriptedLLM, accepts
from situated.datasets.map2seq import NavDataset, load_split
from situated.envs.streets.env import StreetEnv
from situated.errors import DataError, SituatedError
from situated.eval.systems.navigation_episodes import in_partition, navigation_episode, route_examples
from situated.planners.nav_baselines import make_agent
from situated.planners.retrieval import Bm25Retriever, nearest
from situated.planners.velma_route import (
    TASK_LINE,
    Leg,
    RouteAgent,
    parse_route,
    render_route,
    route_example,
    route_grammar,
    turn_words,
)
from situated.planners.velma_words import read_route


@pytest.mark.parametrize("name", ["map2seq_unseen", "touchdown_unseen"])
def test_a_gold_route_written_as_a_route_walks_the_gold_path(velma_data: Path, name: str) -> None:
    """Deriving a route and walking it share one way of counting: every derived route, read back from its
    text, reproduces its gold path (Touchdown: within VELMA's 55-step limit)."""
    data = load_split(velma_data / name, "dev")
    env = StreetEnv(data.graph)
    llm = ScriptedLLM()
    agent = RouteAgent(llm, [], shots=0)
    walked = 0
    for instance in data.instances[:150]:
        route = route_example(data.graph, instance)
        text = render_route(route.legs)
        assert parse_route(text) == route.legs
        assert accepts(route_grammar(), text), text
        llm.answers.append(text)
        episode = navigation_episode(env, agent, instance)
        if len(instance.route) <= 50:
            assert episode.details["pano_path"] == list(instance.route), text
            assert episode.metrics["tc"] == 1.0
            walked += 1
    assert walked > 100
    assert llm.calls and len(llm.calls) == 150  # one model call per episode, none per step


def test_route_lines_read_as_the_directions_say() -> None:
    text = "left at intersection 2\nright 3 steps after the turn\nstop 1 step after intersection 1\n"
    legs = parse_route(text)
    assert legs == (Leg("left", 2, 0), Leg("right", 0, 3), Leg("stop", 1, 1))
    assert render_route(legs) == text
    assert render_route((Leg("stop", 0, 4),)) == "stop 4 steps after the start\n"
    assert parse_route("turn_around at the start\nstop at intersection 1\nleft at intersection 1\n") == (
        Leg("turn_around"), Leg("stop", 1, 0))  # nothing after the stop is read


@pytest.mark.parametrize("text", ["import os\nstop at intersection 1", "left at intersection -1",
                                  "stop at intersection 1; os.system('x')", "walk to the bank"])
def test_anything_but_route_lines_is_refused_with_its_line(text: str) -> None:
    with pytest.raises(DataError, match=r"route line \d+: not a route line"):
        parse_route(text)
    assert not accepts(route_grammar(), text + "\n")


def test_prose_around_a_route_is_passed_over_by_the_agent(dev: NavDataset) -> None:
    """A server model may ignore the grammar: the agent reads the route lines and nothing else."""
    llm = ScriptedLLM(["Sure! Here is the route:\nleft at intersection 1\nprint('hi')\nstop at intersection 1\n"])
    agent = RouteAgent(llm, [], shots=0)
    navigation_episode(StreetEnv(dev.graph), agent, dev.instances[0])
    assert agent.legs == (Leg("left", 1, 0), Leg("stop", 1, 0))


def test_with_word_counts_the_model_writes_only_the_stop_line(seen: NavDataset, dev: NavDataset) -> None:
    """`follow_word_counts`: the grammar fixes each named turn at the intersection the words count to."""
    grammar = route_grammar(turns=("left", "right"), counts=(2, 1))
    assert accepts(grammar, "left at intersection 2\nright at intersection 1\nstop 3 steps after the turn\n")
    assert not accepts(grammar, "left at intersection 1\nright at intersection 1\nstop 3 steps after the turn\n")
    assert not accepts(grammar, "left 2 steps after intersection 2\nright at intersection 1\nstop at intersection 1\n")
    with pytest.raises(ValueError, match="one of 1-59 per turn"):
        route_grammar(turns=("left", "right"), counts=(2,))
    instance = next(i for i in dev.instances if 0 < len(turn_words(i.instruction)) <= 8)
    words = read_route(instance.instruction)[:-1]
    llm = ScriptedLLM(default=render_route(words) + "stop 3 steps after the turn\n")
    agent = RouteAgent(llm, route_examples(seen), shots=2, follow_word_counts=True)
    navigation_episode(StreetEnv(dev.graph), agent, instance)
    assert llm.calls[-1]["grammar"] == route_grammar(turns=[leg.action for leg in words],
                                                     counts=[leg.intersections for leg in words])
    assert agent.legs == (*words, Leg("stop", 0, 3))


def test_the_grammar_allows_only_bounded_routes_that_end_in_a_stop() -> None:
    grammar = route_grammar(max_turns=2)
    assert accepts(grammar, "left at intersection 1\nright at intersection 12\nstop 5 steps after the turn\n")
    assert not accepts(grammar, "left at intersection 1\nright at intersection 1\nleft at intersection 1\n"
                                "stop at intersection 1\n")
    assert not accepts(grammar, "left at intersection 1\n")  # no stop
    assert not accepts(grammar, "stop at intersection 60\n")  # beyond any episode


def test_turn_words_are_the_turns_the_directions_name_not_landmark_sides() -> None:
    assert turn_words("Head straight and take a left at the light. Pass the bank on your right, then make your "
                      "second right. Turn Left onto 5th Avenue and stop.") == ("left", "right", "left")
    assert turn_words("Walk past the church on your left and stop at the corner on the right.") == ()


def test_the_route_agent_can_follow_the_turn_words(seen: NavDataset, dev: NavDataset) -> None:
    """The grammar fixes the named turns in order: the model only says where each happens and where to stop."""
    grammar = route_grammar(turns=("left", "right"))
    assert accepts(grammar, "left at intersection 2\nright at intersection 1\nstop 3 steps after the turn\n")
    assert accepts(grammar, "turn_around at the start\nleft at intersection 1\nright at intersection 1\n"
                            "stop at intersection 1\n")
    for text in ("right at intersection 1\nleft at intersection 1\nstop at intersection 1\n",   # order
                 "left at intersection 1\nstop at intersection 1\n",                              # one missing
                 "left at intersection 1\nright at intersection 1\nleft at intersection 1\nstop at intersection 1\n"):
        assert not accepts(grammar, text), text
    with pytest.raises(ValueError, match="left/right"):
        route_grammar(turns=("left", "up"))
    instance = next(i for i in dev.instances if turn_words(i.instruction))
    plain = next(i for i in dev.instances if not turn_words(i.instruction))
    llm, pool = ScriptedLLM(default="stop at intersection 1\n"), route_examples(seen)
    for follow, expected in ((True, route_grammar(turns=turn_words(instance.instruction))), (False, route_grammar())):
        agent = RouteAgent(llm, pool, shots=2, follow_turn_words=follow)
        navigation_episode(StreetEnv(dev.graph), agent, instance)
        assert llm.calls[-1]["grammar"] == expected
    agent = RouteAgent(llm, pool, shots=2, follow_turn_words=True)
    navigation_episode(StreetEnv(dev.graph), agent, plain)
    assert llm.calls[-1]["grammar"] == route_grammar()   # no turn named: the general grammar


def test_a_miscounted_block_ends_at_the_next_intersection(dev: NavDataset) -> None:
    """A leg is taken once the walk has got that far: "12 steps after intersection 1" on a shorter block is
    taken on arriving at intersection 2 rather than never."""
    instance = dev.instances[0]
    llm = ScriptedLLM(["stop 50 steps after intersection 1\n"])
    episode = navigation_episode(StreetEnv(dev.graph), RouteAgent(llm, [], shots=0), instance)
    observations, actions = episode.details["observations"], episode.details["actions"]
    arrivals = [i for i, text in enumerate(observations) if "intersection" in text and i > 0]
    assert actions[-1] == "stop"
    assert len(actions) == arrivals[1] + 1  # stopped right on arriving at the second intersection


def test_a_route_cut_off_without_a_stop_stops_at_the_next_intersection(dev: NavDataset) -> None:
    llm = ScriptedLLM(["left at intersection 1\n"])
    agent = RouteAgent(llm, [], shots=0)
    navigation_episode(StreetEnv(dev.graph), agent, dev.instances[0])
    assert agent.legs == (Leg("left", 1, 0), Leg("stop", 1, 0))


def test_examples_are_training_area_routes_nearest_last(seen: NavDataset, dev: NavDataset) -> None:
    pool = route_examples(seen)
    by_id = {i.id: i for i in seen.instances}
    assert len(pool) > 500 and all(in_partition(seen.graph, by_id[e.id]) for e in pool)
    llm = ScriptedLLM(default="stop at intersection 1\n")
    agent = make_agent("route", llm=llm, examples=pool, shots=3, retriever=Bm25Retriever())
    instance = dev.instances[0]
    chosen = agent.examples_for(instance)
    navigation_episode(StreetEnv(dev.graph), agent, instance)
    prompt = llm.prompts[0]
    assert prompt.startswith(TASK_LINE + "\n\n")
    assert prompt.endswith(f"Directions: {' '.join(instance.instruction.split())}\nRoute:\n")
    assert [prompt.index(e.instruction) for e in chosen] == sorted(prompt.index(e.instruction) for e in chosen)
    ranked = nearest(Bm25Retriever(), instance.instruction, {e.id: e.instruction for e in pool}, 3)
    assert [e.id for e in chosen] == ranked[::-1]  # the nearest example is the last, next to the task
    for example in chosen:
        assert f"Route:\n{render_route(example.legs)}\n" in prompt
    assert llm.calls[0]["grammar"] == route_grammar()


def test_the_route_agent_needs_a_model_and_examples() -> None:
    with pytest.raises(SituatedError, match="route agent needs"):
        make_agent("route", llm=ScriptedLLM(), examples=())
