"""MachineGroup: labelled nodes are reserved for the team that owns them.

A team owns namespaces (namespace label ``ksched.example/team: ml``) and machine groups
(node label ``ksched.example/machine-group: ml``). Filter lets only that team's pods onto
a group's nodes; other teams' pods and pods of no team stay on the shared, unlabelled
nodes. With ``confineTeams: true`` a team's pods also stay off the shared nodes.

PreFilter looks up the pod's team once per attempt (CycleState); Filter compares it with
each node's group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from ksched import Pod
from ksched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    Status,
    parse_plugin_args,
)

__all__ = ["MachineGroup", "MachineGroupArgs"]

NAME: Final = "MachineGroup"
_STATE_KEY: Final = "PreFilter" + NAME

REASON_OTHER_TEAM: Final = "node(s) belonged to another team's machine group"
REASON_NOT_IN_GROUP: Final = "node(s) were not in the team's machine group"


@attrs.frozen(kw_only=True)
class MachineGroupArgs:
    node_label: str = "ksched.example/machine-group"
    """The node label naming the team that owns the node."""
    team_label: str = "ksched.example/team"
    """The namespace label naming the team a pod belongs to."""
    confine_teams: bool = False
    """Keep a team's pods on the team's own nodes (off the shared ones)."""


class MachineGroup:
    """Reserves each machine group's nodes for the team that owns it."""

    name = NAME

    def __init__(self, args: MachineGroupArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> MachineGroup:
        return cls(parse_plugin_args(MachineGroupArgs, args, plugin=NAME), handle)

    def team_of(self, pod: Pod) -> str | None:
        labels = self._handle.namespace_labels(pod.namespace) or {}
        return labels.get(self.args.team_label)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_STATE_KEY, self.team_of(pod))
        return None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        team: str | None = state.read(_STATE_KEY)
        group = node_info.node.labels.get(self.args.node_label)
        if group is None:
            if team is not None and self.args.confine_teams:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_NOT_IN_GROUP)
            return None
        if group != team:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_OTHER_TEAM)
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NAMESPACE, ActionType.ALL)),
        ]
