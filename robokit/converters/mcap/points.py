"""Topics for point streams: `foxglove.PointCloud` / `foxglove.LaserScan` (or ROS 2 PointCloud2 / LaserScan).

Points stay in their own frame as recorded, except a cloud in the TF root (or without a frame), whose axes
change with the requested world convention like the root's edges do; a laser scan there cannot be
rotated, so it is written as a point cloud of its readings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from robokit.converters.mcap.encoding import Encoder, Kind
from robokit.converters.mcap.tftree import Note, Tree
from robokit.converters.mcap.topic import Messages, Topic, TopicNames, carries
from robokit.converters.points import axes_change, in_axes
from robokit.ros.points import point_channel
from robokit.timeline.points import PointStream


def point_topics(streams: Mapping[str, PointStream], enc: Encoder, names: TopicNames, tree: Tree, convention: str,
                 notes: list[Note]) -> list[Topic]:
    """`/<channel>` per point stream, in its frame (the root when it has none)."""
    placed = {tree.root} | {e.child for e in (*tree.edges, *tree.fills)}
    topics: list[Topic] = []
    for name in sorted(streams):
        s = streams[name]
        frame = s.frame_id or tree.root
        if frame not in placed:
            notes.append(("warning", f"{name}: frame {frame!r} is not in the TF tree; Foxglove shows it only with "
                                     f"{frame!r} as the display frame"))
        rotation = axes_change(frame, convention, frozenset({tree.root}))
        scan = s.scan and rotation is None
        if s.scan and not scan:
            notes.append(("info", f"{name}: laser scans in the root frame written as point clouds in {convention} "
                                  "axes (a scan cannot be rotated)"))
        kind: Kind = "laser_scan" if scan else "point_cloud"
        topic = names.take(f"/{name}")
        topics.append(Topic(topic, kind, len(s), _messages(enc, s, frame, scan, rotation),
                            carries({point_channel(topic, scan): name})))
    return topics


def _messages(enc: Encoder, s: PointStream, frame: str, scan: bool, rotation: np.ndarray | None) -> Messages:
    def messages() -> Iterator[tuple[int, bytes]]:
        for t, cloud in zip(s.timestamps.tolist(), s.clouds(), strict=True):
            if scan and cloud.scan is not None:
                yield t, enc.laser_scan(t, frame, cloud.scan)
            else:
                yield t, enc.point_cloud(t, frame, in_axes(cloud.points, rotation), s.fields)

    return messages
