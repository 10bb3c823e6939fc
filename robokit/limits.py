"""The bounds of every option that sizes work or memory, in one place (shown by `--help` and the README).

Values beyond them are refused with the valid range before anything is read, so no option can make
robokit allocate without bound.
"""

from __future__ import annotations

MAX_FPS = 1000.0  # output rate (Hz): a frame every millisecond
MAX_IMAGE_SIDE = 8192  # pixels per side of --image-size (8K video is 7680x4320)
MAX_WORKERS = 256  # worker processes, each holding a few episodes in flight
MAX_EPISODES = 1000  # episodes `robokit sample` and `robokit sim record` generate
MAX_TEXT = 4096  # characters of any text option (robot type, task, channel and dataset names)
MAX_MAPPING_ENTRIES = 10_000  # `topic: channel` pairs of a --mapping file
MAX_MAPPING_BYTES = 1 << 20  # size of a --mapping file
MAX_POINTS = 65536  # points per step in padded layouts (RLDS): 1 MiB of x, y, z, intensity float32; more are cut
