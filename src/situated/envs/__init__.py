"""Environments the agent acts in. They know nothing of language models or planners."""
