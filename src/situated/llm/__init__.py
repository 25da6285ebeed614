"""Language-model backends; this package knows nothing of robots."""
