"""Detections (vision_msgs Detection2DArray, Foxglove ImageAnnotations) → `<camera>/detections` events."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace as NS
from typing import Any

import numpy as np
import pytest
from foxglove_schemas_protobuf.CircleAnnotation_pb2 import CircleAnnotation
from foxglove_schemas_protobuf.ImageAnnotations_pb2 import ImageAnnotations
from foxglove_schemas_protobuf.PointsAnnotation_pb2 import PointsAnnotation
from foxglove_schemas_protobuf.TextAnnotation_pb2 import TextAnnotation
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.ros.builders import builder_for
from robokit.ros.detections import annotation_boxes, detection2d_boxes
from robokit.timeline import EventStream
from robokit.timeline.detections import Box, decode_boxes

VISION_MSGS = {  # vision_msgs 4 (ROS 2 Humble and later)
    "vision_msgs/msg/Point2D": "float64 x\nfloat64 y",
    "vision_msgs/msg/Pose2D": "vision_msgs/Point2D position\nfloat64 theta",
    "vision_msgs/msg/BoundingBox2D": "vision_msgs/Pose2D center\nfloat64 size_x\nfloat64 size_y",
    "vision_msgs/msg/ObjectHypothesis": "string class_id\nfloat64 score",
    "vision_msgs/msg/ObjectHypothesisWithPose": "vision_msgs/ObjectHypothesis hypothesis\n"
                                                "geometry_msgs/PoseWithCovariance pose",
    "vision_msgs/msg/Detection2D": "std_msgs/Header header\nvision_msgs/ObjectHypothesisWithPose[] results\n"
                                   "vision_msgs/BoundingBox2D bbox\nstring id",
    "vision_msgs/msg/Detection2DArray": "std_msgs/Header header\nvision_msgs/Detection2D[] detections",
}


def ros2_detection(cx: float, cy: float, w: float, h: float, hyps: list[tuple[str, float]], theta: float = 0.0) -> NS:
    center = NS(position=NS(x=cx, y=cy), theta=theta)
    results = [NS(hypothesis=NS(class_id=c, score=s)) for c, s in hyps]
    return NS(bbox=NS(center=center, size_x=w, size_y=h), results=results, id="")


def test_detection2d_boxes() -> None:
    msg = NS(detections=[ros2_detection(10, 20, 4, 6, [("cup", 0.2), ("mug", 0.9)]), ros2_detection(0, 0, 2, 2, [])])
    assert detection2d_boxes(msg) == [Box("mug", 8, 17, 12, 23, 0.9), Box("", -1, -1, 1, 1, None)]
    rotated = detection2d_boxes(NS(detections=[ros2_detection(0, 0, 4, 2, [("a", 1.0)], theta=math.pi / 2)]))[0]
    assert (rotated.x_min, rotated.y_max) == pytest.approx((-1.0, 2.0))
    ros1 = NS(bbox=NS(center=NS(x=5.0, y=5.0, theta=0.0), size_x=2.0, size_y=4.0), results=[NS(id=7, score=0.5)])
    assert detection2d_boxes(NS(detections=[ros1])) == [Box("7", 4, 3, 6, 7, 0.5)]


def test_annotation_boxes() -> None:
    msg = ImageAnnotations()
    square = msg.points.add(type=PointsAnnotation.LINE_LOOP)
    for x, y in ((1, 2), (9, 2), (9, 6), (1, 6)):
        square.points.add(x=x, y=y)
    msg.points.add(type=PointsAnnotation.POINTS).points.add(x=3, y=3)  # markers, not a box
    msg.circles.append(CircleAnnotation(diameter=4))
    msg.circles[0].position.x, msg.circles[0].position.y = 20, 10
    msg.texts.append(TextAnnotation(text="cube"))
    msg.texts[0].position.x, msg.texts[0].position.y = 1, 1
    msg.texts.append(TextAnnotation(text="ball"))
    msg.texts[1].position.x, msg.texts[1].position.y = 18, 7
    assert annotation_boxes(msg) == [Box("cube", 1, 2, 9, 6), Box("ball", 18, 8, 22, 12)]


def test_builder_names_the_camera_channel() -> None:
    builder = builder_for("/camera/front/detections", "vision_msgs/msg/Detection2DArray")
    assert builder is not None
    stamp = NS(sec=3, nanosec=5)
    builder.add(NS(header=NS(stamp=stamp), detections=[ros2_detection(4, 4, 2, 2, [("x", 1.0)])]), 9, 0)
    (stream,) = builder.build()
    assert isinstance(stream, EventStream) and stream.name == "front/detections"
    assert stream.timestamps.tolist() == [3_000_000_005] and decode_boxes(stream.values[0])[0].label == "x"
    assert builder_for("/annotations", "foxglove.ImageAnnotations") is not None


@pytest.fixture()
def vision_store() -> Any:
    store = get_typestore(Stores.LATEST)
    for name, text in VISION_MSGS.items():
        store.register(get_types_from_msg(text, name))
    return store


def test_bag_detections_reach_a_viam_export(tmp_path: Path, bags: Any, ros2_msgs: Any, vision_store: Any) -> None:
    """vision_msgs decoded from the bag's own definitions, then put onto the images of a Viam binary export."""
    m = type(ros2_msgs)(vision_store)
    records = []
    for i in range(3):
        t = bags.T0 + i * 100 * bags.MS
        records.append(("/camera/front/image_raw", "sensor_msgs/msg/Image", t,
                        m.image(t, bags.front_pixels(i), "rgb8", "front_optical")))
        det = m.make("vision_msgs/msg/Detection2D", bbox=m.make(
            "vision_msgs/msg/BoundingBox2D", center=m.make(
                "vision_msgs/msg/Pose2D", position=m.make("vision_msgs/msg/Point2D", x=2.0, y=1.5)),
            size_x=2.0, size_y=1.0), results=[m.make("vision_msgs/msg/ObjectHypothesisWithPose", hypothesis=m.make(
                "vision_msgs/msg/ObjectHypothesis", class_id="cube", score=0.5))])
        records.append(("/camera/front/detections", "vision_msgs/msg/Detection2DArray", t,
                        m.make("vision_msgs/msg/Detection2DArray", header=m.header(t), detections=[det])))
    bag = bags.write_ros2(tmp_path / "bag", records, vision_store)
    ep = bags.open_one(bag)
    det = ep["front/detections"]
    assert isinstance(det, EventStream) and len(det) == 3 and not ep.skipped
    assert json.loads(det.values[0]) == [{"label": "cube", "x_min": 1.0, "y_min": 1.0, "x_max": 3.0, "y_max": 2.0,
                                          "confidence": 0.5}]
    get_converter("viam-binary").write([ep], tmp_path / "out", WriterOptions())
    lines = [json.loads(x) for x in (tmp_path / "out" / "viam-binary" / "dataset.jsonl").read_text().splitlines()]
    box = lines[0]["bounding_box_annotations"][0]  # the front image is 4×3 pixels
    assert np.allclose([box["x_min_normalized"], box["x_max_normalized"], box["y_min_normalized"],
                        box["y_max_normalized"]], [0.25, 0.75, 1 / 3, 2 / 3])
