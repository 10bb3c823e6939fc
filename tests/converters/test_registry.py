"""Writers are registered by kind (the protocol they implement); plug-ins come through entry points."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from robokit.converters import available, get_converter, kind_of, registry
from robokit.errors import OptionError

PLUGIN = '''
from pathlib import Path

from robokit.converters import ExtraOption, WriteResult
from robokit.sources import open_episodes

SUFFIX = ExtraOption("suffix", str, ".txt", "File name suffix.")


class Toy:
    name = "toy"
    description = "episode ids, one a line"
    extra_options = (SUFFIX,)

    def write(self, episodes, out_dir, options):
        folder = Path(out_dir) / self.name
        folder.mkdir(parents=True)
        name = "ids" + options.value(SUFFIX)
        (folder / name).write_text("".join(e.id + "\\n" for e in episodes))
        return WriteResult(files=[name], episodes=len(episodes))

    def check(self, format_dir):
        return []


class PointerReader:
    """A `.toy` file holds the path of a recording."""

    name = "toy"
    description = "a .toy pointer file"

    def sniff(self, path):
        return path.suffix == ".toy"

    def read(self, path, options):
        return open_episodes(Path(path.read_text().strip()), options)


TOY = Toy()
POINTER = PointerReader()
NOT_A_WRITER = object()
'''


@pytest.fixture()
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The toy plug-in module installed with its entry points (the registries' caches restored afterwards)."""
    from robokit.sources import registry as readers

    (tmp_path / "toy_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [EntryPoint("toy", "toy_plugin:TOY", "robokit.converters"),
           EntryPoint("broken", "toy_plugin:NOT_A_WRITER", "robokit.converters"),
           EntryPoint("toy", "toy_plugin:POINTER", "robokit.readers")]

    def found(group: str) -> list[EntryPoint]:
        return [e for e in eps if e.group == group]

    monkeypatch.setattr(registry, "entry_points", found)
    monkeypatch.setattr(registry, "_instances", dict(registry._instances))
    monkeypatch.setattr(readers, "entry_points", found)
    monkeypatch.setattr(readers, "_registered", [])
    monkeypatch.setattr(readers, "_plugins_loaded", False)
    monkeypatch.setattr(readers, "_builtins", {})


def test_one_line_registers_a_format_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `Format` line names the folder's writers and readers; the reader registry sniffs with the latter."""
    from robokit.sources import registry as readers

    toy = registry.Format("mcap", {"toy-mcap": "writer:MCAP"}, ("MCAP_READER",))
    monkeypatch.setattr(registry, "_BUILTIN", (toy,))
    monkeypatch.setattr(registry, "_instances", {})
    monkeypatch.setattr(readers, "_registered", [])
    monkeypatch.setattr(readers, "_plugins_loaded", False)
    monkeypatch.setattr(readers, "_builtins", {})
    assert available() == ["toy-mcap"] and get_converter("toy-mcap").name == "mcap"
    assert [r.name for r in readers.readers()] == ["mcap"]


def test_builtin_writers_have_their_kind() -> None:
    kinds = {name: kind_of(get_converter(name)) for name in available()}
    assert kinds["lerobot"] == kinds["mcap"] == kinds["viam-binary"] == "episodes"
    assert kinds["usd"] == kinds["mjcf"] == "scene" and kinds["cosmos-reason-v1.0"] == "annotated-scenes"


@pytest.mark.usefixtures("plugins")
def test_plugin_writer_and_reader_from_entry_points(sample_bag: Path, tmp_path: Path) -> None:
    from robokit.export import export

    assert "toy" in available() and kind_of(get_converter("toy")) == "episodes"
    pointer = tmp_path / "rec.toy"
    pointer.write_text(str(sample_bag))
    job = export([pointer], ["toy"], tmp_path / "out", {"suffix": ".lst"}, use_cache=False)
    assert job.status == "done" and (tmp_path / "out" / "toy" / "ids.lst").read_text() == "episode_000\n"
    with pytest.raises(OptionError, match="suffix 'a\\\\x00': control characters"):
        export([pointer], ["toy"], tmp_path / "bad", suffix="a\x00")
    with pytest.raises(OptionError, match="object is not a writer"):
        get_converter("broken")
