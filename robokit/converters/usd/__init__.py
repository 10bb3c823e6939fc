"""OpenUSD scenes (`--to usd`): Gaussian splats, UsdPhysics collision meshes, cameras, lights."""
