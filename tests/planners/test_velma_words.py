"""The words agent: the route read from the directions alone (turns, counted intersections, a stop cue's rule),
walked on the real Map2seq street graph."""

from __future__ import annotations

import pytest

from situated.datasets.map2seq import NavDataset
from situated.envs.streets.env import StreetEnv
from situated.eval.systems.navigation_episodes import in_partition, navigation_episode
from situated.planners.direction_words import turn_counts
from situated.planners.nav_baselines import make_agent
from situated.planners.velma_route import route_example
from situated.planners.velma_words import STOP_RULES, WordsAgent, read_route, stop_cue


@pytest.mark.parametrize(("directions", "counts"), [
    ("Turn left at the light.", (1,)),
    ("Turn right at the third light.", (3,)),
    ("Walk through two lights and turn left at the next one.", (3,)),
    ("Go past the 1st light. At the 2nd light, turn right.", (2,)),
    ("Take a right. Go through the next intersection, then make a left at the one after.", (1, 2)),
    ("Go straight through a couple of lights and take a left.", (3,)),
    ("Go two blocks and turn right.", (2,)),
    ("Turn left, then turn right.", (1, 1)),
])
def test_each_named_turn_is_taken_after_the_lights_the_directions_pass(directions: str,
                                                                        counts: tuple[int, ...]) -> None:
    assert turn_counts(directions) == counts


def test_a_route_without_named_turns_is_only_its_stop_line() -> None:
    assert read_route("Go straight and stop halfway down the block.") == (STOP_RULES["halfway"],)
    assert read_route("Walk ahead past the bank and stop.") == (STOP_RULES["none"],)


@pytest.mark.parametrize(("directions", "cue"), [
    ("Turn left and stop halfway down the block.", "halfway"),
    ("Turn right, go a couple of steps and stop.", "steps after turning"),
    ("Turn right. If you reach the park you have gone too far.", "too far"),
    ("Turn left and stop near the end of the block.", "end of the block"),
    ("Turn left and stop at Starbucks.", "none"),
])
def test_the_stop_line_follows_the_directions_stop_cue(directions: str, cue: str) -> None:
    assert stop_cue(directions) == cue
    assert read_route(directions)[-1] == STOP_RULES[cue]


def test_the_route_read_from_the_words_is_walked_like_a_written_one(seen: NavDataset) -> None:
    """On training-area routes whose words give exactly the gold route, the words agent walks the gold path and
    completes it; where its reading differs, it does not (so TC measures the reading, not the walker)."""
    env = StreetEnv(seen.graph)
    same = differ = 0
    for instance in [i for i in seen.instances if in_partition(seen.graph, i)]:
        gold = route_example(seen.graph, instance).legs
        episode = navigation_episode(env, make_agent("words"), instance)
        if read_route(instance.instruction) == gold:
            assert episode.details["pano_path"] == list(instance.route)
            assert episode.metrics["tc"] == 1.0
            same += 1
        elif read_route(instance.instruction)[:-1] != gold[:-1]:
            differ += episode.metrics["tc"] == 0.0
    assert same >= 20 and differ >= 20


def test_the_words_agent_asks_no_model_and_shows_its_route(seen: NavDataset) -> None:
    instance = next(i for i in seen.instances if i.instruction.startswith("Head past the 1st light. At the 2nd light"))
    agent = WordsAgent()
    navigation_episode(StreetEnv(seen.graph), agent, instance)
    assert agent.usage.calls == 0
    assert agent.route_text.startswith("left at intersection 2\n") and agent.route_text.count("stop") == 1
