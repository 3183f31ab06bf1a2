"""NodeToStatus: the compact form a batch Filter pass hands over reads as the dict form."""

from __future__ import annotations

import numpy as np

from ksched.framework import Code, NodeToStatus, Status

NAMES = ["n0", "n1", "n2", "n3", "n4"]
INDEX = {n: i for i, n in enumerate(NAMES)}
CPU = Status(Code.UNSCHEDULABLE, ("Insufficient cpu",))
TAINT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",))


def _compact() -> NodeToStatus:
    # Rows 3, 0, 4 (in evaluation order) rejected; rows 1 and 2 not listed.
    return NodeToStatus.of_rows(
        NAMES, INDEX, np.array([3, 0, 4]), np.array([0, 1, 0]), [CPU, TAINT]
    )


def test_compact_form_reads_like_the_dict_form() -> None:
    compact = _compact()
    assert len(compact) == 3
    assert compact.get("n3") is CPU and compact.get("n0") is TAINT
    assert compact.get("n1") is compact.absent and compact.get("elsewhere") is compact.absent
    assert "n4" in compact and "n2" not in compact and "elsewhere" not in compact
    assert sorted((s.message, k) for s, k in compact.counts()) == [
        ("Insufficient cpu", 2),
        ("node(s) had untolerated taint(s)", 1),
    ]
    assert list(compact.items()) == [("n3", CPU), ("n0", TAINT), ("n4", CPU)]
    assert len(compact) == 3 and compact.get("n0") is TAINT  # spelled out, same answers


def test_counts_of_the_dict_form_group_shared_objects() -> None:
    statuses = NodeToStatus()
    statuses.update([("a", CPU), ("b", CPU), ("c", TAINT)])
    assert sorted((s.message, k) for s, k in statuses.counts()) == [
        ("Insufficient cpu", 2),
        ("node(s) had untolerated taint(s)", 1),
    ]


def test_update_adopts_a_compact_form_and_set_spells_it_out() -> None:
    absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't satisfy plugin(s) [X]",))
    merged = NodeToStatus(absent)
    merged.update(_compact())
    assert merged.absent is absent and len(merged) == 3 and merged.get("n4") is CPU
    merged.set("n1", TAINT)
    assert dict(merged.items()) == {"n3": CPU, "n0": TAINT, "n4": CPU, "n1": TAINT}
    # Into statuses already listing nodes, a compact form merges node by node.
    more = NodeToStatus()
    more.set("n9", TAINT)
    more.update(_compact())
    assert len(more) == 4 and more.get("n9") is TAINT and more.get("n3") is CPU
