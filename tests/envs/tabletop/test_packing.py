"""Where the next item goes in a container: long items are long, the first item leaves room, later ones keep clear."""

from __future__ import annotations

import math

import numpy as np

from situated.envs.tabletop.catalogue import CATALOGUE, ContainerShape
from situated.envs.tabletop.packing import Content, discs, free_spot, gaps


def _shape(name: str) -> ContainerShape:
    shape = CATALOGUE[name].container
    assert shape is not None
    return shape


def _inside(spot: np.ndarray, what: str) -> Content:
    d = discs(CATALOGUE[what].footprint, 0.0)
    return Content(spot + d.centres, d.radius, 0.1)


def test_a_long_item_is_covered_by_a_row_of_thin_discs_along_its_long_axis() -> None:
    banana = discs(CATALOGUE["banana"].footprint, math.pi / 2)
    assert math.isclose(banana.radius, 0.018)
    assert math.isclose(banana.extent(1), 0.075, abs_tol=1e-9) and banana.extent(0) < 0.02
    apple = discs(CATALOGUE["apple"].footprint, 0.3)
    assert len(apple.centres) == 1 and math.isclose(apple.radius, 0.032)


def test_the_first_item_leaves_room_and_the_second_keeps_clear_of_it() -> None:
    box = _shape("box")
    can, bottle = discs(CATALOGUE["soup_can"].footprint, 0.0), discs(CATALOGUE["bottle"].footprint, 0.0)
    first, below = free_spot(box, can, [], nearer=np.array([-1.0, 0.0]))
    assert first[0] < -0.02 and below == -math.inf      # off the middle, toward the arm's base
    second, below = free_spot(box, bottle, [_inside(first, "soup_can")])
    assert second[0] > 0.02 and below == -math.inf      # on the other side, clear of the can
    assert gaps(bottle, second[None, :], _inside(first, "soup_can"))[0] >= 0


def test_with_no_clear_spot_the_item_lands_on_what_is_there_and_says_how_high() -> None:
    bowl = _shape("bowl")
    banana = discs(CATALOGUE["banana"].footprint, 0.0)
    _, below = free_spot(bowl, banana, [_inside(np.zeros(2), "apple")])
    assert below == 0.1   # the banana fills the bowl's width: it rests on the apple, and the drop starts above it
