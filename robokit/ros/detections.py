"""Detection messages → pixel boxes: vision_msgs Detection2DArray and Foxglove ImageAnnotations.

Detection2DArray (ROS 2 vision_msgs ≥ 3, and the ROS 1 / Foxy layout with `center.x` and `results[].id`):
each detection's best-scoring hypothesis gives the label and confidence; a rotated box becomes its
axis-aligned bounding rectangle. ImageAnnotations carry no labels: every LINE_LOOP points annotation
(the usual box outline) and every circle becomes a box, labelled with the text annotation nearest to
its top-left corner (Foxglove's convention for captions), or "" when there is no text.
"""

from __future__ import annotations

import math
from typing import Any

from robokit.ros.fields import first_attr
from robokit.timeline.detections import Box

LINE_LOOP = 2  # foxglove.PointsAnnotation.Type


def detection2d_boxes(msg: Any) -> list[Box]:
    """The boxes of a vision_msgs Detection2DArray."""
    boxes = []
    for det in msg.detections:
        bbox = det.bbox
        center = getattr(bbox.center, "position", bbox.center)
        theta = float(getattr(bbox.center, "theta", 0.0) or 0.0)
        w, h = float(bbox.size_x), float(bbox.size_y)
        half_w = 0.5 * (abs(math.cos(theta)) * w + abs(math.sin(theta)) * h)
        half_h = 0.5 * (abs(math.sin(theta)) * w + abs(math.cos(theta)) * h)
        cx, cy = float(center.x), float(center.y)
        label, confidence = _best_hypothesis(det)
        boxes.append(Box(label, cx - half_w, cy - half_h, cx + half_w, cy + half_h, confidence))
    return boxes


def _best_hypothesis(det: Any) -> tuple[str, float | None]:
    best: tuple[str, float | None] = (str(getattr(det, "id", "") or ""), None)
    for result in det.results:
        hyp = getattr(result, "hypothesis", result)
        score = float(hyp.score)
        if best[1] is None or score > best[1]:
            best = (str(first_attr(hyp, "class_id", "id", default="")), score)
    return best


def annotation_boxes(msg: Any) -> list[Box]:
    """The boxes of a Foxglove ImageAnnotations message (pixel coordinates, as Foxglove draws them)."""
    rects: list[tuple[float, float, float, float]] = []
    for points in msg.points:
        if int(points.type) == LINE_LOOP and len(points.points):
            xs = [float(p.x) for p in points.points]
            ys = [float(p.y) for p in points.points]
            rects.append((min(xs), min(ys), max(xs), max(ys)))
    for circle in msg.circles:
        r = 0.5 * float(circle.diameter)
        x, y = float(circle.position.x), float(circle.position.y)
        rects.append((x - r, y - r, x + r, y + r))
    texts = [(float(t.position.x), float(t.position.y), str(t.text)) for t in msg.texts]
    return [Box(_nearest_text(texts, r[0], r[1]), *r) for r in rects]


def _nearest_text(texts: list[tuple[float, float, str]], x: float, y: float) -> str:
    if not texts:
        return ""
    return min(texts, key=lambda t: (t[0] - x) ** 2 + (t[1] - y) ** 2)[2]


def annotation_stamp(msg: Any) -> Any:
    """The time of an ImageAnnotations message: that of its first annotation (the message has none)."""
    for group in (msg.points, msg.circles, msg.texts):
        for item in group:
            return item.timestamp
    return None
