"""``.json`` inputs (``kubectl get nodes,pods -o json``) are read with the json module, and
what it rejects still gets the YAML loader's error naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ksched.api import _manifest, _validation
from ksched.cli._inputs import InputError, load_inputs
from ksched.cluster import object_key

ITEMS = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    },
]


def test_a_json_list_reads_as_its_yaml_twin(tmp_path: Path) -> None:
    as_json = tmp_path / "cluster.json"
    as_json.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": ITEMS}))
    as_yaml = tmp_path / "cluster.yaml"
    as_yaml.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": ITEMS}))
    assert load_inputs([as_json]).objects == load_inputs([as_yaml]).objects
    assert [type(o).__name__ for o in load_inputs([as_json]).objects] == ["Node", "Pod"]


def test_json_that_only_yaml_reads_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "node.json"
    path.write_text("# a comment\n" + json.dumps(ITEMS[0]))
    assert [object_key(o) for o in load_inputs([path]).objects] == ["n1"]


def test_broken_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"apiVersion": "v1", "kind": ')
    with pytest.raises(InputError, match=rf"{path}: invalid YAML"):
        load_inputs([path])


def test_json_bodies_take_the_serialization_key_and_yaml_the_repr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyed: list[tuple[str, bool]] = []
    real = _manifest.body_key

    def spy(kind: str, data: Any, *, from_json: bool = False) -> _manifest.BodyKey | None:
        keyed.append((kind, from_json))
        return real(kind, data, from_json=from_json)

    monkeypatch.setattr(_validation, "body_key", spy)
    document = {"apiVersion": "v1", "kind": "List", "items": ITEMS}
    as_json, as_yaml = tmp_path / "cluster.json", tmp_path / "cluster.yaml"
    as_json.write_text(json.dumps(document))
    as_yaml.write_text(yaml.safe_dump(document))
    _validation.forget_read_bodies()
    from_json = load_inputs([as_json]).objects
    assert keyed == [("Node", True), ("Pod", True)]
    keyed.clear()
    _validation.forget_read_bodies()
    assert load_inputs([as_yaml]).objects == from_json
    assert keyed == [("Node", False), ("Pod", False)]
