"""LeRobot v3.0 layout constants and path helpers (what `lerobot` 0.6 reads)."""

from __future__ import annotations

CODEBASE_VERSION = "v3.0"
CHUNKS_SIZE = 1000
DATA_FILE_MB = 100
VIDEO_FILE_MB = 200
MAX_FILE_MB = 10_000  # upper bound of the data/video file size options (files are streamed, never buffered)
MAX_VIDEO_SECONDS = 1000.0  # lerobot compares times as float32: past 1024 s frame lookups fail
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
DEFAULT_FEATURES = {
    "timestamp": {"dtype": "float32", "shape": [1], "names": None},
    "frame_index": {"dtype": "int64", "shape": [1], "names": None},
    "episode_index": {"dtype": "int64", "shape": [1], "names": None},
    "index": {"dtype": "int64", "shape": [1], "names": None},
    "task_index": {"dtype": "int64", "shape": [1], "names": None},
}
INFO_PATH = "meta/info.json"
TASKS_PATH = "meta/tasks.parquet"
EPISODES_DIR = "meta/episodes"
STATS_PATH = "meta/stats.json"
V2_TASKS_PATH = "meta/tasks.jsonl"  # v2.1: one {"task_index", "task"} object per line
V2_EPISODES_PATH = "meta/episodes.jsonl"  # v2.1: one {"episode_index", "tasks", "length"} object per line
STATE_KEY = "observation.state"
ACTION_KEY = "action"
IMAGE_PREFIX = "observation.images."
STATE_KEYS = (STATE_KEY, "state")  # the keys read as the state (openpi-style recorders write `state`)
ACTION_KEYS = (ACTION_KEY, "actions")  # the keys read as the recorded action


class FileCounter:
    """Chunk/file indices that advance like lerobot's `update_chunk_file_indices`."""

    def __init__(self) -> None:
        self.chunk = 0
        self.file = 0

    def advance(self) -> None:
        self.file += 1
        if self.file == CHUNKS_SIZE:
            self.file = 0
            self.chunk += 1

    def path(self, template: str, **keys: str) -> str:
        return template.format(chunk_index=self.chunk, file_index=self.file, **keys)


def split_ranges(labels: list[str]) -> tuple[dict[str, str], str]:
    """info.json `splits` from each episode's recorded split ("" = train): `start:end` episode ranges when every
    split is one contiguous run, else all `train` and a warning (LeRobot cannot express other sets)."""
    count = len(labels)
    named = [label or "train" for label in labels]
    runs: list[tuple[str, int, int]] = []
    for index, label in enumerate(named):
        if runs and runs[-1][0] == label:
            runs[-1] = (label, runs[-1][1], index + 1)
        else:
            runs.append((label, index, index + 1))
    if len(runs) == len({label for label, _, _ in runs}):
        return {label: f"{start}:{end}" for label, start, end in runs}, ""
    recorded = {label: [i for i, x in enumerate(named) if x == label] for label, _, _ in runs}
    return {"train": f"0:{count}"}, ("recorded splits are not contiguous episode ranges, which LeRobot `splits` "
                                     f"cannot express: written as train 0:{count} (episodes by split: {recorded})")

