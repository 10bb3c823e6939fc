"""Paths named by dataset metadata: templates expanded with their documented fields only, kept inside the dataset.

Metadata comes from whoever wrote the dataset: a template may not reach attributes or items
(`{chunk_index.__class__}`), ask for absurd widths, or point outside the dataset folder (`../`, an absolute
path, a symlink to elsewhere; symlinks are allowed with `allow_outside`).
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Mapping
from pathlib import Path

from robokit.errors import SourceError

_SPEC = re.compile(r"(0?[1-9]?[0-9])?d?")  # `03d`, `06d`, `d` or nothing: integer padding up to 99 wide


def expand(template: object, fields: Mapping[str, object], where: str) -> str:
    """`template` with each `{field}` / `{field:0Nd}` replaced; SourceError on any other placeholder."""
    if not isinstance(template, str):
        raise SourceError(f"{where}: path template {template!r} is not text")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise SourceError(f"{where}: malformed path template {template!r} ({exc})") from exc
    out: list[str] = []
    for literal, name, spec, conversion in parsed:
        out.append(literal)
        if name is None:
            continue
        if name not in fields or conversion or not _SPEC.fullmatch(spec or ""):
            shown = name + (f":{spec}" if spec else "")
            raise SourceError(f"{where}: path template {template!r}: placeholder {{{shown}}} "
                              f"is not allowed (only {', '.join('{' + f + '}' for f in fields)}, optionally :0Nd)")
        value = fields[name]
        try:
            out.append(format(value, spec or ""))
        except (TypeError, ValueError) as exc:
            raise SourceError(f"{where}: path template {template!r}: {{{name}:{spec}}} does not fit {value!r}") from exc
    return "".join(out)


def inside(root: Path, relative: str, where: str, allow_outside: bool = False) -> Path:
    """`root / relative`, refused (SourceError) when it leaves `root`: by name always, by symlink unless allowed."""
    path = root / relative
    if not Path(os.path.normpath(path)).is_relative_to(os.path.normpath(root)):
        raise SourceError(f"{where}: {relative!r} points outside the dataset folder {root}")
    if not allow_outside:
        check_link(root, path, where)
    return path


def check_link(root: Path, path: Path, where: str) -> None:
    """SourceError when `path` (inside `root` by name) resolves outside `root` through a symlink."""
    if not path.resolve().is_relative_to(root.resolve()):
        raise SourceError(f"{where}: {path} is a symlink to {path.resolve()}, outside the dataset folder {root} "
                          "(pass --allow-outside to read it)")


def dataset_files(root: Path, allow_outside: bool = False) -> list[Path]:
    """Every file of a dataset folder (hidden ones such as `.git/` left out), sorted, symlinked folders followed
    once; SourceError for a symlink leading outside `root` unless `allow_outside`."""
    files: list[Path] = []
    seen: set[Path] = set()
    pending = [root]
    while pending:
        folder = pending.pop()
        if folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            raise SourceError(f"{folder}: cannot list ({exc.strerror})") from exc
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            if entry.is_symlink() and not allow_outside:
                check_link(root, path, str(root))
            if entry.is_dir():
                pending.append(path)
            elif entry.is_file():
                files.append(path)
    return sorted(files)


def template_path(root: Path, template: object, fields: Mapping[str, object], where: str,
                  allow_outside: bool = False) -> Path:
    """The file a metadata path template names for `fields`, checked to stay inside `root`."""
    return inside(root, expand(template, fields, where), where, allow_outside)
