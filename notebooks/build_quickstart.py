"""Builds and executes notebooks/quickstart.ipynb (stored with its outputs).

    .venv/bin/python notebooks/build_quickstart.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

CELLS = [
    ("md", "# robokit quickstart\nOpen a recording, look at its streams, resample, convert frames, "
           "export to two formats in one pass, and reopen the output."),
    ("code", "import tempfile\nfrom pathlib import Path\n\nimport numpy as np\nimport robokit as rk\n"
             "from robokit.samples import SampleSpec, write_samples\n\n"
             "work = Path(tempfile.mkdtemp(prefix='robokit-quickstart-'))\n"
             "bags = write_samples(work / 'recordings', episodes=2, spec=SampleSpec(duration_s=3.0))\n"
             "[b.name for b in bags]"),
    ("md", "## Open a recording\n`rk.open` sniffs the format from the content and returns lazy episodes."),
    ("code", "(ep,) = rk.open(bags[0])\nprint(ep.info().to_dict()['tasks'])\n"
             "for s in ep.info().streams:\n"
             "    print(f'{s.channel:28} {s.kind:8} {s.count:5d} {s.rate_hz:7.2f} Hz  {s.time_source}')"),
    ("md", "## Plot its streams\nOne row per stream: coverage, sample ticks, gaps in red."),
    ("code", "from IPython.display import Image\nfrom robokit.plot import plot_timeline\n"
             "Image(filename=str(plot_timeline(ep, work / 'timeline.png')))"),
    ("md", "## Resample\nEvery selected stream on one 15 Hz grid; the report says how far `nearest` moved samples."),
    ("code", "aligned = rk.resample(ep, 15, method='linear', channels=['joints/position', 'front/rgb', 'tf/tool0'])\n"
             "report = aligned.resample_report\n"
             "print(report.count, 'ticks')\n"
             "for name, s in report.streams.items():\n"
             "    print(f'{name:18} {s.method:8} max offset {s.max_offset_ns / 1e6:.2f} ms')\n"
             "action = aligned['joints/position_delta']\nprint(action.values.shape)"),
    ("md", "## Convert frames\nThe end-effector pose from ROS (FLU world) into MuJoCo and OpenGL conventions."),
    ("code", "pose = aligned['tf/tool0']\n"
             "mj = rk.frames.convert_pose_stream(pose, 'mujoco')\n"
             "gl = rk.frames.convert_pose_stream(pose, 'opengl')\n"
             "print('ros   ', pose.translation[0].round(3))\nprint('opengl', gl.translation[0].round(3))\n"
             "print('wxyz  ', rk.frames.to_order(mj.quaternion[:1], 'wxyz').round(3))"),
    ("md", "## Export to two formats in one pass"),
    ("code", "job = rk.export(bags, ['lerobot', 'mcap'], work / 'out',\n"
             "                {'fps': 15, 'action': 'joints/position_delta', 'cameras': ['front']}, use_cache=False)\n"
             "print(job.status)\nfor name, r in job.formats.items():\n"
             "    print(name, r.status, r.episodes, 'episodes', r.frames, 'frames')"),
    ("md", "## Reopen the output\nThe LeRobot dataset reads back as episodes with the same values."),
    ("code", "back = rk.open(work / 'out' / 'lerobot')\n"
             "state = back[0]['joints/position']\n"
             "print(len(back), 'episodes;', state.values.shape, 'state;', back[0].tasks)\n"
             "src = rk.resample(rk.open(bags[0])[0], 15, channels=['joints/position', 'front/rgb'])\n"
             "print('max |diff|', float(np.abs(state.values - src['joints/position'].values).max()))"),
]


def build() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
                for kind, src in CELLS]
    return nb


def main() -> None:
    nb = build()
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    nbformat.write(nb, HERE / "quickstart.ipynb")


if __name__ == "__main__":
    main()
