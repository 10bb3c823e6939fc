"""The fuzz harness: mutate a seed, run the real CLI on it (`robokit info --json`, `robokit convert`) in a
forked child with a timeout and a memory cap, and classify the outcome.

Properties, per case: no traceback (only robokit's typed errors and warnings reach the user), no hang
(the child is killed after the timeout) and no silent loss: an export that succeeds while fewer messages
were read, or fewer episodes or frames written, than from the intact seed, with no warning anywhere
(`info` warnings or skipped topics, export.json warnings, skipped items or episodes).

`python -m tests.fuzz.harness --cases N` (what `make fuzz` runs) prints a summary and exits 1 on any finding.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import os
import random
import resource
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import av.video.frame

from tests.fuzz.mutate import mutate_case
from tests.fuzz.seeds import Seed, build_seeds

MEMORY_HEADROOM = 4 * 2**30  # address space a case may add: an unbounded allocation fails instead of swapping
FINDINGS = ("traceback", "hang", "crash", "silent-loss")


@dataclass
class Outcome:
    """What one case did; `status` is ok, typed (a robokit error), or one of FINDINGS."""

    seed: str
    case: int
    mutation: str
    status: str = "ok"
    detail: str = ""
    observed: dict[str, Any] = field(default_factory=dict)


def _cli(args: list[str]) -> tuple[int, str, str, str]:
    """Run `robokit ARGS` in this process: exit code, stdout, stderr, and a traceback if one escaped."""
    from robokit.cli import main

    out, err = io.StringIO(), io.StringIO()
    tb = ""
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(args)
        except BaseException:  # the finding: anything that is not a typed robokit error
            rc, tb = -1, traceback.format_exc()
    return rc, out.getvalue(), err.getvalue(), tb


def observe(seed: Seed, root: Path, work: Path) -> dict[str, Any]:
    """Run info and convert on the input under `root`; counts, warnings and any traceback."""
    target = root / seed.path
    seen: dict[str, Any] = {"tracebacks": [], "messages": None, "episodes_read": None, "info_notes": [],
                            "notes": []}

    def notes(texts: Any) -> list[str]:
        return sorted({str(t).replace(str(root), "<in>") for t in texts})

    if not seed.scene and not seed.manifest:
        rc, out, err, tb = _cli(["info", str(target), "--json"])
        if tb:
            seen["tracebacks"].append(f"info: {tb}")
        elif rc == 0:
            infos = json.loads(out)
            seen["episodes_read"] = len(infos)
            seen["messages"] = sum(s["count"] for i in infos for s in i["streams"])
            seen["info_notes"] = notes([w for i in infos
                                        for w in (*i["warnings"], *i["skipped"], *i.get("losses", ()))])
        else:
            seen["info_error"] = err.strip()[-300:]
    dest = work / "out"
    args = ["convert", *(["--manifest", str(target)] if seed.manifest else [str(target)])]
    for fmt in seed.formats:
        args += ["--to", fmt]
    rc, out, err, tb = _cli([*args, *seed.args, "--out", str(dest), "--no-cache", "--workers", "1", "-q"])
    seen["convert_rc"] = rc
    if tb:
        seen["tracebacks"].append(f"convert: {tb}")
    record = dest / "export.json"
    if record.is_file():
        job = json.loads(record.read_text())
        formats = job["formats"].values()
        seen["written"] = all(f["status"] != "failed" for f in formats)
        seen["episodes"] = sum(f["episodes"] for f in formats)
        seen["frames"] = sum(f["frames"] for f in formats)
        seen["notes"] = notes([*job["warnings"], *(w for f in formats for w in (*f["warnings"], *f["skipped"])),
                               *(i["reason"] for i in job["items"] if i["status"] != "converted")])
    else:
        seen["convert_error"] = err.strip()[-300:]
    return seen


def _losses(seen: dict[str, Any], baseline: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    return [f"{k} {seen[k]} < {baseline[k]}" for k in keys
            if seen.get(k) is not None and baseline.get(k) is not None and seen[k] < baseline[k]]


def classify(seen: dict[str, Any], baseline: dict[str, Any], scene: bool = False) -> tuple[str, str]:
    """The case's status and a one-line detail. A loss counts as told when the case warned of something its
    intact seed did not (`info` for what was read; `info` or export.json for what was written). Scene inputs
    are text or meshes whose shortened copy is whole in itself: their losses are skips, always warned."""
    if seen["tracebacks"]:
        tb = seen["tracebacks"][0].strip().splitlines()
        return "traceback", f"{tb[0].split(':')[0]}: {tb[-1]}"
    if scene:
        return "typed" if "convert_error" in seen else "ok", ""
    info_told = bool(set(seen["info_notes"]) - set(baseline["info_notes"]))
    lost = [] if info_told else _losses(seen, baseline, ("messages", "episodes_read"))
    if seen.get("written") and not info_told and not set(seen["notes"]) - set(baseline["notes"]):
        lost += _losses(seen, baseline, ("episodes", "frames"))
    if lost:
        return "silent-loss", ", ".join(lost)
    return "typed" if "convert_error" in seen or "info_error" in seen else "ok", ""


def _address_space() -> int:
    """This process's virtual memory size in bytes."""
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmSize:"))) * 1024


