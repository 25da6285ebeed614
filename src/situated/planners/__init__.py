"""Planners: turn (task, observation, action space) into a prompt and parse the answer."""
