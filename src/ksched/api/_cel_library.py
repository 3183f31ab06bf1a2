"""The Kubernetes CEL base library for device selectors, over the engine's own standard.

# staging/src/k8s.io/apiserver/pkg/cel/environment/base.go (the base environment at the
# compatibility version 1.35 uses): ext.Strings version 2 (github.com/google/cel-go
# ext/strings.go), library.Lists and library.Regex (k8s.io/apiserver/pkg/cel/library
# lists.go, regex.go), ext.Sets (ext/sets.go); compile.go adds ext.Bindings (cel.bind).
The engine has the CEL standard functions and macros; the functions here are registered
with it by name (a receiver-style call gets the receiver as its first argument). cel.bind,
a macro the engine lacks, is rewritten into an equivalent one-element ``map``.
Upstream's URL, IP, CIDR and Format libraries, ``string.format`` and the two-variable
comprehensions are refused when a selector is compiled, naming the function.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from ._cel_cost import ERR_BIND_IDENT, NAMESPACED, Node, tokenize

__all__ = [
    "LIBRARY",
    "LibraryError",
    "check_references",
    "rewrite_binds",
]


class LibraryError(ValueError):
    """A library function's runtime error; the message is cel-go's."""


# ---- cel.bind -------------------------------------------------------------------------


def rewrite_binds(expression: str) -> str:
    """``expression`` with each ``cel.bind(v, init, expr)`` as ``[init].map(v, expr)[0]``.

    The comprehension variable scopes as the bind does: ``init`` is read in the enclosing
    scope, ``v`` shadows an outer name inside ``expr`` only.

    Raises:
        ValueError: the variable is not a simple identifier (cel-go's macro error).
    """
    if "bind" not in expression:
        return expression
    spans = tokenize(expression)
    for i in range(len(spans) - 3):
        head = [t[1] for t in spans[i : i + 4]]
        if head != ["cel", ".", "bind", "("] or (i > 0 and spans[i - 1][1] == "."):
            continue
        args, close = _split_args(expression, spans, i + 4)
        if len(args) != 3:
            continue
        var, init, body = (a.strip() for a in args)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            raise ValueError(ERR_BIND_IDENT)
        start, end = spans[i][2], spans[close][3]
        bound = f"[{rewrite_binds(init)}].map({var}, {rewrite_binds(body)})[0]"
        return expression[:start] + bound + rewrite_binds(expression[end:])
    return expression


def _split_args(
    text: str, spans: list[tuple[str, str, int, int]], first: int
) -> tuple[list[str], int]:
    """The argument texts of a call whose ``(`` precedes ``spans[first]``, and the index
    of its ``)``."""
    depth, args = 0, []
    start = spans[first][2] if first < len(spans) else len(text)
    for j in range(first, len(spans)):
        kind, tok, begin, _ = spans[j]
        if kind != "op":
            continue
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            if depth == 0:
                args.append(text[start:begin])
                return args, j
            depth -= 1
        elif tok == "," and depth == 0:
            args.append(text[start:begin])
            start = spans[j + 1][2] if j + 1 < len(spans) else len(text)
    return [], len(spans) - 1


# ---- references the environment declares ---------------------------------------------

# The CEL standard environment (cel-go checker/standard.go) and optional types.
_STANDARD = frozenset(
    [
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "bool",
        "dyn",
        "type",
        "timestamp",
        "duration",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getFullYear",
        "getHours",
        "getMilliseconds",
        "getMinutes",
        "getMonth",
        "getSeconds",
        "hasValue",
        "value",
        "or",
        "orValue",
        "optional.of",
        "optional.none",
        "optional.ofNonZeroValue",
    ]
)
_TWO_VARIABLES = "two-variable comprehensions"
# Upstream's base environment has these; ksched does not evaluate them.
_UNSUPPORTED = {
    "format": "string formatting of ext.Strings",
    **dict.fromkeys(
        [
            "url",
            "isURL",
            "getScheme",
            "getHost",
            "getHostname",
            "getPort",
            "getEscapedPath",
            "getQuery",
        ],
        "URL library",
    ),
    **dict.fromkeys(
        [
            "ip",
            "cidr",
            "isIP",
            "isCIDR",
            "containsIP",
            "containsCIDR",
            "family",
            "isUnspecified",
            "isLoopback",
            "isLinkLocalMulticast",
            "isLinkLocalUnicast",
            "isGlobalUnicast",
            "masked",
            "prefixLength",
            "isCanonical",
        ],
        "IP and CIDR libraries",
    ),
    **dict.fromkeys(
        ["all", "exists", "existsOne", "transformList", "transformMap", "transformMapEntry"],
        _TWO_VARIABLES,
    ),
}


def check_references(tree: Node, functions: frozenset[str]) -> set[str]:
    """The library functions ``tree`` calls; checks every name it references.

    ``functions`` are the names declared besides the standard ones and this library.

    Raises:
        ValueError: an undeclared variable or function (cel-go's "undeclared reference"),
            or a function of a library ksched does not evaluate.
    """
    called: set[str] = set()
    _walk(tree, _GLOBALS, functions, called)
    return called


# Namespaces of upstream libraries ksched does not evaluate.
_NAMESPACES = {"format": "Format library", "ip": "IP library"}
# The variable and the type names a selector may reference.
_GLOBALS = frozenset(
    (
        "device",
        *("bool", "bytes", "double", "dyn", "int", "list", "map", "null_type", "string"),
        *("type", "uint"),
    )
)


def _walk(node: Node, scope: frozenset[str], functions: frozenset[str], called: set[str]) -> None:
    kind = node[0]
    if kind == "const":
        return
    if kind == "ident":
        if node[1] not in scope:
            if node[1] in _NAMESPACES:  # format.named(...), ip.isCanonical(...)
                raise ValueError(f"the Kubernetes {_NAMESPACES[node[1]]} is not supported")
            raise ValueError(f"undeclared reference to '{node[1]}'")
        return
    if kind == "select":
        _walk(node[1], scope, functions, called)
        return
    if kind in ("list", "map"):
        for item in node[1]:
            _walk(item, scope, functions, called)
        return
    if kind == "bind":
        _walk(node[2], scope, functions, called)
        _walk(node[3], scope | {node[1]}, functions, called)
        return
    if kind == "comp":
        _, range_, var, init, cond, step, result, _name = node
        _walk(range_, scope, functions, called)
        inner = scope | {var, "__result__"}
        for part in (init, cond, step, result):
            _walk(part, inner, functions, called)
        return
    _, fn, target, args = node
    if _UNSUPPORTED.get(fn) == _TWO_VARIABLES and target is not None and len(args) == 3:
        raise ValueError(f"{fn} ({_TWO_VARIABLES}) is not supported")
    # The operands first, as cel-go's checker reports them.
    if target is not None:
        _walk(target, scope, functions, called)
    for arg in args:
        _walk(arg, scope, functions, called)
    if fn in LIBRARY:
        called.add(fn)
    elif fn in _UNSUPPORTED and fn not in functions:
        raise ValueError(f"{fn} ({_UNSUPPORTED[fn]}) is not supported")
    elif not (fn[0] in "_@!-" or fn in _STANDARD or fn in functions):
        raise ValueError(f"undeclared reference to '{fn}'")


# ---- values ---------------------------------------------------------------------------


def _no_overload(fn: str, *args: object) -> LibraryError:
    kinds = ", ".join(_type_name(a) for a in args)
    return LibraryError(f"no such overload: {fn}({kinds})")


def _type_name(value: object) -> str:
    names = {bool: "bool", int: "int", float: "double", str: "string", bytes: "bytes"}
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, Mapping):
        return "map"
    return names.get(type(value), type(value).__name__)


def _str(fn: str, *values: object) -> None:
    for v in values:
        if not isinstance(v, str):
            raise _no_overload(fn, *values)


def _int(fn: str, *values: object) -> list[int]:
    out = []
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool):
            raise _no_overload(fn, *values)
        out.append(v)
    return out


def cel_equal(a: object, b: object) -> bool:
    """CEL equality: numbers across int, uint and double; bool is no number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(cel_equal(a[k], b[k]) for k in a)
    return bool(a == b)


# ---- ext.Strings, version 2 ----------------------------------------------------------


def _char_at(s: object, i: object) -> str:
    _str("charAt", s)
    (i,) = _int("charAt", i)
    assert isinstance(s, str)
    if i < 0 or i > len(s):
        raise LibraryError(f"index out of range: {i}")
    return s[i] if i < len(s) else ""


def _index_of(s: object, sub: object, *offset: object) -> int:
    if isinstance(s, (list, tuple)) and not offset:
        return next((i for i, x in enumerate(s) if cel_equal(x, sub)), -1)
    _str("indexOf", s, sub)
    offset_ = _int("indexOf", *offset)
    assert isinstance(s, str) and isinstance(sub, str)
    off = offset_[0] if offset_ else 0
    if sub == "":
        return off
    if off < 0:
        raise LibraryError(f"index out of range: {off}")
    return -1 if off >= len(s) else s.find(sub, off)


def _last_index_of(s: object, sub: object, *offset: object) -> int:
    if isinstance(s, (list, tuple)) and not offset:
        return next((i for i in range(len(s) - 1, -1, -1) if cel_equal(s[i], sub)), -1)
    _str("lastIndexOf", s, sub)
    offset_ = _int("lastIndexOf", *offset)
    assert isinstance(s, str) and isinstance(sub, str)
    if not offset:
        if sub == "":
            return len(s)
        if len(s.encode()) < len(sub.encode()):
            return -1
        off = len(s) - 1
    else:
        off = offset_[0]
        if sub == "":
            return off
    if off < 0:
        raise LibraryError(f"index out of range: {off}")
    if off >= len(s):
        return -1
    return s.rfind(sub, 0, min(off, len(s) - len(sub)) + len(sub))


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
# Go's unicode.IsSpace (strings.TrimSpace).
_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)


def _lower_ascii(s: object) -> str:
    _str("lowerAscii", s)
    return str(s).translate(_LOWER)


def _upper_ascii(s: object) -> str:
    _str("upperAscii", s)
    return str(s).translate(_UPPER)


def _trim(s: object) -> str:
    _str("trim", s)
    return str(s).strip(_SPACE)


def _replace(s: object, old: object, new: object, *limit: object) -> str:
    _str("replace", s, old, new)
    limit_ = _int("replace", *limit)
    count = limit_[0] if limit_ else -1
    return str(s).replace(str(old), str(new), count if count >= 0 else -1)


def _split(s: object, sep: object, *limit: object) -> list[str]:
    _str("split", s, sep)
    limit_ = _int("split", *limit)
    text, separator = str(s), str(sep)
    n = limit_[0] if limit_ else -1
    if n == 0:
        return []
    if separator == "":  # Go's strings.SplitN: one element per character
        if n < 0 or n >= len(text):
            return list(text)
        return [*text[: n - 1], text[n - 1 :]]
    return text.split(separator, n - 1 if n > 0 else -1)


def _substring(s: object, start: object, *end: object) -> str:
    _str("substring", s)
    first, *ends = _int("substring", start, *end)
    text = str(s)
    if not ends:
        if first < 0 or first > len(text):
            raise LibraryError(f"index out of range: {first}")
        return text[first:]
    last = ends[0]
    if first > last:
        raise LibraryError(f"invalid substring range. start: {first}, end: {last}")
    for i in (first, last):
        if i < 0 or i > len(text):
            raise LibraryError(f"index out of range: {i}")
    return text[first:last]


def _join(items: object, *sep: object) -> str:
    if not isinstance(items, (list, tuple)):
        raise _no_overload("join", items, *sep)
    _str("join", *sep)
    for item in items:
        if not isinstance(item, str):
            raise LibraryError(f"join: invalid input: {item}")
    return str(sep[0] if sep else "").join(items)


_QUOTE = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def _quote(s: object) -> str:
    _str("strings.quote", s)
    text = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in str(s))
    return '"' + "".join(_QUOTE.get(c, c) for c in text) + '"'


