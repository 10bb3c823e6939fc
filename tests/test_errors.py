from __future__ import annotations

import sys
import types

import pytest

from robokit.errors import SourceError, unreadable


def test_unreadable_while_another_thread_is_still_importing_a_library(monkeypatch: pytest.MonkeyPatch) -> None:
    """A library module in sys.modules but not yet initialised (imported meanwhile by another thread) has no error
    class yet: the other libraries' errors are still recognised, and no AttributeError replaces the real one."""
    monkeypatch.setitem(sys.modules, "pyarrow", types.ModuleType("pyarrow"))
    error = unreadable(ValueError("bad header"), "episode.mcap")
    assert isinstance(error, SourceError) and "episode.mcap" in str(error) and "bad header" in str(error)
    assert unreadable(KeyboardInterrupt(), "episode.mcap") is None
