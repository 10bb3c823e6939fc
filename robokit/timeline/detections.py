"""Object detections on the timeline: an EventStream `<camera>/detections` whose values are JSON boxes.

Each event is one detector output for one image: a JSON list of boxes in pixels of that camera's images
(`x_min`, `y_min`, `x_max`, `y_max`, origin top-left), with a label and an optional confidence. Readers of
ROS/Foxglove detections and of Viam datasets produce it; writers with annotation fields consume it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

DETECTIONS_FIELD = "detections"


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in pixels, with its label and the detector's confidence when known."""

    label: str
    x_min: float
    y_min: float
    x_max: float
    y_max: float
    confidence: float | None = None


def detection_channel(camera: str) -> str:
    """`front` → `front/detections`."""
    return f"{camera}/{DETECTIONS_FIELD}"


def is_detection_channel(name: str) -> bool:
    return name.rpartition("/")[2] == DETECTIONS_FIELD and "/" in name


def encode_boxes(boxes: list[Box]) -> str:
    """The event value for `boxes`."""
    return json.dumps([asdict(b) for b in boxes])


def decode_boxes(value: str) -> list[Box]:
    """Boxes of one event value; ValueError when it is not a JSON list of boxes."""
    data = json.loads(value)
    if not isinstance(data, list):
        raise ValueError(f"detections must be a JSON list of boxes, got {type(data).__name__}")
    return [Box(str(d["label"]), float(d["x_min"]), float(d["y_min"]), float(d["x_max"]), float(d["y_max"]),
                None if d.get("confidence") is None else float(d["confidence"])) for d in data]
