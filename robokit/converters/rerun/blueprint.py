"""The default blueprint of a robokit recording: camera views, joint plots, the 3D scene and the text logs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def blueprint(cameras: Sequence[str], series: Sequence[str], root: str) -> Any:
    """Cameras in a grid on the left; the 3D scene (in the TF root frame) over tabs of plots and logs on the right."""
    import rerun.blueprint as rrb

    scene = rrb.Spatial3DView(name="scene", origin="/", contents=["/tf/**", "/cameras/**", "/derived/ee_path"],
                              spatial_information=rrb.SpatialInformation(target_frame=root) if root else None)
    plots = [rrb.TimeSeriesView(name=name, origin=f"/{name}") for name in series]
    logs = [rrb.TextLogView(name="log", origin="/", contents=["/task", "/episode/events", "/robokit/log", "/**"])]
    right = rrb.Vertical(scene, rrb.Tabs(*plots, *logs))
    views = [rrb.Spatial2DView(name=c.removeprefix("cameras/"), origin=f"/{c}") for c in cameras]
    layout = rrb.Horizontal(rrb.Grid(*views), right, column_shares=[1, 2]) if views else right
    return rrb.Blueprint(layout, collapse_panels=False)
