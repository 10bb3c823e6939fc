"""The common timeline model: an episode of named streams, each with its own int64 ns UTC timestamps."""

from robokit.timeline.episode import Episode, EpisodeInfo, EpisodeMeta, SkippedTopic, StreamInfo
from robokit.timeline.images import ArrayFrameSource, Frame, FrameSource
from robokit.timeline.losses import Loss
from robokit.timeline.points import Cloud, PointStream
from robokit.timeline.streams import (
    CameraInfo,
    EventStream,
    ImageStream,
    NumericStream,
    PoseStream,
    Stream,
    StreamOrigin,
)

__all__ = [
    "ArrayFrameSource",
    "CameraInfo",
    "Cloud",
    "Episode",
    "EpisodeInfo",
    "EpisodeMeta",
    "EventStream",
    "Frame",
    "FrameSource",
    "ImageStream",
    "Loss",
    "NumericStream",
    "PointStream",
    "PoseStream",
    "SkippedTopic",
    "Stream",
    "StreamInfo",
    "StreamOrigin",
]