# ---- library.Lists ------------------------------------------------------------------


def _list(fn: str, value: object) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise _no_overload(fn, value)
    return list(value)


def _is_sorted(value: object) -> bool:
    items = _list("isSorted", value)
    try:
        return all(not (b < a) for a, b in itertools.pairwise(items))
    except TypeError as exc:
        raise _no_overload("isSorted", value) from exc


def _sum(value: object) -> object:
    items = _list("sum", value)
    if not items:
        return 0
    total: Any = timedelta(0) if isinstance(items[0], timedelta) else 0
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, float, timedelta)):
            raise _no_overload("sum", item)
        total = total + item
    return total


def _extreme(name: str) -> Callable[[object], object]:
    def pick(value: object) -> object:
        items = _list(name, value)
        if not items:
            raise LibraryError(f"{name} called on empty list")
        try:
            return min(items) if name == "min" else max(items)
        except TypeError as exc:
            raise _no_overload(name, value) from exc

    return pick


# ---- library.Regex ------------------------------------------------------------------


# Perl syntax RE2 (Go's regexp) refuses and Python's re would accept.
_NOT_RE2 = re.compile(r"\(\?(=|!|<=|<!|P=)|\\[1-9]")


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    unsupported = _NOT_RE2.search(pattern)
    if unsupported:
        what = (
            "invalid escape sequence"
            if unsupported[0][0] == "\\"
            else ("invalid or unsupported Perl syntax")
        )
        raise LibraryError(f"Illegal regex: error parsing regexp: {what}: `{unsupported[0]}`")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise LibraryError(f"Illegal regex: {exc}") from exc