def _child(seed: Seed, root: Path, work: Path, pipe: Any) -> None:
    cap = _address_space() + MEMORY_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        pipe.send(observe(seed, root, work))
    except BaseException:
        pipe.send({"tracebacks": [f"harness: {traceback.format_exc()}"]})
    pipe.close()
    os._exit(0)  # skip atexit handlers and thread joins of the forked interpreter


class _Running:
    """A case observed in a forked child, with its deadline."""

    def __init__(self, seed: Seed, root: Path, work: Path, timeout: float) -> None:
        # PyAV 18.1.1 keeps a scaler per thread, with slice threads a forked child lacks: a child using or freeing
        # the one this thread holds (earlier tests, the seeds) would wait for them forever, so it makes its own
        vars(av.video.frame._thread_local).pop("reformatter", None)
        ctx = multiprocessing.get_context("fork")
        self.recv, send = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_child, args=(seed, root, work, send), daemon=True)
        self.proc.start()
        send.close()
        self.deadline = time.monotonic() + timeout

    def result(self) -> dict[str, Any] | str:
        """The child's observation, or "hang"/"crash"; the child is gone afterwards."""
        result: dict[str, Any] | str = "hang"
        if self.recv.poll(max(0.0, self.deadline - time.monotonic())):
            try:
                result = self.recv.recv()
            except EOFError:
                result = "crash"
        self.proc.join(5 if result != "hang" else 0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.recv.close()
        return result


def run_isolated(seed: Seed, root: Path, work: Path, timeout: float) -> dict[str, Any] | str:
    """`observe` in a forked child: its result, or "hang"/"crash"."""
    return _Running(seed, root, work, timeout).result()


def preload() -> None:
    """Import the heavy libraries once, so every forked case starts warm."""
    import robokit.cli
    import robokit.converters.scene  # noqa: F401
    from robokit.converters import get_converter
    from robokit.sources.registry import readers

    readers()
    _cli(["info", "--json", "/nonexistent"])  # info imports robokit.open and the plotting on first use
    for name in ("webdataset", "usd"):
        get_converter(name)


def _prepare(seed: Seed, case: int, rng_seed: int, scratch: Path) -> tuple[Path, str]:
    """A mutated copy of `seed` for case number `case`: its folder and what was done."""
    rng = random.Random(f"{rng_seed}:{seed.name}:{case}")
    work = scratch / f"case-{case}"
    shutil.copytree(seed.root, work / "in", symlinks=True)
    focus = work / "in" / seed.path if seed.manifest else None
    return work, mutate_case(work / "in", rng, focus)


def _outcome(seed: Seed, case: int, mutation: str, result: dict[str, Any] | str, baseline: dict[str, Any],
             timeout: float) -> Outcome:
    outcome = Outcome(seed.name, case, mutation)
    if isinstance(result, str):
        outcome.status = result
        outcome.detail = f"no answer in {timeout:.0f} s" if result == "hang" else "the child died"
    else:
        outcome.status, outcome.detail = classify(result, baseline, seed.scene)
        outcome.observed = {k: v for k, v in result.items() if k != "tracebacks"}
        if outcome.status == "traceback":
            outcome.observed["traceback"] = result["tracebacks"][0]
    return outcome


def baselines(seeds: list[Seed], scratch: Path, timeout: float) -> dict[str, dict[str, Any]]:
    """What each intact seed gives (the reference for silent losses); a seed must pass cleanly itself."""
    out = {}
    for seed in seeds:
        work = scratch / f"baseline-{seed.kind}-{seed.root.name}"
        shutil.copytree(seed.root, work / "in", symlinks=True)
        result = run_isolated(seed, work / "in", work, timeout * 3)
        if isinstance(result, str) or result["tracebacks"]:
            raise RuntimeError(f"seed {seed.name} fails intact: {result}")
        out[seed.name] = result
        shutil.rmtree(work, ignore_errors=True)
    return out


def fuzz(cases: int, rng_seed: int, seed_dir: Path, timeout: float, kinds: tuple[str, ...] = (),
         with_fixtures: bool = True, jobs: int = 1, log: Any = None, only: tuple[int, ...] = ()) -> list[Outcome]:
    """`cases` mutated inputs spread round-robin over the seeds (of `kinds`, default all), `jobs` at a time;
    `only` replays just those case numbers."""
    preload()
    seeds = [s for s in build_seeds(seed_dir, with_fixtures) if not kinds or s.kind in kinds]
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="robokit-fuzz-") as tmp:
        scratch = Path(tmp)
        base = baselines(seeds, scratch, timeout)
        running: dict[int, tuple[Seed, str, Path, _Running]] = {}
        for case in [*(only or range(cases)), None]:
            while running and (case is None or len(running) >= jobs):
                first = min(running)
                seed, mutation, work, child = running.pop(first)
                outcome = _outcome(seed, first, mutation, child.result(), base[seed.name], timeout)
                shutil.rmtree(work, ignore_errors=True)
                outcomes.append(outcome)
                if log is not None and outcome.status in FINDINGS:
                    log(f"[{outcome.status}] case {first} {seed.name} {mutation}: {outcome.detail}")
            if case is not None:
                seed = seeds[case % len(seeds)]
                work, mutation = _prepare(seed, case, rng_seed, scratch)
                running[case] = (seed, mutation, work, _Running(seed, work / "in", work, timeout))
    return outcomes


