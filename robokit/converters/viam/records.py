"""What both Viam layouts write per image: ids, labels, boxes normalised to the image, and the image bytes.

No resampling: every selected camera keeps its own frames and timestamps. Detections (`<camera>/detections`
events, pixels) go onto the `<camera>/rgb` frame nearest in time, within half a frame interval.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from robokit.converters.images import (
    IMAGE_FORMATS,
    camera_key,
    encoded_frames,
    first_frame,
    image_spec,
    recorded_format,
)
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import select_cameras
from robokit.converters.registry import ExtraOption
from robokit.converters.viam.layout import slug
from robokit.errors import ConversionError, OptionError
from robokit.timeline import Episode, EventStream, ImageStream
from robokit.timeline.depth import millimetre_stream
from robokit.timeline.detections import Box, decode_boxes, is_detection_channel
from robokit.timeline.streams import ints


def dataset_id(value: object) -> str:
    """Validate the `dataset_id` option: it names a file, so letters, digits, '.', '_' and '-' only."""
    if not isinstance(value, str) or slug(value) != value:
        raise OptionError(f"dataset_id {value!r}: use letters, digits, '.', '_' and '-' only")
    return value


DATASET_ID: ExtraOption[str | None] = ExtraOption(
    "dataset_id", str, None, "Viam dataset ID, naming the sequence zip (default: from sources).", check=dataset_id)
PART_ID: ExtraOption[str | None] = ExtraOption(
    "part_id", str, None, "Machine part ID stored with every image and reading (default: derived).")
IMAGE_FORMAT = ExtraOption("image_format", str, "auto",
                           "Image files: auto keeps the recorded JPEG/PNG (bytes untouched unless resized; raw "
                           "frames → PNG), or jpeg | png.",
                           IMAGE_FORMATS)


@dataclass(frozen=True)
class Ids:
    """The dataset ID, the part ID, and one sequence ID per input episode."""

    dataset: str
    part: str
    sequences: list[str]


def export_ids(episodes: Sequence[Episode], options: WriterOptions) -> Ids:
    """IDs from the options, else derived from the sources so re-exports of the same data match."""
    given = options.value(DATASET_ID)
    sources = "\n".join(f"{e.meta.source_uri}#{e.meta.source_version}#{e.id}" for e in episodes)
    dataset = given or hashlib.sha1(sources.encode()).hexdigest()[:24]  # the shape of a Viam ID
    part = str(options.value(PART_ID) or uuid.uuid5(uuid.NAMESPACE_URL, f"robokit:{dataset}"))
    sequences: list[str] = []
    for e in episodes:
        sid, n = slug(e.id), 2
        while sid in sequences:
            sid, n = f"{slug(e.id)}-{n}", n + 1
        sequences.append(sid)
    return Ids(dataset, part, sequences)


def check_cameras(episodes: Sequence[Episode], options: WriterOptions) -> None:
    """Named cameras that no episode has all of are an options mistake: ChannelError before anything is encoded."""
    if options.cameras is not None and episodes \
            and not any(set(options.cameras) <= set(e.cameras) for e in episodes):
        select_cameras(episodes[0], options)  # raises the first episode's ChannelError


def labels(episode: Episode, options: WriterOptions) -> tuple[str, ...]:
    """Classification labels of every image: the task (option, else the episode's first)."""
    task = options.task or (episode.tasks[0] if episode.tasks else "")
    return (task,) if task else ()


def trace(episode: Episode) -> dict[str, Any]:
    """Traceability of an episode, with the segment defaulting to the episode's own span."""
    out = episode.meta.trace()
    out["segment"] = out["segment"] or [episode.start_ns, episode.end_ns]
    return out


@dataclass(frozen=True)
class ImageRecord:
    """One image to write: where it belongs, when it was taken, its annotations and (optionally) its bytes."""

    component: str
    index: int
    timestamp_ns: int
    extension: str
    boxes: tuple[Box, ...] | None  # normalised to [0, 1]; None: no detector output for this image
    data: bytes | None

    def binary_data_id(self, ids: Ids, sequence_id: str) -> str:
        """Viam binary data IDs hold slashes (org/location/file); robokit's are dataset/sequence/file."""
        return f"{ids.dataset}/{sequence_id}/{self.component}-{self.index:06d}"


@dataclass(frozen=True)
class _Camera:
    channel: str
    source: ImageStream  # as recorded: detections are in its pixels
    stream: ImageStream  # what is written (resized when asked)


def selected_cameras(episode: Episode, options: WriterOptions, warnings: list[str]) -> list[_Camera]:
    """The selected cameras (ChannelError when a named one is missing); empty ones are left out with a note."""
    out = []
    for channel in select_cameras(episode, options):
        source = millimetre_stream(episode.cameras[channel])  # depth: 16-bit PNG in millimetres
        if len(source) == 0:
            why = "no frames"
            if options.cameras is not None:
                raise ConversionError(f"episode {episode.id}: camera {channel}: {why}")
            warnings.append(f"episode {episode.id}: camera {channel} left out ({why})")
            continue
        stream = source.resized(*options.image_size) if options.image_size else source
        out.append(_Camera(channel, source, stream))
    return out


def image_records(episode: Episode, options: WriterOptions, warnings: list[str], with_data: bool = True
                  ) -> Iterator[ImageRecord]:
    """Every frame of every selected camera, camera by camera, one frame decoded or read at a time."""
    requested = options.value(IMAGE_FORMAT)
    selected = selected_cameras(episode, options, warnings)
    detections = _detections(episode, selected, warnings)
    for cam in selected:
        spec = image_spec(cam.channel, first_frame(cam.stream), recorded_format(cam.source), requested)
        component = slug(camera_key(cam.channel))
        boxes = _boxes_by_frame(cam, detections.get(cam.channel), warnings, episode.id)
        data: Iterator[bytes | None] = encoded_frames(cam.channel, cam.stream, spec) if with_data else repeat(None)
        for i, (ts, encoded) in enumerate(zip(ints(cam.stream.timestamps), data, strict=False)):
            yield ImageRecord(component, i, ts, "." + spec.extension, boxes.get(i), encoded)


def _detections(episode: Episode, selected: list[_Camera], warnings: list[str]) -> dict[str, EventStream]:
    """Detection streams by the image channel they annotate (`front/detections` → `front/rgb`)."""
    by_group = {c.channel.partition("/")[0]: c.channel for c in selected if c.channel.endswith("/rgb")}
    out: dict[str, EventStream] = {}
    for name, stream in episode.streams.items():
        if not (is_detection_channel(name) and isinstance(stream, EventStream)):
            continue
        camera = by_group.get(name.rpartition("/")[0])
        if camera is None:
            warnings.append(f"episode {episode.id}: {name} dropped (no exported {name.rpartition('/')[0]}/rgb camera)")
        else:
            out[camera] = stream
    return out


def _boxes_by_frame(cam: _Camera, det: EventStream | None, warnings: list[str], episode_id: str
                    ) -> dict[int, tuple[Box, ...]]:
    """Detector outputs by frame index, normalised to the recorded image size and clipped to [0, 1]."""
    if det is None or not len(det) or not len(cam.stream):
        return {}
    t, d = cam.stream.timestamps, det.timestamps
    right = np.clip(np.searchsorted(t, d), 0, len(t) - 1)
    left = np.maximum(right - 1, 0)
    nearest = np.where(np.abs(t[left] - d) <= np.abs(t[right] - d), left, right)
    tolerance = 0.5 * float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    matched = np.abs(t[nearest] - d) <= tolerance
    if (~matched).any():
        warnings.append(f"episode {episode_id}: {int((~matched).sum())} of {len(det)} {det.name} events match "
                        f"no {cam.channel} frame within half a frame interval; dropped")
    w, h = float(cam.source.width or 1), float(cam.source.height or 1)
    out: dict[int, tuple[Box, ...]] = {}
    for k in np.flatnonzero(matched).tolist():
        try:
            boxes = decode_boxes(det.values[k])
        except (ValueError, KeyError, TypeError) as exc:
            raise ConversionError(f"episode {episode_id}: {det.name} event {k} is not a list of boxes ({exc})") from exc
        frame = int(nearest[k])
        out[frame] = out.get(frame, ()) + tuple(_normalised(b, w, h) for b in boxes)
    return out


def _normalised(b: Box, width: float, height: float) -> Box:
    x = np.clip(np.array([b.x_min, b.x_max]) / width, 0.0, 1.0)
    y = np.clip(np.array([b.y_min, b.y_max]) / height, 0.0, 1.0)
    return Box(b.label, float(x[0]), float(y[0]), float(x[1]), float(y[1]), b.confidence)
