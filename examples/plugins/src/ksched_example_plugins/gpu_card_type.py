"""GpuCardType: nodes with a rare GPU card are kept for the pods that ask for that card.

Nodes say which card they carry with the label ``ksched.example/gpu-card`` (e.g.
``a100``); a pod asks for a card with the annotation of the same key. Without this
plugin any pod may land on the few nodes with a rare card and take them from the pods
that need one. Filter:

- a node with a rare card admits only pods that ask for that card;
- in ``mode: strict`` a pod that asks for a card fits only nodes that have it;
- in ``mode: preferred`` it may also run elsewhere (not on another rare card's nodes),
  and Score gives the nodes with its card 100, the others 0.

Args: ``mode`` (``strict`` | ``preferred``), ``rareCardTypes`` (the reserved card types;
empty: every card type is reserved), ``cardLabel`` (the label/annotation key).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from ksched import Pod
from ksched.framework import (
    MAX_NODE_SCORE,
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
from ksched.framework.batch import SignFragment

__all__ = ["DEFAULT_CARD_LABEL", "GpuCardType", "GpuCardTypeArgs"]

NAME: Final = "GpuCardType"
DEFAULT_CARD_LABEL: Final = "ksched.example/gpu-card"


@attrs.frozen(kw_only=True)
class GpuCardTypeArgs:
    mode: Literal["strict", "preferred"] = "strict"
    rare_card_types: frozenset[str] = frozenset()
    card_label: str = DEFAULT_CARD_LABEL


class GpuCardType:
    """Reserves nodes with a rare GPU card for the pods that ask for it."""

    name = NAME

    def __init__(self, args: GpuCardTypeArgs) -> None:
        self.args = args

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> GpuCardType:
        return cls(parse_plugin_args(GpuCardTypeArgs, args, plugin=NAME))

    def _is_rare(self, card: str | None) -> bool:
        return card is not None and (
            not self.args.rare_card_types or card in self.args.rare_card_types
        )

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        """Filter and Score read only the card the pod asks for: equal pods can share one
        ranking (opportunistic batching of GPU jobs that take a node each)."""
        return ((f"{NAME}/card", pod.metadata.annotations.get(self.args.card_label)),)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        label = self.args.card_label
        card = node_info.node.labels.get(label)
        wanted = pod.metadata.annotations.get(label)
        if card == wanted and card is not None:
            return None
        if self._is_rare(card):
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) had GPU card type {card} reserved for pods that ask for it",
            )
        if wanted is not None and self.args.mode == "strict":
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't have GPU card type {wanted}"
            )
        return None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        # Only a preference needs scores: in strict mode Filter already decided.
        if self.args.mode == "strict" or self.args.card_label not in pod.metadata.annotations:
            return Status(Code.SKIP)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        label = self.args.card_label
        wanted = pod.metadata.annotations.get(label)
        return MAX_NODE_SCORE if node_info.node.labels.get(label) == wanted else 0

    def score_extensions(self) -> None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            )
        ]
