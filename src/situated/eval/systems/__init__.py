"""One `System` per system (household, navigation, tabletop, eai) and each system's episodes, metrics and
published rows; `registry.SYSTEMS` holds them by name. Reports and commands ask a `System` instead of comparing
system names."""
