"""NodeAffinity: the pod's nodeSelector and node affinity, and scheduler-enforced affinity.

# pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go
# Selector semantics: staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity
Required terms are ORed; a term's requirements are ANDed; an empty term, or one that
does not parse, matches no node (a pod's required affinity is parsed lazily, as
upstream: a broken term only fails itself). Score sums the weights of the matching
preferred terms (pod's and the configured ``addedAffinity``'s), normalized so the best
node gets 100. The batch forms run the same terms over the node table's label columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from .._errors import ConfigError, ManifestError
from ..api import (
    Node,
    NodeSelector,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    read_object,
)
from ..api import NodeAffinity as NodeAffinitySpec
from ..framework import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    PreFilterResult,
    QueueingHint,
    Status,
    default_normalize_score,
    default_normalize_scores,
)
from ..framework.batch import (
    NODE_AFFINITY,
    NODE_SELECTOR,
    POD_NODE_AFFINITY,
    POD_NODE_SELECTOR,
    BoolArray,
    Capabilities,
    IntArray,
    NodeTable,
    SignFragment,
    node_selector_signer,
)
from .inter_pod_affinity._validation import aggregate, node_term_errors, parse_int64

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NodeAffinity",
    "NodeAffinityArgs",
]

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

PRE_FILTER_STATE_KEY = "PreFilterNodeAffinity"
PRE_SCORE_STATE_KEY = "PreScoreNodeAffinity"

_POD_MISMATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_POD,))
_ENFORCED_MISMATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_ENFORCED,))
_CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_CONFLICT,))

_NAME_FIELD = "metadata.name"
_IN, _NOT_IN, _EXISTS, _DOES_NOT_EXIST, _GT, _LT = range(6)
_OPS = {"In": _IN, "NotIn": _NOT_IN, "Exists": _EXISTS, "DoesNotExist": _DOES_NOT_EXIST,
        "Gt": _GT, "Lt": _LT}  # fmt: skip

# (label key, operator, values, the integer of Gt/Lt)
_Expr = tuple[str, int, frozenset[str], int]
# (field key, In?, value)
_Field = tuple[str, bool, str]


class _Term:
    """A node selector term that parsed: its requirements, ready to match."""

    __slots__ = ("exprs", "fields")

    def __init__(self, exprs: tuple[_Expr, ...], fields: tuple[_Field, ...]) -> None:
        self.exprs = exprs
        self.fields = fields

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        for key, op, values, number in self.exprs:
            value = labels.get(key)
            if op == _IN:
                if value is None or value not in values:
                    return False
            elif op == _NOT_IN:
                if value is not None and value in values:
                    return False
            elif op == _EXISTS:
                if value is None:
                    return False
            elif op == _DOES_NOT_EXIST:
                if value is not None:
                    return False
            else:
                have = None if value is None else parse_int64(value)
                if have is None or (have <= number if op == _GT else have >= number):
                    return False
        if name:  # upstream skips field requirements for a node without a name
            for key, is_in, want in self.fields:
                got = name if key == _NAME_FIELD else ""
                if (got == want) is not is_in:
                    return False
        return True


def _compile_term(term: NodeSelectorTerm, path: str) -> tuple[_Term | None, list[str]]:
    """The term ready to match, or its parse errors. Callers skip empty terms."""
    errors = node_term_errors(term, path)
    if errors:
        return None, errors
    exprs = tuple(
        (
            r.key,
            _OPS[r.operator],
            frozenset(r.values),
            (parse_int64(r.values[0]) or 0) if r.operator in ("Gt", "Lt") else 0,
        )
        for r in term.match_expressions
    )
    fields = tuple((r.key, r.operator == "In", r.values[0]) for r in term.match_fields)
    return _Term(exprs, fields), []


def _is_empty(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


class _NodeSelector:
    """Terms ORed. Terms that did not parse are dropped; their errors are kept."""

    __slots__ = ("errors", "terms")

    def __init__(self, selector: NodeSelector, path: str) -> None:
        terms: list[_Term] = []
        errors: list[str] = []
        for i, term in enumerate(selector.terms):
            if _is_empty(term):
                continue
            compiled, errs = _compile_term(term, f"{path}nodeSelectorTerms[{i}]")
            if compiled is None:
                errors.extend(errs)
            else:
                terms.append(compiled)
        self.terms = tuple(terms)
        self.errors = tuple(errors)

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        return any(term.matches(name, labels) for term in self.terms)


# ---- batch forms: the same matching over a NodeTable's label columns ---------------


def _codes(table: NodeTable, key: str, rows: IntArray | None) -> tuple[IntArray, dict[str, int]]:
    codes, vocabulary = table.label_codes(key)
    return (codes if rows is None else codes[rows]), vocabulary


def _in_mask(codes: IntArray, vocabulary: dict[str, int], values: frozenset[str]) -> BoolArray:
    wanted = [vocabulary[v] for v in values if v in vocabulary]
    if not wanted:
        return np.zeros(len(codes), dtype=np.bool_)
    if len(wanted) == 1:
        one: BoolArray = codes == wanted[0]
        return one
    return np.isin(codes, wanted)


def _int_mask(codes: IntArray, vocabulary: dict[str, int], greater: bool, number: int) -> BoolArray:
    """Gt/Lt: the label parses as an int64 above (below) ``number``; absent: no match."""

    def test(value: str) -> bool:
        have = parse_int64(value)
        return have is not None and (have > number if greater else have < number)

    lookup = np.fromiter(map(test, vocabulary), np.bool_, len(vocabulary))
    lookup = np.append(lookup, False)  # code -1 (absent) reads the last entry
    result: BoolArray = lookup[codes]
    return result


def _expr_mask(expr: _Expr, table: NodeTable, rows: IntArray | None) -> BoolArray:
    key, op, values, number = expr
    codes, vocabulary = _codes(table, key, rows)
    if op == _IN:
        return _in_mask(codes, vocabulary, values)
    if op == _NOT_IN:
        return ~_in_mask(codes, vocabulary, values)
    if op == _EXISTS:
        present: BoolArray = codes >= 0
        return present
    if op == _DOES_NOT_EXIST:
        absent: BoolArray = codes < 0
        return absent
    return _int_mask(codes, vocabulary, op == _GT, number)


def _term_mask(term: _Term, table: NodeTable, rows: IntArray | None) -> BoolArray:
    """``term.matches`` on every row of ``table`` (or on ``rows``)."""
    size = len(table) if rows is None else len(rows)
    mask: BoolArray = np.ones(size, dtype=np.bool_)
    for expr in term.exprs:
        mask &= _expr_mask(expr, table, rows)
    if not term.fields:
        return mask
    fields: BoolArray = np.ones(size, dtype=np.bool_)
    for key, is_in, want in term.fields:
        hit: BoolArray
        if key != _NAME_FIELD:  # a node has no other field: it reads as ""
            hit = np.full(size, want == "", dtype=np.bool_)
        else:
            row = table.index.get(want)
            hit = np.zeros(size, dtype=np.bool_)
            if row is not None:
                if rows is None:
                    hit[row] = True
                else:
                    hit = rows == row
        fields &= hit if is_in else ~hit
    nameless = table.index.get("")
    if nameless is not None:  # field requirements do not apply to a node without a name
        fields |= (np.arange(size) if rows is None else rows) == nameless
    return mask & fields


def _selector_mask(selector: _NodeSelector, table: NodeTable) -> BoolArray:
    """``selector.matches`` on every row: its terms ORed."""
    mask: BoolArray = np.zeros(len(table), dtype=np.bool_)
    for term in selector.terms:
        mask |= _term_mask(term, table, None)
    return mask


class _RequiredNodeAffinity:
    """A pod's nodeSelector and required node affinity (upstream RequiredNodeAffinity)."""

    __slots__ = ("affinity", "selector")

    def __init__(self, pod: Pod) -> None:
        self.selector = tuple(pod.spec.node_selector.items())
        affinity = pod.spec.affinity
        required = None
        if affinity is not None and affinity.node_affinity is not None:
            required = affinity.node_affinity.required
        self.affinity = None if required is None else _NodeSelector(required, "")

    def matches(self, node: Node) -> bool:
        labels = node.metadata.labels
        for key, value in self.selector:
            if labels.get(key) != value:
                return False
        affinity = self.affinity
        return affinity is None or affinity.matches(node.metadata.name, labels)

    def mask(self, table: NodeTable) -> BoolArray:
        """``matches`` on every row of ``table``."""
        mask: BoolArray
        if self.affinity is None:
            mask = np.ones(len(table), dtype=np.bool_)
        else:
            mask = _selector_mask(self.affinity, table)
        for key, value in self.selector:
            codes, vocabulary = table.label_codes(key)
            code = vocabulary.get(value)
            if code is None:
                mask[:] = False
            else:
                mask &= codes == code
        return mask

    def match_or_broken(self, node: Node) -> tuple[bool, bool]:
        """(matched, broken): broken when no term matched and some did not parse."""
        if not self.matches(node):
            labels = node.metadata.labels
            selector_ok = all(labels.get(k) == v for k, v in self.selector)
            return False, selector_ok and self.affinity is not None and bool(self.affinity.errors)
        return True, False


