"""What checking MCAP chunk CRCs costs: the index pass over a sample recording with and without `verify`.

The sample bag (rosbags writes chunks without CRCs) is rewritten by the mcap writer, which records them,
once with zstd chunks and once uncompressed.

Run by hand (nothing is cached; each pass opens the recording afresh):
    .venv/bin/python bench/verify_read.py [--seconds 20 --size 640x480 --repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from mcap.reader import make_reader
from mcap.writer import CompressionType, Writer

import robokit
from robokit.samples import SampleSpec, write_samples


def rewrite(src: Path, dst: Path, compression: CompressionType) -> Path:
    """The messages of `src` in a new MCAP whose chunks carry CRCs."""
    with src.open("rb") as f, dst.open("wb") as out:
        writer = Writer(out, compression=compression)
        writer.start(profile="ros2", library="robokit-bench")
        schemas: dict[int, int] = {}
        channels: dict[int, int] = {}
        for schema, channel, message in make_reader(f).iter_messages(log_time_order=False):
            if channel.id not in channels:
                assert schema is not None
                if schema.id not in schemas:
                    schemas[schema.id] = writer.register_schema(schema.name, schema.encoding, schema.data)
                channels[channel.id] = writer.register_channel(channel.topic, channel.message_encoding,
                                                               schemas[schema.id])
            writer.add_message(channels[channel.id], message.log_time, message.data, message.publish_time)
        writer.finish()
    return dst


def index_pass(path: Path, verify: bool) -> float:
    """Seconds for one index pass (every message of the mapped topics read and decoded)."""
    start = time.perf_counter()
    (ep,) = robokit.open(path, verify=verify)
    ep.streams  # noqa: B018 - runs the index pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--size", default="640x480")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.size, args.repeat = 0.5, "32x24", 1
    width, height = (int(v) for v in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        (bag,) = write_samples(Path(tmp), 1, SampleSpec(duration_s=args.seconds, width=width, height=height))
        (storage,) = bag.glob("*.mcap")
        for compression in (CompressionType.ZSTD, CompressionType.NONE):
            path = rewrite(storage, Path(tmp) / f"{compression.name.lower()}.mcap", compression)
            times = {v: min(index_pass(path, v) for _ in range(args.repeat)) for v in (False, True)}
            print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB, best of {args.repeat}: index pass "
                  f"{times[False]:.3f} s unchecked, {times[True]:.3f} s with chunk CRCs "
                  f"({100 * (times[True] / times[False] - 1):+.1f} %)")


if __name__ == "__main__":
    main()
