"""Framework runtime semantics (runtime/framework.go): Filter, PostFilter, Score, Reserve,
Permit, Bind, plugin faults, sync and async plugins."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from ksched.framework import (
    Code,
    CycleState,
    NodeInfo,
    NodeToStatus,
    PreFilterResult,
    Status,
)
from ksched.framework._calls import MAX_PERMIT_TIMEOUT
from ksched.framework.runtime import Framework, WaitingPods
from ksched.testing import (
    Call,
    FakeAsyncBind,
    FakeAsyncFilter,
    FakeFilter,
    FakePermit,
    FakePostFilter,
    FakePreEnqueue,
    make_node,
    make_pod,
)

pytestmark = pytest.mark.anyio

POD = make_pod("p").obj()
NODES = [NodeInfo.of(make_node(f"n{i}").obj()) for i in range(3)]


def framework(
    plugins: Sequence[Any],
    points: Mapping[str, Sequence[str]],
    weights: Mapping[str, int] | None = None,
) -> Framework:
    return Framework(
        profile_name="test",
        plugins={p.name: p for p in plugins},
        points=points,
        weights=weights or {},
        percentage_of_nodes_to_score=None,
        parallelism=4,
        waiting_pods=WaitingPods(),
    )


def says_no(name: str, *nodes: str, code: Code = Code.UNSCHEDULABLE) -> dict[str, Status]:
    """``status_for`` rejecting ``nodes`` with "<name> says no"."""
    return {node: Status(code, (f"{name} says no",)) for node in nodes}


def visits(log: Sequence[Call]) -> list[tuple[str, str]]:
    """(plugin, node) of each Filter call, in order."""
    return [(c.plugin, c.node) for c in log]


# ---- Filter -------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [FakeFilter, FakeAsyncFilter], ids=["sync", "async"])
async def test_filter_stops_at_first_failing_plugin(
    cls: type[FakeFilter | FakeAsyncFilter],
) -> None:
    log: list[Call] = []
    a, b = cls("A", log=log, status_for=says_no("A", "n1")), cls("B", log=log)
    fw = framework([a, b], {"filter": ["A", "B"]})
    outcome = await fw.find_feasible(CycleState(), POD, NODES, start=0, limit=3)
    assert [i.name for i in outcome.feasible] == ["n0", "n2"]
    assert ("B", "n1") not in visits(log)
    assert ("B", "n0") in visits(log) and ("B", "n2") in visits(log)
    status = outcome.statuses.get("n1")
    assert status.code is Code.UNSCHEDULABLE
    assert status.plugin == "A"
    assert status.reasons == ("A says no",)
    assert outcome.unschedulable_plugins == {"A"}
    assert outcome.processed == 3


async def test_filter_stops_when_limit_reached_rotating_from_start() -> None:
    log: list[Call] = []
    fw = framework([FakeFilter("A", log=log)], {"filter": ["A"]})
    outcome = await fw.find_feasible(CycleState(), POD, NODES, start=2, limit=2)
    assert [i.name for i in outcome.feasible] == ["n2", "n0"]
    assert visits(log) == [("A", "n2"), ("A", "n0")]
    assert outcome.processed == 2


@pytest.mark.parametrize("cls", [FakeFilter, FakeAsyncFilter], ids=["sync", "async"])
async def test_filter_plugin_that_raises_is_an_error_naming_it(
    cls: type[FakeFilter | FakeAsyncFilter],
) -> None:
    fw = framework([cls("Boom", raises=RuntimeError("boom"))], {"filter": ["Boom"]})
    outcome = await fw.find_feasible(CycleState(), POD, NODES, start=0, limit=3)
    assert outcome.error is not None
    assert outcome.error.code is Code.ERROR
    assert outcome.error.plugin == "Boom"
    assert '"Boom"' in outcome.error.message
    assert "RuntimeError: boom" in outcome.error.message


async def test_filter_skipped_after_pre_filter_skip() -> None:
    class Pre(FakeFilter):
        def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> Status:
            return Status(Code.SKIP)

    pre = Pre("A", status_for=says_no("A", "n0", "n1", "n2"))
    fw = framework([pre], {"preFilter": ["A"], "filter": ["A"]})
    state = CycleState()
    _, status, _ = await fw.run_pre_filter(state, POD, NODES)
    assert status.is_success
    outcome = await fw.find_feasible(state, POD, NODES, start=0, limit=3)
    assert len(outcome.feasible) == 3
    assert pre.calls == []


async def test_pre_filter_results_intersect_to_empty() -> None:
    class Narrow:
        def __init__(self, name: str, nodes: set[str]) -> None:
            self.name = name
            self.nodes = frozenset(nodes)

        def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> PreFilterResult:
            return PreFilterResult(self.nodes)

    fw = framework([Narrow("A", {"n0"}), Narrow("B", {"n1"})], {"preFilter": ["A", "B"]})
    result, status, rejectors = await fw.run_pre_filter(CycleState(), POD, NODES)
    assert result is None
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == "node(s) didn't satisfy plugin(s) [A, B] simultaneously"
    assert rejectors == {"A", "B"}


# ---- PostFilter ---------------------------------------------------------------------


async def test_post_filter_stops_at_first_success() -> None:
    log: list[Call] = []
    fw = framework(
        [
            FakePostFilter("A", log=log, status=Status(Code.UNSCHEDULABLE, ("a: no",))),
            FakePostFilter("B", log=log, nominate="n1"),
            FakePostFilter("C", log=log, nominate="n2"),
        ],
        {"postFilter": ["A", "B", "C"]},
    )
    result, status = await fw.run_post_filter(CycleState(), POD, NodeToStatus())
    assert status.is_success
    assert result is not None and result.nominated_node_name == "n1"
    assert [c.plugin for c in log] == ["A", "B"]


async def test_post_filter_all_unschedulable_collects_reasons() -> None:
    log: list[Call] = []
    unresolvable = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("b: no",))
    fw = framework(
        [
            FakePostFilter("A", log=log, status=Status(Code.UNSCHEDULABLE, ("a: no",))),
            FakePostFilter("B", log=log, status=unresolvable),
        ],
        {"postFilter": ["A", "B"]},
    )
    result, status = await fw.run_post_filter(CycleState(), POD, NodeToStatus())
    assert result is None
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("a: no", "b: no")
    assert [c.plugin for c in log] == ["A", "B"]


async def test_post_filter_error_stops() -> None:
    log: list[Call] = []
    fw = framework(
        [FakePostFilter("A", log=log, status=Status.error("broken")), FakePostFilter("B", log=log)],
        {"postFilter": ["A", "B"]},
    )
    _, status = await fw.run_post_filter(CycleState(), POD, NodeToStatus())
    assert status.code is Code.ERROR and status.plugin == "A"
    assert [c.plugin for c in log] == ["A"]


# ---- Score --------------------------------------------------------------------------


class Scorer:
    def __init__(self, name: str, scores: Mapping[str, int], *, double: bool = False) -> None:
        self.name = name
        self.scores = scores
        self.double = double

    def score(self, state: CycleState, pod: Any, node_info: NodeInfo) -> int:
        return self.scores[node_info.name]

    def score_extensions(self) -> Any:
        return self if self.double else None

    def normalize_score(self, state: CycleState, pod: Any, scores: dict[str, int]) -> None:
        for name in scores:
            scores[name] *= 2


class AsyncScorer(Scorer):
    async def score(  # type: ignore[override]  # the async twin of Scorer.score
        self, state: CycleState, pod: Any, node_info: NodeInfo
    ) -> int:
        return self.scores[node_info.name]


@pytest.mark.parametrize("cls", [Scorer, AsyncScorer], ids=["sync", "async"])
async def test_score_normalize_weight_total(cls: type[Scorer]) -> None:
    fw = framework(
        [
            cls("A", {"n0": 10, "n1": 20, "n2": 30}, double=True),
            cls("B", {"n0": 50, "n1": 0, "n2": 1}),
        ],
        {"score": ["A", "B"]},
        weights={"A": 2, "B": 3},
    )
    outcome = await fw.run_score(CycleState(), POD, NODES)
    assert outcome.error is None
    assert outcome.plugin_scores == {
        "A": {"n0": 20, "n1": 40, "n2": 60},
        "B": {"n0": 50, "n1": 0, "n2": 1},
    }
    assert outcome.totals == {"n0": 20 * 2 + 50 * 3, "n1": 80, "n2": 123}


async def test_score_out_of_range_after_normalize_is_error() -> None:
    fw = framework([Scorer("A", {"n0": 60, "n1": 0, "n2": 0}, double=True)], {"score": ["A"]})
    outcome = await fw.run_score(CycleState(), POD, NODES)
    assert outcome.error is not None
    assert outcome.error.code is Code.ERROR
    assert outcome.error.plugin == "A"
    assert "invalid score 120" in outcome.error.message


async def test_score_plugin_that_raises() -> None:
    class Bad:
        name = "Bad"

        def score(self, state: CycleState, pod: Any, node_info: NodeInfo) -> int:
            raise KeyError("x")

    fw = framework([Bad()], {"score": ["Bad"]})
    outcome = await fw.run_score(CycleState(), POD, NODES)
    assert outcome.error is not None and outcome.error.plugin == "Bad"


async def test_score_skipped_after_pre_score_skip() -> None:
    class Skipper(Scorer):
        def pre_score(self, state: CycleState, pod: Any, nodes: Any) -> Status:
            return Status(Code.SKIP)

    fw = framework(
        [Skipper("A", {"n0": 1, "n1": 2, "n2": 3}), Scorer("B", {"n0": 1, "n1": 1, "n2": 1})],
        {"preScore": ["A"], "score": ["A", "B"]},
    )
    state = CycleState()
    assert (await fw.run_pre_score(state, POD, NODES)).is_success
    outcome = await fw.run_score(state, POD, NODES)
    assert set(outcome.plugin_scores) == {"B"}
    assert outcome.totals == {"n0": 1, "n1": 1, "n2": 1}


# ---- Reserve ------------------------------------------------------------------------


class Reserver:
    def __init__(self, name: str, log: list[str], status: Status | None = None) -> None:
        self.name = name
        self.log = log
        self.status = status

    async def reserve(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        self.log.append(f"reserve {self.name}")
        return self.status

    def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        self.log.append(f"unreserve {self.name}")
        if self.name == "B":
            raise RuntimeError("unreserve faults are contained")


async def test_reserve_in_order_unreserve_all_in_reverse() -> None:
    log: list[str] = []
    fw = framework(
        [
            Reserver("A", log),
            Reserver("B", log, Status(Code.UNSCHEDULABLE, ("full",))),
            Reserver("C", log),
        ],
        {"reserve": ["A", "B", "C"]},
    )
    status = await fw.run_reserve(CycleState(), POD, "n0")
    assert status.code is Code.UNSCHEDULABLE and status.plugin == "B"
    assert log == ["reserve A", "reserve B"]
    await fw.run_unreserve(CycleState(), POD, "n0")
    assert log[2:] == ["unreserve C", "unreserve B", "unreserve A"]


# ---- Permit -------------------------------------------------------------------------


async def test_permit_reject_beats_wait() -> None:
    fw = framework(
        [FakePermit("W", wait=10), FakePermit("R", status=Status(Code.UNSCHEDULABLE, ("nope",)))],
        {"permit": ["W", "R"]},
    )
    status, waiting = await fw.run_permit(CycleState(), POD, "n0", now=100.0)
    assert status.code is Code.UNSCHEDULABLE
    assert status.plugin == "R"
    assert waiting is None


async def test_permit_wait_timeouts_capped_at_15_minutes() -> None:
    assert MAX_PERMIT_TIMEOUT == 900.0
    fw = framework(
        [FakePermit("Long", wait=3600), FakePermit("Short", wait=30), FakePermit("Ok")],
        {"permit": ["Long", "Short", "Ok"]},
    )
    status, waiting = await fw.run_permit(CycleState(), POD, "n0", now=100.0)
    assert status.code is Code.WAIT
    assert waiting is not None
    assert waiting.pending == {"Long": 1000.0, "Short": 130.0}
    assert waiting.deadline == 130.0
    assert waiting.node_name == "n0"


async def test_permit_all_success() -> None:
    fw = framework(
        [FakePermit("A"), FakePermit("B", status=Status(Code.SUCCESS))], {"permit": ["A", "B"]}
    )
    status, waiting = await fw.run_permit(CycleState(), POD, "n0", now=0.0)
    assert status.is_success and waiting is None


async def test_permit_plugin_that_raises() -> None:
    class Bad:
        name = "Bad"

        async def permit(self, state: CycleState, pod: Any, node_name: str) -> Status:
            raise ValueError("nope")

    fw = framework([Bad()], {"permit": ["Bad"]})
    status, waiting = await fw.run_permit(CycleState(), POD, "n0", now=0.0)
    assert status.code is Code.ERROR and status.plugin == "Bad" and waiting is None


async def test_waiting_pod_released_when_all_allow() -> None:
    fw = framework([FakePermit("A", wait=10), FakePermit("B", wait=10)], {"permit": ["A", "B"]})
    _, waiting = await fw.run_permit(CycleState(), POD, "n0", now=0.0)
    assert waiting is not None
    waiting.allow("A")
    assert waiting.verdict is None
    waiting.allow("B")
    assert waiting.verdict is not None and waiting.verdict.is_success
    waiting.reject("A", "too late")  # a verdict is final
    assert waiting.verdict.is_success


# ---- Bind ---------------------------------------------------------------------------


async def test_bind_first_non_skip_wins() -> None:
    log: list[Call] = []
    fw = framework(
        [
            FakeAsyncBind("S", log=log, status=Status(Code.SKIP)),
            FakeAsyncBind("E", log=log, status=Status.error("cannot")),
            FakeAsyncBind("Never", log=log, status=None),
        ],
        {"bind": ["S", "E", "Never"]},
    )
    status = await fw.run_bind(CycleState(), POD, "n0")
    assert status.code is Code.ERROR and status.plugin == "E"
    assert [c.plugin for c in log] == ["S", "E"]


async def test_bind_success_stops() -> None:
    log: list[Call] = []
    binders = [FakeAsyncBind("A", log=log, status=None), FakeAsyncBind("B", log=log, status=None)]
    fw = framework(binders, {"bind": ["A", "B"]})
    assert (await fw.run_bind(CycleState(), POD, "n0")).is_success
    assert [c.plugin for c in log] == ["A"]


async def test_bind_all_skip() -> None:
    fw = framework([FakeAsyncBind("S", status=Status(Code.SKIP))], {"bind": ["S"]})
    assert (await fw.run_bind(CycleState(), POD, "n0")).code is Code.SKIP


async def test_bind_that_raises_names_plugin() -> None:
    class Bad:
        name = "Bad"

        def bind(self, state: CycleState, pod: Any, node_name: str) -> None:
            raise OSError("io")

    fw = framework([Bad()], {"bind": ["Bad"]})
    status = await fw.run_bind(CycleState(), POD, "n0")
    assert status.code is Code.ERROR and status.plugin == "Bad"
    assert status.message == 'running "Bad" Bind plugin: OSError: io'


# ---- PreEnqueue ---------------------------------------------------------------------


def test_pre_enqueue_first_rejection_gates() -> None:
    gated = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("gated",))
    fw = framework(
        [FakePreEnqueue("A"), FakePreEnqueue("B", status=gated)], {"preEnqueue": ["A", "B"]}
    )
    status = fw.run_pre_enqueue(POD)
    assert status is not None and status.plugin == "B"
