"""VirtualHome-format household scenes: our own evolving-graph engine."""

from .conditions import class_conditions
from .env import HouseholdEnv
from .graph import SceneGraph
from .grounding import Grounder
from .script import InstanceCall, ScriptStep, parse_script, parse_script_line

__all__ = [
    "Grounder",
    "HouseholdEnv",
    "InstanceCall",
    "SceneGraph",
    "ScriptStep",
    "class_conditions",
    "parse_script",
    "parse_script_line",
]
