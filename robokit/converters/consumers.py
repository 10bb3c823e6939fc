"""The real package that loads each format's output, and whether it is importable here.

`robokit check` runs robokit's own structural check on every output and, when the format's consumer
imports, the consumer too; it reports which one validated each output (`--strict` fails without it).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Consumer:
    """A format's real consumer: the name shown to users and the modules its check imports."""

    name: str
    modules: tuple[str, ...]

    def available(self) -> bool:
        """True when every module imports (a broken install counts as missing); cached per process."""
        return _importable(self.modules)


@cache
def _importable(modules: tuple[str, ...]) -> bool:
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:  # ImportError, or a package that is installed but fails to import
            return False
    return True


LEROBOT = Consumer("lerobot", ("lerobot.datasets.lerobot_dataset",))
TFDS = Consumer("tensorflow_datasets", ("tensorflow", "tensorflow_datasets"))
WEBDATASET = Consumer("webdataset", ("webdataset",))
MCAP = Consumer("mcap decoders + rosbags", ("mcap_protobuf.decoder", "mcap_ros2.decoder", "rosbags.highlevel"))
PANDAS = Consumer("pandas", ("pandas",))
JSON = Consumer("json", ("json",))  # Viam image exports are JSON lines read with any JSON parser
MUJOCO = Consumer("mujoco", ("mujoco",))
PXR = Consumer("pxr (usd-core)", ("pxr.Usd",))
RERUN = Consumer("rerun-sdk", ("rerun",))  # the rerun writer names it as its `consumer`

BY_FORMAT: dict[str, Consumer] = {
    "lerobot": LEROBOT, "rlds": TFDS, "webdataset": WEBDATASET, "mcap": MCAP,
    "viam-binary": JSON, "viam-sequence": PANDAS, "mjcf": MUJOCO, "usd": PXR,
}


def consumer_of(format_name: str, converter: object = None) -> Consumer | None:
    """The consumer of a format: the converter's own `consumer` attribute (plugins), else the built-in one."""
    own = getattr(converter, "consumer", None)
    return own if isinstance(own, Consumer) else BY_FORMAT.get(format_name)