def _find(s: object, pattern: object) -> str:
    _str("find", s, pattern)
    m = _regex(str(pattern)).search(str(s))
    return "" if m is None else m[0]


def _find_all(s: object, pattern: object, *limit: object) -> list[str]:
    _str("findAll", s, pattern)
    limit_ = _int("findAll", *limit)
    n = limit_[0] if limit_ else -1
    out: list[str] = []
    previous_end = -1
    for m in _regex(str(pattern)).finditer(str(s)):
        if n >= 0 and len(out) >= n:
            break
        # Go's FindAllString: an empty match abutting the preceding match is dropped.
        if m.start() == m.end() == previous_end:
            continue
        out.append(m[0])
        previous_end = m.end()
    return out


# ---- ext.Sets ---------------------------------------------------------------------------


def _contains_all(fn: str, items: object, sub: object) -> bool:
    whole, part = _list(fn, items), _list(fn, sub)
    return all(any(cel_equal(x, y) for x in whole) for y in part)


def _sets_intersects(a: object, b: object) -> bool:
    left, right = _list("sets.intersects", a), _list("sets.intersects", b)
    return any(any(cel_equal(x, y) for y in right) for x in left)


# Arguments each function takes, the receiver counted: (fewest, most).
_ARITY = {
    "charAt": (2, 2),
    "indexOf": (2, 3),
    "lastIndexOf": (2, 3),
    "replace": (3, 4),
    "split": (2, 3),
    "substring": (2, 3),
    "join": (1, 2),
    "findAll": (2, 3),
    "sets.contains": (2, 2),
    "sets.equivalent": (2, 2),
    "sets.intersects": (2, 2),
}


