"""`--to mcap`: one indexed, zstd-chunked MCAP per episode, every topic on the episode's own clock.

Topics (see plan.py) are merged lazily in log-time order into the episode's file, built in memory (one
compressed episode per worker is the most held); an episode that cannot be converted is skipped with its
reason, and the folder appears only when complete.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mcap.writer import CompressionType, Writer

from robokit.converters.episodes import file_name
from robokit.converters.images import IMAGE_THREADS
from robokit.converters.mcap.encoders import ENCODINGS, encoder_for
from robokit.converters.mcap.encoding import Encoder
from robokit.converters.mcap.plan import align, episode_record, robot_description
from robokit.converters.mcap.plan import plan as topic_plan
from robokit.converters.mcap.topic import Topic
from robokit.converters.options import WriterOptions
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.staging import staged_dir
from robokit.converters.streaming import Encoded, EpisodeContext, accepted, write_streaming
from robokit.errors import ChannelError, ConversionError
from robokit.timeline import Episode
from robokit.timeline.derived import base_channel
from robokit.version import __version__

IMAGE_FORMATS = ("jpeg", "png")
MCAP_ENCODING = ExtraOption("mcap_encoding", str, "protobuf",
                            "Messages: protobuf (Foxglove schemas) or ros2 (CDR, profile ros2).", ENCODINGS)
MCAP_IMAGE_FORMAT = ExtraOption("mcap_image_format", str, "jpeg",
                                "Raw camera frames are encoded once as jpeg or png (lossless).", IMAGE_FORMATS)
EXTRA_OPTIONS = (MCAP_ENCODING, MCAP_IMAGE_FORMAT)
CHUNK_SIZE = 1 << 20
ATTACHMENT = ("robot.urdf", "application/xml")
MESSAGE_ENCODINGS = {"protobuf": "protobuf", "ros2msg": "cdr"}  # schema encoding -> its channels' message encoding


@dataclass(frozen=True)
class Settings:
    """The MCAP-specific options, validated."""

    encoding: str
    image_format: str


def settings(options: WriterOptions) -> Settings:
    """The MCAP options' values (OptionError naming the allowed values)."""
    return Settings(options.value(MCAP_ENCODING), options.value(MCAP_IMAGE_FORMAT))


def _tagged(channel: int, topic: Topic) -> Iterator[tuple[int, int, bytes]]:
    count = 0
    for t, data in topic.messages():
        count += 1
        yield t, channel, data
    if count != topic.count:
        raise ConversionError(f"{topic.topic}: wrote {count} messages, expected {topic.count}")


def write_file(f: BinaryIO, topics: Sequence[Topic], enc: Encoder, metadata: dict[str, dict[str, str]],
               attachment: str | None, t0: int) -> None:
    """Write one MCAP to `f`: schemas and channels registered once, messages merged in log-time order, then metadata."""
    w = Writer(f, chunk_size=CHUNK_SIZE, compression=CompressionType.ZSTD)
    w.start(profile=enc.profile, library=f"robokit/{__version__}")
    schemas: dict[str, int] = {}
    merged = []
    for topic in topics:
        name, encoding, data = enc.schema(topic.kind)
        if name not in schemas:
            schemas[name] = w.register_schema(name=name, encoding=encoding, data=data)
        channel_meta = {**enc.channel_metadata(topic.topic), **topic.metadata}
        channel = w.register_channel(topic.topic, MESSAGE_ENCODINGS[encoding], schemas[name], channel_meta)
        merged.append(_tagged(channel, topic))
    for t, channel, data in heapq.merge(*merged):  # (time, channel id) decide; payloads never compared
        w.add_message(channel_id=channel, log_time=t, data=data, publish_time=t)
    for name, record in metadata.items():
        w.add_metadata(name, record)
    w.add_metadata("robokit.counts", {t.topic: str(t.count) for t in topics})
    if attachment is not None:
        w.add_attachment(create_time=0, log_time=t0, name=ATTACHMENT[0], media_type=ATTACHMENT[1],
                         data=attachment.encode())
    w.finish()  # type: ignore[no-untyped-call]


def _check_action(episodes: Sequence[Episode], action: str | None) -> None:
    """An action channel no episode has is a mistake in the options: its ChannelError before anything is encoded."""
    if action and episodes and not any(base_channel(action, ep.streams) in ep.streams for ep in episodes):
        raise ChannelError(action, list(episodes[0].streams))


@dataclass(frozen=True)
class _Plan:
    """What every episode's encoding shares: the options, the MCAP settings, one file name per input episode."""

    options: WriterOptions
    settings: Settings
    names: tuple[str, ...]


class McapConverter:
    """`--to mcap`: `<out>/mcap/<episode>.mcap`, Foxglove-ready (protobuf) or ROS 2 (CDR)."""

    name = "mcap"
    description = "MCAP per episode (Foxglove protobuf or ROS 2 CDR): aligned channels, TF, cameras, derived topics"
    extra_options = EXTRA_OPTIONS
    holds_points = True

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        return write_streaming(self, episodes, out_dir, options)

    def plan(self, episodes: Sequence[Episode], options: WriterOptions) -> _Plan:
        s = settings(options)
        _check_action(episodes, options.action)
        used: set[str] = set()
        return _Plan(options, s, tuple(file_name(ep.id, used, ".mcap") for ep in episodes))

    def encode(self, ctx: EpisodeContext, plan: _Plan) -> Encoded:
        """The episode's whole MCAP file (written to a spill file as it is made), and its warning notes."""
        ep, s = ctx.episode, plan.settings
        enc = encoder_for(s.encoding)
        with ThreadPoolExecutor(max_workers=IMAGE_THREADS) as pool, ctx.spilling() as spill:
            aligned, frames, notes = align(ep, plan.options)
            p = topic_plan(ep, aligned, plan.options, s.image_format, enc, pool, notes)
            record = episode_record(ep, p, plan.options, s.encoding)
            write_file(spill.file, p.topics, enc, {"robokit.episode": record}, robot_description(ep), p.t0)
            payload = spill.payload()
        return Encoded(ctx.index, ep.id, payload, frames,
                       warnings=[f"{ep.id}: {text}" for level, text in notes if level == "warning"])

    def assemble(self, parts: Iterable[Encoded], out_dir: Path, plan: _Plan) -> WriteResult:
        result = WriteResult()
        with staged_dir(out_dir / self.name, overwrite=plan.options.overwrite) as root:
            for part in accepted(self.name, parts, result):
                name = plan.names[part.index]
                part.data.move_to(root / name)
                result.files.append(name)
                result.episode_files[part.episode_id] = [name]
        return result

    def check(self, format_dir: Path) -> list[str]:
        """Decode every file with mcap's protobuf/ROS 2 decoders, check order, counts and TF; rosbags for ros2."""
        from robokit.converters.mcap.check import check_folder

        return check_folder(format_dir)


MCAP = McapConverter()
