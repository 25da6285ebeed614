"""VirtualHome-format household scenes: our own evolving-graph engine."""