class _PreferredTerms:
    """Weighted preferred terms; terms with weight 0 or no requirement are left out."""

    __slots__ = ("terms",)

    def __init__(self, terms: tuple[tuple[int, _Term], ...]) -> None:
        self.terms = terms

    @classmethod
    def parse(
        cls, terms: Sequence[PreferredSchedulingTerm], path: str
    ) -> tuple[_PreferredTerms | None, str | None]:
        parsed: list[tuple[int, _Term]] = []
        errors: list[str] = []
        for i, term in enumerate(terms):
            if term.weight == 0 or _is_empty(term.preference):
                continue
            compiled, errs = _compile_term(term.preference, f"{path}[{i}]")
            if compiled is None:
                errors.extend(errs)
            else:
                parsed.append((term.weight, compiled))
        if errors:
            return None, aggregate(errors)
        return cls(tuple(parsed)), None

    def score(self, name: str, labels: Mapping[str, str]) -> int:
        return sum(weight for weight, term in self.terms if term.matches(name, labels))

    def add_scores(self, table: NodeTable, rows: IntArray, scores: IntArray) -> None:
        """Add ``score`` of each of ``rows`` to ``scores``."""
        for weight, term in self.terms:
            scores[_term_mask(term, table, rows)] += weight


def _pod_preferred(pod: Pod) -> tuple[_PreferredTerms | None, str | None]:
    affinity = pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None, None
    preferred = affinity.node_affinity.preferred
    if not preferred:
        return None, None
    return _PreferredTerms.parse(preferred, "")


