"""Scene writing speed: sample scene (splat density sweep) → load, collision shapes, USD, MJCF, checks.

Run by hand:  .venv/bin/python bench/scene_write.py [--density 6000 24000] [--collision convex-decomposition]
Each step is timed separately; decompositions are cached by mesh content, so MJCF after USD reuses them.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.scene import SceneOptions, load_scene, prepare_scene, write_sample_scene


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--density", type=float, nargs="+", default=[6000.0, 24000.0], help="splats per m²")
    parser.add_argument("--collision", default="convex-decomposition")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    if args.smoke:
        args.density, args.collision = [300.0], "convex-hull"
    for density in args.density:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            scene_file = write_sample_scene(root / "scene", density=density)
            options = WriterOptions(extra={"collision": args.collision, "collision_from_splat": True})
            times: dict[str, float] = {}
            t = time.perf_counter()
            scene = load_scene([scene_file], [], options)
            times["load"] = time.perf_counter() - t
            t = time.perf_counter()
            prepare_scene(scene, SceneOptions.from_writer(options))
            times["collision"] = time.perf_counter() - t
            for name in ("usd", "mjcf"):
                conv = get_converter(name)
                t = time.perf_counter()
                conv.write_scene(scene, root / "out", options)  # type: ignore[attr-defined]
                times[name] = time.perf_counter() - t
                t = time.perf_counter()
                problems = conv.check(root / "out" / name)
                times[f"check {name}"] = time.perf_counter() - t
                assert not problems, problems
            size = sum(f.stat().st_size for f in (root / "out").rglob("*") if f.is_file()) / 1e6
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            cells = "  ".join(f"{k} {v:.2f}s" for k, v in times.items())
            print(f"{len(scene.splats[0]):>8} splats  {cells}  output {size:.1f} MB  peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
