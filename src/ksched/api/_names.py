"""Name and label checks, with the API server's messages word for word.

# staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go (IsDNS1123Label,
# IsDNS1123Subdomain, IsValidPortNum, RegexError, MaxLenError, InclusiveRangeError),
# staging/src/k8s.io/apimachinery/pkg/api/validate/content/kube.go (IsLabelKey,
# IsLabelValue) and .../util/validation/field/errors.go (how an error reads).

Each ``is_*`` function returns the list of problems (empty: valid), as upstream does.
"""

from __future__ import annotations

import re

import attrs

__all__ = [
    "FieldProblem",
    "inclusive_range_error",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_value",
    "is_qualified_name",
    "is_valid_port_num",
    "is_valid_qualified_name",
    "label_value_errors",
    "qualified_name_errors",
]

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)

_DNS1123_LABEL = re.compile(f"^{_DNS1123_LABEL_FMT}$")
_DNS1123_SUBDOMAIN = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_LABEL_KEY = re.compile(f"^{_LABEL_KEY_FMT}$")
_LABEL_VALUE = re.compile(f"^{_LABEL_VALUE_FMT}$")


_VALID_QUALIFIED_NAME = re.compile(f"(?:(?P<prefix>{_DNS1123_SUBDOMAIN_FMT})/)?{_LABEL_KEY_FMT}")
"""The shape of a valid qualified name (lengths aside): one match for the usual case, the
checks below only for a name that may be invalid."""


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def inclusive_range_error(lo: int, hi: int) -> str:
    """upstream InclusiveRangeError."""
    return f"must be between {lo} and {hi}, inclusive"


def _full_match(pattern: re.Pattern[str], value: str) -> bool:
    # Go's $ does not match before a trailing newline; Python's does unless fullmatch.
    return pattern.fullmatch(value) is not None


def is_dns1123_label(value: str) -> list[str]:
    """Problems with ``value`` as an RFC 1123 label (Namespace names)."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _full_match(_DNS1123_LABEL, value):
        if _full_match(_DNS1123_SUBDOMAIN, value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """Problems with ``value`` as an RFC 1123 subdomain (most object names)."""
    errs = []
    if len(value) > 253:
        errs.append(_max_len_error(253))
    if not _full_match(_DNS1123_SUBDOMAIN, value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_valid_qualified_name(value: str) -> bool:
    """``not is_qualified_name(value)``, in one regular-expression match."""
    if len(value) > 253 + 1 + 63:  # longer than the longest prefix and name
        return False
    match = _VALID_QUALIFIED_NAME.fullmatch(value)
    if match is None:
        return False
    prefix = match.group("prefix")
    if prefix is None:
        return len(value) <= 63
    return len(prefix) <= 253 and len(value) - len(prefix) - 1 <= 63


def is_qualified_name(value: str) -> list[str]:
    """Problems with ``value`` as a label key / qualified name (``prefix/name``)."""
    return [] if is_valid_qualified_name(value) else qualified_name_errors(value)


def qualified_name_errors(value: str) -> list[str]:
    """``is_qualified_name`` check by check (IsQualifiedName's own order)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len_error(63))
    if not _full_match(_LABEL_KEY, name):
        errs.append(
            "name part "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_label_value(value: str) -> list[str]:
    """Problems with ``value`` as a label value (empty is valid)."""
    if len(value) <= 63 and _LABEL_VALUE.fullmatch(value) is not None:
        return []
    return label_value_errors(value)


def label_value_errors(value: str) -> list[str]:
    """``is_label_value`` check by check."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len_error(63))
    if not _full_match(_LABEL_VALUE, value):
        errs.append(
            _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errs


def is_valid_port_num(port: int) -> list[str]:
    """Problems with ``port`` as a non-zero port number."""
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def _go_value(value: object) -> str:
    """A value as Go's field errors print it: strings quoted, numbers bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@attrs.frozen
class FieldProblem:
    """One field error as the API server words it (field.Error).

    ``kind`` is ``Invalid``, ``Required``, ``Forbidden``, ``NotSupported``, ``Duplicate``,
    ``NotFound`` or ``UnknownField``; ``warning`` marks a problem ``--no-strict`` lets pass.
    """

    path: str
    kind: str
    detail: str = ""
    value: object = None
    warning: bool = False

    def body(self) -> str:
        """The message after the path, e.g. ``Invalid value: "Web": a lowercase ...``."""
        detail = self.detail
        if self.kind == "Invalid":
            return f"Invalid value: {_go_value(self.value)}: {detail}"
        if self.kind == "Required":
            return f"Required value: {detail}" if detail else "Required value"
        if self.kind == "Forbidden":
            return f"Forbidden: {detail}"
        if self.kind == "NotSupported":
            return f"Unsupported value: {_go_value(self.value)}: supported values: {detail}"
        if self.kind == "Duplicate":
            return f"Duplicate value: {_go_value(self.value)}"
        if self.kind == "NotFound":
            return f"Not found: {_go_value(self.value)}"
        return detail

    def __str__(self) -> str:
        if self.kind == "UnknownField":
            return f'unknown field "{self.path}"'
        return f"{self.path}: {self.body()}"


def invalid(path: str, value: object, detail: str) -> FieldProblem:
    return FieldProblem(path, "Invalid", detail, value)


def required(path: str, detail: str = "") -> FieldProblem:
    return FieldProblem(path, "Required", detail)


def forbidden(path: str, detail: str) -> FieldProblem:
    return FieldProblem(path, "Forbidden", detail)


def not_supported(path: str, value: object, allowed: tuple[str, ...]) -> FieldProblem:
    return FieldProblem(path, "NotSupported", ", ".join(f'"{a}"' for a in allowed), value)


def duplicate(path: str, value: object) -> FieldProblem:
    return FieldProblem(path, "Duplicate", "", value)
