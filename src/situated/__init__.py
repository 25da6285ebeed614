"""situated: language models that plan and act for robots, grounded in what the agent can do and see."""

__version__ = "0.1.0"