def summary(outcomes: list[Outcome]) -> str:
    counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "typed", *FINDINGS)}
    kinds = sorted({o.seed.split(":")[0] for o in outcomes})
    return (f"fuzz: {len(outcomes)} cases over {len(kinds)} kinds ({', '.join(kinds)}): "
            f"{counts['traceback']} tracebacks, {counts['hang']} hangs, {counts['crash']} crashes, "
            f"{counts['silent-loss']} silent losses ({counts['ok']} read cleanly, {counts['typed']} refused "
            "with a robokit error)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="RNG seed: the same seed replays the same cases")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case before it counts as a hang")
    parser.add_argument("--kind", action="append", default=[], help="only these seed kinds (repeat)")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument("--only", type=int, action="append", default=[], help="replay only this case (repeat)")
    parser.add_argument("--seeds", type=Path, default=Path("build/fuzz-seeds"))
    parser.add_argument("--report", type=Path, default=Path("build/fuzz-report.json"))
    args = parser.parse_args()
    started = time.perf_counter()
    shutil.rmtree(args.seeds, ignore_errors=True)  # seeds made by this checkout's writers
    outcomes = fuzz(args.cases, args.seed, args.seeds, args.timeout, tuple(args.kind), jobs=args.jobs,
                    log=lambda m: print(m, flush=True), only=tuple(args.only))
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps([asdict(o) for o in outcomes], indent=1, default=str))
    print(f"{summary(outcomes)} in {time.perf_counter() - started:.0f} s; details in {args.report}")
    return int(any(o.status in FINDINGS for o in outcomes))


if __name__ == "__main__":
    sys.exit(main())
