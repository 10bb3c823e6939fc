"""Export destinations: a local folder, or an fsspec URL written locally and uploaded at the end."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from robokit.errors import OptionError


def is_url(dest: str) -> bool:
    return "://" in dest and not dest.startswith("file://")


def _check_protocol(dest: str) -> None:
    """OptionError, before any conversion, when fsspec or the URL's file system backend is missing or unknown."""
    protocol = dest.split("://", 1)[0]
    try:
        import fsspec

        fsspec.get_filesystem_class(protocol)
    except ImportError as exc:
        raise OptionError(f"--out {dest}: the {protocol}:// file system needs a package that is not installed "
                          f"({exc})") from exc
    except ValueError:
        raise OptionError(f"--out {dest}: unknown file system protocol {protocol!r}") from None


class Destination:
    """`local` is where writers write; `publish()` uploads it when the destination is remote."""

    def __init__(self, dest: str) -> None:
        self.dest = dest
        self._staging: Path | None = None
        if is_url(dest):
            _check_protocol(dest)
            self._staging = Path(tempfile.mkdtemp(prefix="robokit-export-"))
            self.local = self._staging
        else:
            self.local = Path(dest.removeprefix("file://"))
            if self.local.exists() and not self.local.is_dir():
                raise OptionError(f"--out {self.local}: exists and is not a folder")

    def __enter__(self) -> Destination:
        return self

    def publish(self) -> None:
        if self._staging is None:
            return
        import fsspec

        try:
            fs, root = fsspec.core.url_to_fs(self.dest)
            for path in sorted(p for p in self._staging.rglob("*") if p.is_file()):
                target = f"{root.rstrip('/')}/{path.relative_to(self._staging).as_posix()}"
                fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
                fs.put_file(str(path), target)
        except (OSError, ValueError, ImportError) as exc:
            raise OptionError(f"upload to {self.dest} failed: {exc}") from exc

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
