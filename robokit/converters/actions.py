"""What an exported action means: the recorded channel it comes from, absolute or delta, its unit.

Every dataset writer stores it (LeRobot: `features.action.info`, `features.actions.info` when the source named it
so; RLDS: `metadata.json`; WebDataset: `dataset.json`; MCAP: the `robokit.episode` record), so a consumer such as
`robokit sim replay` need not guess whether a row is a target or a step. Kinds: `absolute` (the channel as
recorded, e.g. joint commands), `delta` (next minus current value of `source` on the export grid, 0 on the last
frame: the absolute target is `source + action`) and `velocity` (d`source`/dt, unit per second).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from robokit.converters.prepare import PreparedEpisode
from robokit.timeline.derived import base_channel

KINDS = {"_delta": "delta", "_velocity": "velocity"}
_DESCRIPTIONS = {
    "absolute": "{source} as recorded, resampled to the export grid",
    "delta": "next minus current {source} on the export grid (0 on the last frame); target = {source} + action",
    "velocity": "rate of change of {source} per second on the export grid",
}


@dataclass(frozen=True)
class ActionMeaning:
    """One dataset's action: the exported channel, its recorded source, kind, unit and the state beside it."""

    channel: str
    source: str
    kind: str  # absolute | delta | velocity
    unit: str
    state: str

    @property
    def description(self) -> str:
        return _DESCRIPTIONS.get(self.kind, "{source}").format(source=self.source)

    def to_dict(self) -> dict[str, str]:
        return {**asdict(self), "description": self.description}

    @classmethod
    def from_dict(cls, value: object) -> ActionMeaning | None:
        """The meaning stored by `to_dict`, None when `value` is not one."""
        if not isinstance(value, dict) or not all(isinstance(value.get(k), str) for k in ("channel", "kind")):
            return None
        return cls(value["channel"], str(value.get("source", value["channel"])), value["kind"],
                   str(value.get("unit", "")), str(value.get("state", "")))


def meaning_of_channel(channel: str, unit: str = "", state: str = "") -> ActionMeaning:
    """The meaning of action channel `channel`, from its name (`_delta` and `_velocity` are derived)."""
    kind = next((k for suffix, k in KINDS.items() if channel.endswith(suffix)), "absolute")
    return ActionMeaning(channel, base_channel(channel), kind, unit, state)


def meaning_of(p: PreparedEpisode) -> ActionMeaning | None:
    """The meaning of a prepared episode's action, None when it has none."""
    if p.action is None:
        return None
    return meaning_of_channel(p.action.name, p.action.unit or "", p.state.name)