def _pinned_names(required: NodeSelector) -> frozenset[str] | None:
    """The node names the required terms pin with matchFields metadata.name In, or None
    when some term leaves every node possible (terms are ORed)."""
    if not required.terms:
        return None
    names: set[str] = set()
    for term in required.terms:
        term_names: set[str] | None = None
        for req in term.match_fields:
            if req.key == _NAME_FIELD and req.operator == "In":
                values = set(req.values)
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


@attrs.frozen
class _PreFilterState:
    required: _RequiredNodeAffinity
    pinned: frozenset[str] | None = None
    """The node names PreFilter narrowed the nodes to (None: not narrowed)."""

    def clone(self) -> _PreFilterState:
        return self


@attrs.frozen
class _PreScoreState:
    preferred: _PreferredTerms | None

    def clone(self) -> _PreScoreState:
        return self


# ---- args --------------------------------------------------------------------------

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_ARG_FIELDS = frozenset({"addedAffinity", "apiVersion", "kind"})
_MANIFEST_PREFIX = "Pod default/args: spec.affinity.nodeAffinity"


@attrs.frozen(kw_only=True)
class NodeAffinityArgs:
    """NodeAffinityArgs: ``addedAffinity`` is enforced on every pod of the profile."""

    added_affinity: NodeAffinitySpec | None = None

    @classmethod
    def from_dict(cls, args: Mapping[str, Any] | None) -> NodeAffinityArgs:
        if args is None:
            return cls()
        if not isinstance(args, Mapping):
            raise ConfigError(f"NodeAffinity: args: expected a mapping, got {args!r}")
        unknown = sorted(set(args) - _ARG_FIELDS)
        if unknown:
            raise ConfigError(f'NodeAffinity: args: unknown field "{unknown[0]}"')
        added = args.get("addedAffinity")
        if added is None:
            return cls()
        if not isinstance(added, Mapping):
            raise ConfigError(
                f"NodeAffinity: args.addedAffinity: expected a mapping, got {added!r}"
            )
        manifest = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "args"},
            "spec": {"affinity": {"nodeAffinity": dict(added)}},
        }
        try:
            pod = read_object(manifest)
        except ManifestError as exc:
            message = str(exc).replace(_MANIFEST_PREFIX, "args.addedAffinity", 1)
            raise ConfigError(f"NodeAffinity: {message}") from exc
        assert isinstance(pod, Pod) and pod.spec.affinity is not None
        spec = pod.spec.affinity.node_affinity or NodeAffinitySpec()
        if spec.required is None and isinstance(added.get(_REQUIRED), Mapping):
            # Present but without terms: a selector that matches no node.
            spec = attrs.evolve(spec, required=NodeSelector())
        return cls(added_affinity=spec)


