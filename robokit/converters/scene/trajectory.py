"""Camera trajectories from a recording: each camera's tf chain composed to the tf root, at its frame times.

The recording's tf root (e.g. `base_link`) is taken as the scene's world. Frames named `*optical*` have the
camera axes of their stream's convention (REP-103); other camera frames are FLU bodies (x forward, z up)
and are turned into optical axes first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.spatial.transform import Rotation

from robokit.converters.scene.model import SceneCamera
from robokit.frames import camera_change, convert_pose_stream
from robokit.resample import interpolate
from robokit.timeline import CameraInfo, Episode, ImageStream, PoseStream

_BODY_TO_OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])  # optical axes in FLU
DEFAULT_FOV_DEG = 60.0


def episode_cameras(episode: Episode, convention: str, prefix: str = "", channels: Sequence[str] | None = None
                    ) -> tuple[list[SceneCamera], list[str]]:
    """One SceneCamera per camera frame of `episode` (poses in `convention`), plus notes on cameras left out.

    `channels` limits them to those camera channels (None: every camera).
    """
    by_child = {s.child_frame: s for s in episode.poses.values() if s.child_frame}
    cameras: list[SceneCamera] = []
    notes: list[str] = []
    seen: set[str] = set()
    for channel, image in sorted(episode.cameras.items()):
        if channels is not None and channel not in channels:
            continue
        frame = image.frame_id or (image.camera.frame_id if image.camera else "")
        if frame in seen:
            continue
        seen.add(frame)
        if frame not in by_child:
            notes.append(f"{episode.id}: camera {channel} left out: its frame {frame or '(none)'!r} has no tf pose")
            continue
        chain = _chain(by_child, frame)
        name = f"{prefix}{channel.split('/')[0]}"
        poses = _compose(chain, image, name)
        if poses is None:
            notes.append(f"{episode.id}: camera {channel} left out: its tf chain does not overlap its frames")
            continue
        intrinsics = image.camera or _default_intrinsics(image, frame)
        if image.camera is None:
            notes.append(f"{episode.id}: camera {channel} has no camera_info; assuming a {DEFAULT_FOV_DEG:g}° fov")
        cameras.append(SceneCamera(name, intrinsics, convert_pose_stream(poses, convention),
                                   source=f"{episode.meta.source_uri}#{channel}"))
    return cameras, notes


def _chain(by_child: dict[str, PoseStream], frame: str) -> list[PoseStream]:
    """The pose streams from `frame` up to the tf root (child first); a cycle stops the walk."""
    chain: list[PoseStream] = []
    current = frame
    while current in by_child and len(chain) <= len(by_child):
        chain.append(by_child[current])
        current = by_child[current].parent_frame
    return chain


def _compose(chain: list[PoseStream], image: ImageStream, name: str) -> PoseStream | None:
    """root_from_camera at the image's frame times (one pose when the whole chain is static)."""
    moving = [s for s in chain if not s.static and len(s) > 1]
    if moving:
        start, end = max(s.start_ns for s in moving), min(s.end_ns for s in moving)
        times = image.timestamps[(image.timestamps >= start) & (image.timestamps <= end)]
        if len(times) == 0:
            return None
    else:
        times = image.timestamps[:1] if len(image) else np.zeros(1, dtype=np.int64)
    rotation = Rotation.identity(len(times))
    translation = np.zeros((len(times), 3))
    for link in chain:  # child first: root_from_cam = link_n ⋯ link_1
        still = link.take(np.zeros(len(times), dtype=np.int64), times)
        at = interpolate(link, times) if any(link is m for m in moving) else still
        link_rotation = Rotation.from_quat(at.quaternion)
        translation = link_rotation.apply(translation) + at.translation
        rotation = link_rotation * rotation
    convention = chain[0].convention
    if "optical" not in chain[0].child_frame:
        rotation = rotation * Rotation.from_matrix(_BODY_TO_OPTICAL @ camera_change("opencv", convention))
    return PoseStream(f"{name}/pose", np.asarray(times, dtype=np.int64), translation, rotation.as_quat(),
                      parent_frame=chain[-1].parent_frame, child_frame=chain[0].child_frame, convention=convention,
                      static=not moving, is_camera=True)


def _default_intrinsics(image: ImageStream, frame: str) -> CameraInfo:
    """Pinhole intrinsics with a DEFAULT_FOV_DEG vertical field of view, centred."""
    return CameraInfo.from_fov(max(image.width, 1), max(image.height, 1), DEFAULT_FOV_DEG, frame_id=frame)
