"""TFDS prepared-directory names: dataset and version rules, shard file names, split entries."""

from __future__ import annotations

import re
from typing import Any

from robokit.errors import OptionError
from robokit.paths import expand

FILE_FORMAT = "tfrecord"
TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"
DATASET_INFO = "dataset_info.json"
FEATURES = "features.json"
METADATA = "metadata.json"  # free-form dataset metadata (tfds.core.MetadataDict): robokit stores the action meaning
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_VERSION = re.compile(r"\d+\.\d+\.\d+")
DOC_PREFIX = "robokit: "  # feature descriptions robokit writes: "robokit: <channel> [names] frame=<convention>"
_DOC = re.compile(r"robokit: (?P<channel>\S+)(?: \[(?P<names>[^\]]*)\])?(?: frame=(?P<frame>\w+))?")


def dataset_name(value: object) -> str:
    """A TFDS dataset name: snake_case, starting with a letter."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise OptionError(f"dataset_name {value!r}: an RLDS dataset name is snake_case (a-z, 0-9, _), "
                          "starting with a letter")
    return value


def version(value: object) -> str:
    if not isinstance(value, str) or not _VERSION.fullmatch(value):
        raise OptionError(f"rlds_version {value!r}: expected X.Y.Z, e.g. 1.0.0")
    return value


def shard_name(dataset: str, split: str, index: int, count: int, template: str = TEMPLATE,
               file_format: str = FILE_FORMAT) -> str:
    """The file name TFDS expects for shard `index` of `count` (numbers padded to at least 5 digits); SourceError
    when a template read from a dataset has other placeholders."""
    width = max(5, len(str(count)))
    return expand(template, {"DATASET": dataset, "SPLIT": split, "FILEFORMAT": file_format,
                             "SHARD_X_OF_Y": f"{index:0{width}d}-of-{count:0{width}d}",
                             "SHARD_INDEX": f"{index:0{width}d}", "NUM_SHARDS": f"{count:0{width}d}"},
                  f"{DATASET_INFO} filepathTemplate")


def split_entry(split: str, shard_lengths: list[int], num_bytes: int) -> dict[str, Any]:
    """One `splits` entry of dataset_info.json (int64 fields as strings, as MessageToDict writes them)."""
    return {"filepathTemplate": TEMPLATE, "name": split, "numBytes": str(num_bytes),
            "shardLengths": [str(n) for n in shard_lengths]}


def describe(channel: str, names: tuple[str, ...] = (), frame: str = "") -> str:
    """A feature description that lets robokit's reader restore the channel name, dimension names and frame."""
    doc = DOC_PREFIX + channel
    if names:
        doc += " [" + ", ".join(names) + "]"
    return doc + (f" frame={frame}" if frame else "")


def parse_description(doc: str) -> tuple[str, tuple[str, ...], str] | None:
    """(channel, names, frame) from a description robokit wrote, else None."""
    m = _DOC.fullmatch(doc)
    if not m:
        return None
    names = tuple(n.strip() for n in m["names"].split(",")) if m["names"] else ()
    return m["channel"], names, m["frame"] or ""
