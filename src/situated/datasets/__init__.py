"""Loaders from the original dataset formats to task objects."""
