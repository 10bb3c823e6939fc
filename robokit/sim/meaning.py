"""The action meaning a robokit writer stored in a dataset, read back for replay: it reads every format's
metadata, so it sits above the formats (the shared converter modules they import must not import them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from robokit.converters.actions import ActionMeaning
from robokit.converters.rlds.layout import METADATA
from robokit.converters.rlds.reader import version_dirs


def read_meaning(dataset: Path) -> ActionMeaning | None:
    """The action meaning a robokit writer stored in `dataset` (a LeRobot root, RLDS or WebDataset folder)."""
    candidates: list[tuple[Path, tuple[str, ...]]] = [
        (dataset / "meta" / "info.json", ("features", "action", "info")),
        (dataset / "meta" / "info.json", ("features", "actions", "info")),  # a source's key kept by the writer
        (dataset / "dataset.json", ("keys", "action.npy", "meaning")),
        (dataset / "dataset.json", ("keys", "steps.npz", "arrays", "action", "meaning")),
    ]
    if dataset.is_dir():
        candidates += [(root / METADATA, ("action",)) for root in version_dirs(dataset)]
    for path, keys in candidates:
        try:
            node: Any = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        found = ActionMeaning.from_dict(node)
        if found is not None:
            return found
    return None
