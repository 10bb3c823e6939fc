"""Size-targeted shard files, written under temporary names and renamed only when all are complete.

Writers hand over whole items (an RLDS episode record, a WebDataset episode's tar members) whose exact
size they know, so a shard closes before the item that would take it past the target; an item larger
than the target gets a shard of its own. Final names may depend on the shard count (`-of-NNNNN`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

MB = 1_000_000


@dataclass(frozen=True)
class Shard:
    """A finished shard: final file name, items in it, file size in bytes."""

    name: str
    items: int
    size: int


def shard_bytes(mb: float) -> int:
    """A shard size option (MB, decimal; bounded by its declaration) in bytes."""
    return int(mb * MB)


def item_shards(shards: Sequence[Shard]) -> list[str]:
    """The shard name of every item, in the order the items were added."""
    return [shard.name for shard in shards for _ in range(shard.items)]


class ShardSet:
    """Shards of one sequence in `directory`; `final_name(index, count)` names them at `finish()`.

    `closing(size)` gives the bytes a shard of `size` content bytes grows by when closed (tar end blocks);
    `close_shard(file, size)` writes them.
    """

    def __init__(self, directory: Path, target_bytes: int, final_name: Callable[[int, int], str],
                 closing: Callable[[int], int] = lambda size: 0,
                 close_shard: Callable[[BinaryIO, int], None] = lambda f, size: None, label: str = "shard") -> None:
        self.directory = directory
        self._label = label
        self.target = target_bytes
        self._final_name = final_name
        self._closing = closing
        self._close_shard = close_shard
        self._file: BinaryIO | None = None
        self._size = 0
        self._items = 0
        self._done: list[tuple[Path, int, int]] = []  # (temporary path, items, file size)

    def file_for(self, size: int) -> BinaryIO:
        """The open file the next item of `size` bytes goes into, starting a new shard when needed."""
        grown = self._size + size
        if self._file is not None and self._items and grown + self._closing(grown) > self.target:
            self._close()
        if self._file is None:
            path = self.directory / f".{self._label}-{len(self._done):06d}.partial"
            self._file = path.open("wb")
        return self._file

    def added(self, size: int) -> None:
        """Record that an item of `size` bytes was written to the current shard."""
        self._size += size
        self._items += 1

    @property
    def current_index(self) -> int:
        """Index of the shard the last item went into."""
        return len(self._done)

    def _close(self) -> None:
        assert self._file is not None
        self._close_shard(self._file, self._size)
        self._file.close()
        path = Path(self._file.name)
        self._done.append((path, self._items, path.stat().st_size))
        self._file, self._size, self._items = None, 0, 0

    def finish(self) -> list[Shard]:
        """Close the last shard and rename every shard to its final name."""
        if self._file is not None:
            self._close()
        count = len(self._done)
        shards = []
        for index, (path, items, size) in enumerate(self._done):
            name = self._final_name(index, count)
            path.rename(self.directory / name)
            shards.append(Shard(name, items, size))
        return shards

    def __enter__(self) -> ShardSet:
        return self

    def __exit__(self, *exc: object) -> None:
        """Close a shard left open by an error (the caller's staging folder then removes it)."""
        if self._file is not None:
            self._file.close()
            self._file = None
