"""The reader registry: sniffing order, and readers imported only when sniffing reaches them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECK = """
import sys
import robokit
episodes = robokit.open(sys.argv[1])
loaded = sorted(m for m in sys.modules if m.startswith("robokit.converters.") and m.endswith(".reader"))
print(len(episodes), " ".join(loaded))
"""


def test_an_mcap_bag_imports_no_other_reader(sample_bag: Path) -> None:
    out = subprocess.run([sys.executable, "-c", CHECK, str(sample_bag)], capture_output=True, text=True, check=True)
    count, loaded = out.stdout.split(" ", 1)
    assert count == "1"
    assert loaded.split() == ["robokit.converters.mcap.reader"]  # the first sniffed: the others stay unloaded


def test_every_reader_is_listed_in_sniffing_order() -> None:
    from robokit.sources import readers

    names = [r.name for r in readers()]
    assert names[:2] == ["mcap", "rosbag2"] and "hdf5" in names and len(names) == len(set(names))
