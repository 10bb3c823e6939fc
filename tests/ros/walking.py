"""Differential reads for the chunk walks: a recording read with its uncompressed chunks walked in the file (frame
headers only in the index pass) against the same recording read with every chunk read whole."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from robokit.errors import RobokitError
from robokit.ros import heads
from tests.fuzz.mutate import _bitflip, _huge_length, _truncate, _zero


def read_everything(path: Path, verify: bool = True) -> Any:
    """Everything a reader's caller sees of a recording (streams, stamps, frames hashed, warnings, losses), or the
    error it raised."""
    import robokit

    try:
        seen = []
        for ep in robokit.open(path, verify=verify):
            streams = {}
            for name, s in sorted(ep.streams.items()):
                digest = hashlib.sha1(np.asarray(s.timestamps).tobytes())
                if hasattr(s, "frames"):
                    for frame in s.frames(range(len(s))):
                        digest.update(np.ascontiguousarray(frame.array()).tobytes())
                streams[name] = (len(s.timestamps), digest.hexdigest())
            seen.append((streams, ep.warnings, [tuple(vars(loss).values()) for loss in ep.losses]))
        return seen
    except RobokitError as exc:
        return f"{type(exc).__name__}: {exc}"


def walked_and_whole(path: Path, monkeypatch: pytest.MonkeyPatch, module: Any, decides: str,
                     verify: bool = True) -> tuple[Any, Any, int]:
    """`read_everything` with every uncompressed chunk walked, then with none; and how many chunks were walked
    (`module.decides` returns the walk's span or window, None to read the chunk whole)."""
    walked = 0
    original = getattr(module, decides)

    def counted(*args: Any) -> Any:
        nonlocal walked
        found = original(*args)
        walked += found is not None
        return found

    monkeypatch.setattr(module, decides, counted)
    monkeypatch.setattr(heads, "WALK_ABOVE", 0)
    walk = read_everything(path, verify)
    monkeypatch.setattr(heads, "WALK_ABOVE", 1 << 62)
    whole = read_everything(path, verify)
    return walk, whole, walked


def damaged_copy(source: Path, to: Path, seed: int) -> Path:
    """`source` copied to `to` with one seeded byte-level mutation (the fuzz harness's)."""
    data = bytearray(source.read_bytes())
    rng = random.Random(seed)
    rng.choice((_bitflip, _truncate, _zero, _huge_length))(data, rng)
    to.write_bytes(bytes(data))
    return to
