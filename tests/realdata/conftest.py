"""Roots of the real LeRobot datasets (tests/realdata/lerobot, see SOURCES.md), plus the one variant built from them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

LEROBOT = Path(__file__).parent / "lerobot"
KEYS_VARIANT = "reachy2_apple_storage_v30_keys"  # built from reachy2_apple_storage_v30, never committed
_RENAMED = {"observation.state": "state", "action": "actions", "observation.image": "image"}


def _rename(value: Any) -> Any:
    """Rename every feature key in a column name (`stats/action/min` too), JSON key or JSON string."""
    if isinstance(value, dict):
        return {_rename(k): _rename(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v) for v in value]
    if isinstance(value, str):
        return "/".join(_RENAMED.get(part, part) for part in value.split("/"))
    return value


def build_keys_variant(dest: Path) -> Path:
    """The apple_storage copy with its features named `state`, `actions`, `image`, as openpi-style recorders name
    them (no permissively licensed dataset with those keys was found): metadata, stats and Parquet columns renamed."""
    shutil.copytree(LEROBOT / "reachy2_apple_storage_v30", dest)
    for name in ("info.json", "stats.json"):
        path = dest / "meta" / name
        path.write_text(json.dumps(_rename(json.loads(path.read_text())), indent=4))
    for path in dest.rglob("*.parquet"):
        table = pq.read_table(path)
        metadata = {k: json.dumps(_rename(json.loads(v))).encode() for k, v in (table.schema.metadata or {}).items()}
        pq.write_table(table.rename_columns([_rename(n) for n in table.column_names]).replace_schema_metadata(metadata),
                       path)
    return dest


@pytest.fixture(scope="session")
def lerobot_roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Dataset name → root: every committed copy, and the keys variant written once per session."""
    roots = {p.name: p for p in LEROBOT.iterdir() if p.is_dir()}
    roots[KEYS_VARIANT] = build_keys_variant(tmp_path_factory.mktemp("lerobot-variant") / KEYS_VARIANT)
    return roots
