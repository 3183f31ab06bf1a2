"""Label selectors (LabelSelectorAsSelector) and node selectors (nodeaffinity helpers)."""

from __future__ import annotations

import pytest

from ksched.api import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    read_object,
)

LABELS = {"zone": "a", "size": "10", "gpu": ""}


@pytest.mark.parametrize(
    ("operator", "key", "values", "expected"),
    [
        ("In", "zone", ("a", "b"), True),
        ("In", "zone", ("b",), False),
        ("In", "missing", ("a",), False),
        ("NotIn", "zone", ("b",), True),
        ("NotIn", "zone", ("a",), False),
        ("NotIn", "missing", ("a",), True),
        ("Exists", "gpu", (), True),
        ("Exists", "missing", (), False),
        ("DoesNotExist", "missing", (), True),
        ("DoesNotExist", "zone", (), False),
        ("Bogus", "zone", ("a",), False),
    ],
)
def test_label_requirement(
    operator: str, key: str, values: tuple[str, ...], expected: bool
) -> None:
    req = LabelSelectorRequirement(key=key, operator=operator, values=values)
    assert req.matches(LABELS) is expected
    sel = LabelSelector(match_expressions=(req,))
    assert sel.matches(LABELS) is expected


def test_empty_label_selector_matches_everything() -> None:
    sel = LabelSelector()
    assert sel.is_empty
    assert sel.matches({})
    assert sel.matches(LABELS)


def test_label_selector_ands_labels_and_expressions() -> None:
    sel = LabelSelector(
        match_labels={"zone": "a"},
        match_expressions=(LabelSelectorRequirement(key="size", operator="Exists"),),
    )
    assert sel.matches(LABELS)
    assert not sel.matches({"zone": "a"})
    assert not sel.matches({"zone": "b", "size": "1"})


def test_with_labels_adds_in_requirements() -> None:
    sel = LabelSelector(match_labels={"app": "web"}).with_labels({"rev": "7"})
    assert sel.matches({"app": "web", "rev": "7"})
    assert not sel.matches({"app": "web", "rev": "8"})
    assert not sel.matches({"app": "web"})


@pytest.mark.parametrize(
    ("operator", "key", "values", "expected"),
    [
        ("In", "zone", ("a",), True),
        ("NotIn", "zone", ("a",), False),
        ("Exists", "zone", (), True),
        ("DoesNotExist", "zone", (), False),
        ("Gt", "size", ("9",), True),
        ("Gt", "size", ("10",), False),
        ("Lt", "size", ("11",), True),
        ("Lt", "size", ("10",), False),
        ("Gt", "missing", ("1",), False),
        ("Gt", "zone", ("1",), False),  # label is not an integer
        ("Gt", "size", ("x",), False),  # value is not an integer
        ("Gt", "size", ("1", "2"), False),  # exactly one value
        ("Lt", "size", (), False),
    ],
)
def test_node_requirement(operator: str, key: str, values: tuple[str, ...], expected: bool) -> None:
    req = NodeSelectorRequirement(key=key, operator=operator, values=values)
    assert req.matches(LABELS) is expected


@pytest.mark.parametrize(
    ("operator", "values", "expected"),
    [
        ("In", ("n1",), True),
        ("In", ("n2",), False),
        ("In", ("n1", "n2"), False),  # upstream: exactly one value
        ("NotIn", ("n2",), True),
        ("NotIn", ("n1",), False),
        ("Exists", (), False),
    ],
)
def test_match_fields_metadata_name(operator: str, values: tuple[str, ...], expected: bool) -> None:
    term = NodeSelectorTerm(
        match_fields=(
            NodeSelectorRequirement(key="metadata.name", operator=operator, values=values),
        )
    )
    assert term.matches("n1", {}) is expected


def test_match_fields_other_key_never_matches() -> None:
    req = NodeSelectorRequirement(key="metadata.uid", operator="In", values=("n1",))
    assert not req.matches_field("n1")


def test_empty_term_matches_nothing() -> None:
    assert not NodeSelectorTerm().matches("n1", LABELS)
    assert not NodeSelector(terms=(NodeSelectorTerm(),)).matches("n1", LABELS)


def test_empty_node_selector_matches_nothing() -> None:
    assert not NodeSelector().matches("n1", LABELS)


def test_terms_are_ored_requirements_anded() -> None:
    zone_b = NodeSelectorRequirement(key="zone", operator="In", values=("b",))
    zone_a = NodeSelectorRequirement(key="zone", operator="In", values=("a",))
    big = NodeSelectorRequirement(key="size", operator="Gt", values=("100",))
    name = NodeSelectorRequirement(key="metadata.name", operator="In", values=("n1",))
    assert not NodeSelectorTerm(match_expressions=(zone_a, big)).matches("n1", LABELS)
    assert NodeSelectorTerm(match_expressions=(zone_a,), match_fields=(name,)).matches("n1", LABELS)
    assert not NodeSelectorTerm(match_expressions=(zone_a,), match_fields=(name,)).matches(
        "n2", LABELS
    )
    sel = NodeSelector(
        terms=(
            NodeSelectorTerm(match_expressions=(zone_b,)),
            NodeSelectorTerm(match_expressions=(zone_a,)),
        )
    )
    assert sel.matches("n1", LABELS)


def test_manifest_rejects_unknown_operator() -> None:
    from ksched._errors import ManifestError

    data = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "k", "operator": "Near"}]}
                        ]
                    }
                }
            }
        },
    }
    with pytest.raises(ManifestError) as info:
        read_object(data)
    assert str(info.value).startswith(
        "Pod default/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].operator: unsupported value 'Near'"
    )
