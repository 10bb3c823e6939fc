"""Readers: each turns one kind of recording into timeline episodes. `open` sniffs the format."""

from robokit.sources.registry import Reader, ReadOptions, iter_readers, open_episodes, readers, register_reader

__all__ = ["ReadOptions", "Reader", "iter_readers", "open_episodes", "readers", "register_reader"]
