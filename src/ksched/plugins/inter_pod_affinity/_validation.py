"""Parse errors of label selectors and node selector requirements, worded as upstream.

# staging/src/k8s.io/apimachinery/pkg/labels/selector.go: NewRequirement
# staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go: LabelSelectorAsSelector
# staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go: IsQualifiedName,
#   IsValidLabelValue
# staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go
The scheduler refuses (or ignores, for lazily parsed node affinity) selectors the API
machinery cannot parse; ksched's object model keeps them as written, so the plugins
that must tell the difference ask here. NodeAffinity uses this module too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ...api import LabelSelector, NodeSelectorRequirement, NodeSelectorTerm

__all__ = [
    "aggregate",
    "label_selector_error",
    "node_field_errors",
    "node_label_errors",
    "node_term_errors",
    "parse_int64",
]

_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_RE = re.compile(f"^{_NAME_FMT}$")
_VALUE_FMT = f"({_NAME_FMT})?"
_VALUE_RE = re.compile(f"^{_VALUE_FMT}$")
_DNS_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = rf"{_DNS_LABEL_FMT}(\.{_DNS_LABEL_FMT})*"
_DNS_SUBDOMAIN_RE = re.compile(f"^{_DNS_SUBDOMAIN_FMT}$")
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_DNS_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist")
_NODE_OPS = (*_LABEL_OPS, "Gt", "Lt")
_FIELD_OPS = ("In", "NotIn")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    shown = "".join(f"{' or ' if i else ''}'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_strings(values: Sequence[str]) -> str:
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(_quote(v) for v in values) + "}"


def _invalid(path: str, bad: str, detail: str) -> str:
    return f"{path}: Invalid value: {bad}: {detail}"


def _qualified_name_errors(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_error(_NAME_MSG, _NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errs.append("prefix part must be no more than 253 characters")
            if not _DNS_SUBDOMAIN_RE.match(prefix):
                errs.append(
                    "prefix part " + _regex_error(_DNS_MSG, _DNS_SUBDOMAIN_FMT, "example.com")
                )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _NAME_RE.match(name):
        example = _regex_error(_NAME_MSG, _NAME_FMT, "MyName", "my.name", "123-abc")
        errs.append("name part " + example)
    return errs


def _label_value_errors(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _VALUE_RE.match(value):
        errs.append(_regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: None when Go would refuse it."""
    if not _INT_RE.match(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _join(prefix: str, child: str) -> str:
    return f"{prefix}.{child}" if prefix else child


def _requirement_errors(key: str, op: str, values: Sequence[str], path: str) -> list[str]:
    """The errors of ``labels.NewRequirement`` (the operator is already known valid)."""
    errs: list[str] = []
    key_errs = _qualified_name_errors(key)
    if key_errs:
        errs.append(_invalid(_join(path, "key"), _quote(key), "; ".join(key_errs)))
    values_path = _join(path, "values")
    if op in ("In", "NotIn"):
        if not values:
            errs.append(
                _invalid(
                    values_path,
                    _go_strings(values),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                _invalid(
                    values_path,
                    _go_strings(values),
                    "values set must be empty for exists and does not exist",
                )
            )
    else:  # Gt, Lt
        if len(values) != 1:
            errs.append(
                _invalid(
                    values_path,
                    _go_strings(values),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for i, v in enumerate(values):
            if parse_int64(v) is None:
                errs.append(
                    _invalid(
                        f"{values_path}[{i}]",
                        _quote(v),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, v in enumerate(values):
        value_errs = _label_value_errors(v)
        if value_errs:
            errs.append(_invalid(f"{values_path}[{i}][{key}]", _quote(v), "; ".join(value_errs)))
    return errs


def aggregate(messages: Iterable[str]) -> str:
    """An aggregate error's text: one message as is, several in brackets, duplicates once."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


def label_selector_error(selector: LabelSelector | None) -> str | None:
    """Why ``LabelSelectorAsSelector`` would refuse ``selector`` (None: it parses).

    Like upstream it stops at the first requirement that fails; matchLabels come first
    (in key order, where upstream walks a Go map), then matchExpressions.
    """
    if selector is None:
        return None
    for key in sorted(selector.match_labels):
        value = selector.match_labels[key]
        errs = _requirement_errors(key, "In", (value,), "")
        if errs:
            return aggregate(errs)
    for expr in selector.match_expressions:
        if expr.operator not in _LABEL_OPS:
            return f"{_quote(expr.operator)} is not a valid label selector operator"
        errs = _requirement_errors(expr.key, expr.operator, expr.values, "")
        if errs:
            return aggregate(errs)
    return None


def node_label_errors(reqs: Sequence[NodeSelectorRequirement], path: str) -> list[str]:
    """Errors of a term's matchExpressions; ``path`` names the term (``[0]``...)."""
    errs: list[str] = []
    for i, req in enumerate(reqs):
        p = f"{path}.matchExpressions[{i}]"
        if req.operator not in _NODE_OPS:
            supported = ", ".join(_quote(op) for op in _NODE_OPS)
            errs.append(
                f"{p}.operator: Unsupported value: {_quote(req.operator)}: "
                f"supported values: {supported}"
            )
            continue
        errs.extend(_requirement_errors(req.key, req.operator, req.values, p))
    return errs


def node_field_errors(reqs: Sequence[NodeSelectorRequirement], path: str) -> list[str]:
    """Errors of a term's matchFields: In / NotIn with exactly one value."""
    errs: list[str] = []
    for i, req in enumerate(reqs):
        p = f"{path}.matchFields[{i}]"
        if req.operator in _FIELD_OPS:
            if len(req.values) != 1:
                errs.append(
                    _invalid(f"{p}.values", _go_strings(req.values), "must have one element")
                )
        else:
            supported = ", ".join(_quote(op) for op in _FIELD_OPS)
            errs.append(
                f"{p}.operator: Unsupported value: {_quote(req.operator)}: "
                f"supported values: {supported}"
            )
    return errs


def node_term_errors(term: NodeSelectorTerm, path: str) -> list[str]:
    """Every parse error of one node selector term."""
    return node_label_errors(term.match_expressions, path) + node_field_errors(
        term.match_fields, path
    )
