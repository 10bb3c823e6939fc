"""OpenUSD scenes (`--to usd`): Gaussian splats, UsdPhysics collision meshes, cameras, lights."""

from robokit.converters.usd.writer import UsdWriter

USD = UsdWriter()

__all__ = ["USD", "UsdWriter"]
