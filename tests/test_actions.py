"""The ActionSpace renders the agent's API for planners and grows when taught."""

import pytest

from situated.actions import PROGPROMPT_SPACE, VIRTUALHOME_SPACE, Behaviour, Param
from situated.errors import UnknownActionError

PAPER_IMPORT_LINE = (
    "from actions import turnright, turnleft, walkforward, walktowards <obj>, walk <obj>, run <obj>, grab <obj>, "
    "switchon <obj>, switchoff <obj>, open <obj>, close <obj>, lookat <obj>, sit <obj>, standup, find <obj>, "
    "turnto <obj>, drink <obj>, pointat <obj>, watch <obj>, putin <obj> <obj>, putback <obj> <obj>"
)


def test_progprompt_import_line_is_the_papers():
    assert PROGPROMPT_SPACE.import_line() == PAPER_IMPORT_LINE


def test_virtualhome_space_extends_progprompt_with_the_other_script_actions():
    assert set(PROGPROMPT_SPACE.names) < set(VIRTUALHOME_SPACE.names)
    assert VIRTUALHOME_SPACE.get("pour").arity == 2 and VIRTUALHOME_SPACE.get("wipe").arity == 1
    with pytest.raises(UnknownActionError, match="fly"):
        VIRTUALHOME_SPACE.get("fly")


def test_tool_schemas_constrain_objects_to_the_vocabulary():
    space = PROGPROMPT_SPACE.with_objects(["salmon", "microwave", "salmon"])
    assert space.objects == ("salmon", "microwave")
    putin = next(t for t in space.tool_schemas() if t["function"]["name"] == "putin")
    params = putin["function"]["parameters"]
    assert params["required"] == ["obj", "container"]
    assert params["properties"]["container"]["enum"] == ["salmon", "microwave"]


def test_teaching_a_behaviour_returns_a_grown_space_and_leaves_the_old_one():
    pack = Behaviour("pack", (Param("obj"),), "Put an object in the gift bag.", body="grab(obj)\nputin(obj, 'bag')")
    grown = PROGPROMPT_SPACE.with_action(pack)
    assert "pack" in grown and "pack" not in PROGPROMPT_SPACE
    assert grown.import_line().endswith("pack <obj>")
    with pytest.raises(ValueError, match="duplicate"):
        type(grown)((*grown.actions, pack))
