"""robokit's version, from the installed package's metadata (pyproject.toml is its one source)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("robokit")
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"
