from __future__ import annotations

import subprocess
import sys

from robokit.timeline.video import has_sequence_header, obus

# A thread converts a frame with `frame_array` and stays alive; then the process starts a program the way Ray starts
# its servers (Python runs in the forked child before exec, freeing the other threads' state, their scalers too).
_FORK_AFTER_SCALING = """
import subprocess, threading
import av, numpy as np
from robokit.timeline.video import frame_array
done = threading.Event()
def convert():
    frame = av.VideoFrame.from_ndarray(np.zeros((480, 640, 3), np.uint8), format="rgb24").reformat(format="yuv420p")
    frame_array(frame, "rgb24")
    done.set()
    threading.Event().wait()
threading.Thread(target=convert, daemon=True).start()
done.wait()
subprocess.run(["true"], preexec_fn=lambda: None, check=True)
"""


def test_a_forked_child_does_not_wait_for_scaler_threads() -> None:
    """PyAV 18.1.1's scalers start slice threads unless told not to: a child forked while another thread held one
    hung freeing it (Ray's start, after an export in the same process)."""
    subprocess.run([sys.executable, "-c", _FORK_AFTER_SCALING], check=True, timeout=60)


def test_obus_walk_a_temporal_unit() -> None:
    unit = bytes([0x12, 0x00, 0x0A, 0x02, 0xAA, 0xBB, 0x32, 0x01, 0xCC])  # delimiter, sequence header, frame
    assert list(obus(unit)) == [(2, 0, 2), (1, 2, 6), (6, 6, 9)]
    assert has_sequence_header(unit) and not has_sequence_header(unit[6:])
    assert list(obus(bytes([0x30, 0xDD, 0xEE]))) == [(6, 0, 3)]  # no size field: to the end
