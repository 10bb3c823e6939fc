"""Readers: each turns one kind of recording into timeline episodes. `open` sniffs the format."""

from robokit.sources.registry import Reader, ReadOptions, open_episodes, readers, register_reader

__all__ = ["ReadOptions", "Reader", "open_episodes", "readers", "register_reader"]