def _overloads(fn: str, impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl`` failing as cel-go's dispatch does for arguments no overload takes."""
    fewest, most = _ARITY.get(fn, (1, 1) if fn != "find" else (2, 2))

    def call(*args: Any) -> Any:
        if not fewest <= len(args) <= most:
            raise _no_overload(fn, *args)
        return impl(*args)

    return call


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    # ext.Strings (version 2)
    "charAt": _char_at,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "lowerAscii": _lower_ascii,
    "upperAscii": _upper_ascii,
    "replace": _replace,
    "split": _split,
    "substring": _substring,
    "trim": _trim,
    "join": _join,
    "strings.quote": _quote,
    # library.Lists (indexOf and lastIndexOf above take lists too)
    "isSorted": _is_sorted,
    "sum": _sum,
    "min": _extreme("min"),
    "max": _extreme("max"),
    # library.Regex
    "find": _find,
    "findAll": _find_all,
    # ext.Sets
    "sets.contains": lambda a, b: _contains_all("sets.contains", a, b),
    "sets.equivalent": lambda a, b: (
        _contains_all("sets.equivalent", a, b) and _contains_all("sets.equivalent", b, a)
    ),
    "sets.intersects": _sets_intersects,
}
LIBRARY: dict[str, Callable[..., Any]] = {n: _overloads(n, f) for n, f in _FUNCTIONS.items()}
"""The library functions by the name a selector calls them with."""
assert {n for n in LIBRARY if "." in n} <= NAMESPACED