# ---- the plugin --------------------------------------------------------------------


class NodeAffinity:
    """Filters by the pod's nodeSelector and required node affinity; scores by preference."""

    name = "NodeAffinity"
    capabilities = Capabilities(
        node_local_filter=True,
        node_local_score=True,
        pod_fields=(POD_NODE_SELECTOR, POD_NODE_AFFINITY),
    )

    def __init__(self, args: NodeAffinityArgs) -> None:
        self.args = args
        self._added_selector: _NodeSelector | None = None
        self._added_preferred: _PreferredTerms | None = None
        added = args.added_affinity
        errors: list[str] = []
        if added is not None:
            if added.required is not None:
                self._added_selector = _NodeSelector(added.required, f"addedAffinity.{_REQUIRED}.")
                errors.extend(self._added_selector.errors)
            if added.preferred:
                self._added_preferred, error = _PreferredTerms.parse(
                    added.preferred, f"addedAffinity.{_PREFERRED}"
                )
                if error is not None:
                    errors.append(error)
        if errors:
            raise ConfigError(f"NodeAffinity: args.{aggregate(errors)}")

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeAffinity:
        return cls(NodeAffinityArgs.from_dict(args))

    # -- EnqueueExtensions

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        affinity = pod.spec.affinity
        return (
            (NODE_AFFINITY, affinity.node_affinity if affinity is not None else None),
            (NODE_SELECTOR, node_selector_signer(pod)),
        )

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # With queueing hints there is no pre-check, so taint updates need no registration.
        event = ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
        return [ClusterEventWithHint(event, self._node_changed)]

    def _node_changed(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.QUEUE
        added = self._added_selector
        if added is not None and not added.matches(new.metadata.name, new.metadata.labels):
            return QueueingHint.SKIP
        required = _RequiredNodeAffinity(pod)
        matched, broken = required.match_or_broken(new)
        if broken:
            return QueueingHint.QUEUE
        if not matched:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        was_matched, broken = required.match_or_broken(old)
        if broken:
            return QueueingHint.QUEUE
        # Only a change from no match to match helps the pod.
        return QueueingHint.SKIP if was_matched else QueueingHint.QUEUE

    # -- PreFilter / Filter

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None:
        affinity = pod.spec.affinity
        required = None
        if affinity is not None and affinity.node_affinity is not None:
            required = affinity.node_affinity.required
        if required is None and self._added_selector is None and not pod.spec.node_selector:
            return SKIP
        pinned = None if required is None else _pinned_names(required)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(_RequiredNodeAffinity(pod), pinned))
        if pinned is None:
            return None
        if not pinned:
            return _CONFLICT
        return PreFilterResult(pinned)

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        added = self._added_selector
        if added is not None and not added.matches(node.metadata.name, node.metadata.labels):
            return _ENFORCED_MISMATCH
        pre: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        required = pre.required if pre is not None else _RequiredNodeAffinity(pod)
        if not required.matches(node):
            return _POD_MISMATCH
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        pre: _PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        required = pre.required if pre is not None else _RequiredNodeAffinity(pod)
        mask = required.mask(table)
        if self._added_selector is not None:
            mask &= _selector_mask(self._added_selector, table)
        return mask

    # -- PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        preferred, error = _pod_preferred(pod)
        if error is not None:
            return Status(Code.ERROR, (error,))
        if preferred is None and self._added_preferred is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        name, labels = node.metadata.name, node.metadata.labels
        count = 0
        if self._added_preferred is not None:
            count += self._added_preferred.score(name, labels)
        pre: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if pre is not None:
            preferred = pre.preferred
        else:
            preferred, error = _pod_preferred(pod)
            if error is not None:
                raise ValueError(error)
        if preferred is not None:
            count += preferred.score(name, labels)
        return count

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        pre: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if pre is None:
            return None  # the per-node method parses (and reports) the pod's terms
        scores: IntArray = np.zeros(len(rows), dtype=np.int64)
        for preferred in (self._added_preferred, pre.preferred):
            if preferred is not None:
                preferred.add_scores(table, rows, scores)
        return scores

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        default_normalize_score(scores)

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> None:
        default_normalize_scores(scores)
