"""The worst-case cost of a CEL device selector, as cel-go's estimator counts it.

# github.com/google/cel-go checker/cost.go (costs per node, comprehension cost, the string
# traversal factor 0.1, list 10 and map 30 creation costs, saturation at MaxUint64);
# k8s.io/apiserver/pkg/cel/library/cost.go (quantity, semver and string functions);
# staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go (the ``device`` type and
# its size bounds: domain 63, id 32, driver 63, attribute value 64 characters, 32 entries a
# map).
The engine ksched evaluates with exposes no syntax tree and no cost tracking, so the
expression is parsed here (CEL's grammar; macros expanded as cel-go's parser does) and
costed with cel-go's rules. The same walk with the sizes of one device instead of the
declared bounds gives that device's evaluation a bound, which ksched checks against the
runtime limit before evaluating.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "ERR_BIND_IDENT",
    "MAX_UINT64",
    "NAMESPACED",
    "Sizes",
    "estimate_cost",
    "parse",
    "tokenize",
]

# ext/bindings.go: the macro's error for a non-identifier variable.
ERR_BIND_IDENT = "cel.bind() variable names must be simple identifiers"
# Functions called with a namespace (ext/sets.go, ext/strings.go strings.quote).
NAMESPACED = frozenset(
    (
        "sets.contains",
        "sets.equivalent",
        "sets.intersects",
        "strings.quote",
        "optional.of",
        "optional.none",
        "optional.ofNonZeroValue",
    )
)

MAX_UINT64 = 2**64 - 1
_LIST_CREATE, _MAP_CREATE = 10, 30
_TRAVERSAL = 0.1
_REGEX_FACTOR = 0.25

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<num>0x[0-9a-fA-F]+u?|\d+\.\d+(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+|u)?)
  | (?P<str>[rR]?[bB]?[rR]?(?:\"\"\"(?:[^\\]|\\.)*?\"\"\"|'''(?:[^\\]|\\.)*?'''
        |"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%<>!?:.,()\[\]{}])
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  )""",
    re.VERBOSE | re.DOTALL,
)

# A node: ("const", size, "string" or "", int value or None) | ("ident", name)
# | ("select", operand, field, test_only) | ("call", function, target or None, args)
# | ("list", items) | ("map", entries) | ("comp", range, var, init, cond, step, result, kind)
# | ("bind", var, init, result)
Node = tuple[Any, ...]

_MACROS = {"all": 2, "exists": 2, "exists_one": 2, "map": (2, 3), "filter": 2}
_RESULT = "__result__"


def tokenize(text: str) -> list[tuple[str, str, int, int]]:
    """The tokens of a CEL expression: (kind, text, start, end); kind is num, str, op or id.

    Raises:
        ValueError: a character no token starts with.
    """
    out: list[tuple[str, str, int, int]] = []
    pos, text = 0, text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos or m.lastgroup is None:
            raise ValueError(f"cannot read the expression at offset {pos}")
        out.append((m.lastgroup, m[m.lastgroup], m.start(m.lastgroup), m.end()))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = [(kind, token) for kind, token, _, _ in tokenize(text)]
        self.i = 0

    def peek(self) -> str:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else ""

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise ValueError("unexpected end of expression")
        tok = self.tokens[self.i]
        if want is not None and tok[1] != want:
            raise ValueError(f"expected {want!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def expr(self) -> Node:
        cond = self.binary(0)
        if self.peek() == "?":
            self.take()
            yes = self.expr()
            self.take(":")
            no = self.expr()
            return ("call", "_?_:_", None, [cond, yes, no])
        return cond

    _LEVELS: tuple[tuple[str, ...], ...] = (
        ("||",),
        ("&&",),
        ("==", "!=", "<", "<=", ">", ">=", "in"),
        ("+", "-"),
        ("*", "/", "%"),
    )

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            left = ("call", f"_{op}_", None, [left, right])
        return left

    def unary(self) -> Node:
        if self.peek() in ("!", "-"):
            op = self.take()[1]
            operand = self.unary()
            if op == "-" and operand[0] == "const":
                if len(operand) > 3 and operand[3] is not None:
                    return ("const", 1, "", -operand[3])  # a negative literal
                return operand
            return ("call", f"{op}_", None, [operand])
        return self.member(self.primary())

    def args(self, close: str) -> list[Node]:
        out: list[Node] = []
        while self.peek() != close:
            out.append(self.expr())
            if self.peek() != ",":
                break
            self.take(",")
        self.take(close)
        return out

    def member(self, node: Node) -> Node:
        while self.peek() in (".", "["):
            if self.take()[1] == "[":
                index = self.expr()
                self.take("]")
                node = ("call", "_[_]", None, [node, index])
                continue
            name = self.take()[1]
            if node[0] == "ident" and f"{node[1]}.{name}" in NAMESPACED and self.peek() == "(":
                self.take("(")
                node = ("call", f"{node[1]}.{name}", None, self.args(")"))
                continue
            if self.peek() != "(":
                node = ("select", node, name, False)
                continue
            self.take("(")
            args = self.args(")")
            node = _macro(node, name, args) or ("call", name, node, args)
        return node

    def primary(self) -> Node:
        kind, text = self.take()
        if kind == "num":
            return ("const", 1, "", _int_value(text))
        if kind == "str":
            return ("const", _string_size(text), "string")
        if text == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if text == "[":
            return ("list", self.args("]"))
        if text == "{":
            entries: list[Node] = []
            while self.peek() != "}":
                entries.append(self.expr())
                self.take(":")
                entries.append(self.expr())
                if self.peek() != ",":
                    break
                self.take(",")
            self.take("}")
            return ("map", entries)
        if text == ".":
            return self.primary()
        if kind != "id":
            raise ValueError(f"unexpected {text!r}")
        if text in ("true", "false", "null"):
            return ("const", 1, "")
        if self.peek() == "(":
            self.take("(")
            args = self.args(")")
            if text == "has" and len(args) == 1 and args[0][0] == "select":
                return ("select", args[0][1], args[0][2], True)
            return ("call", text, None, args)
        return ("ident", text)


def _string_size(text: str) -> int:
    body = text.lstrip("rRbB")
    quote = 3 if body[:3] in ('"""', "'''") else 1
    return len(body[quote:-quote])


def _int_value(text: str) -> int | None:
    """An integer literal's value (a split limit), None for a double."""
    text = text.rstrip("uU")
    if text.startswith(("0x", "0X")):
        return int(text, 16)
    return int(text) if text.isdigit() else None


def _macro(target: Node, name: str, args: list[Node]) -> Node | None:
    """cel-go's macro expansion into a comprehension (parser/macro.go).

    ``cel.bind(var, init, expr)`` (ext/bindings.go) becomes a ``bind`` node: cel-go expands
    it to a comprehension over an empty list whose accumulator is ``var``.
    """
    if name == "bind" and target == ("ident", "cel") and len(args) == 3:
        if args[0][0] != "ident":
            raise ValueError(ERR_BIND_IDENT)
        return ("bind", args[0][1], args[1], args[2])
    arity = _MACROS.get(name)
    if arity is None or len(args) not in (arity if isinstance(arity, tuple) else (arity,)):
        return None
    if args[0][0] != "ident":
        return None
    var = args[0][1]
    accu: Node = ("ident", _RESULT)
    const: Node = ("const", 1, "")
    empty: Node = ("list", [])
    if name == "all":
        cond: Node = ("call", "@not_strictly_false", None, [accu])
        step: Node = ("call", "_&&_", None, [accu, args[1]])
        return ("comp", target, var, const, cond, step, accu, name)
    if name == "exists":
        cond = ("call", "@not_strictly_false", None, [("call", "!_", None, [accu])])
        step = ("call", "_||_", None, [accu, args[1]])
        return ("comp", target, var, const, cond, step, accu, name)
    if name == "exists_one":
        bump: Node = ("call", "_+_", None, [accu, const])
        step = ("call", "_?_:_", None, [args[1], bump, accu])
        result: Node = ("call", "_==_", None, [accu, const])
        return ("comp", target, var, const, ("const", 0, ""), step, result, name)
    grow: Node = ("call", "_+_", None, [accu, ("list", [args[-1] if name == "map" else args[0]])])
    if name == "filter" or len(args) == 3:
        step = ("call", "_?_:_", None, [args[1], grow, accu])
    else:
        step = grow
    return ("comp", target, var, empty, ("const", 0, ""), step, accu, name)


def parse(expression: str) -> Node:
    """The expression's syntax tree (macros expanded), for :func:`estimate_cost`."""
    p = _Parser(expression)
    node = p.expr()
    if p.i != len(p.tokens):
        raise ValueError(f"unexpected {p.peek()!r}")
    return node


class Sizes:
    """The sizes the estimate assumes for what ``device`` holds.

    The defaults are the bounds upstream declares for the ``device`` type; a device's own
    sizes (see ``for_device`` in the selector) give the bound of one evaluation.
    """

    __slots__ = (
        "attributes",
        "capacities",
        "domain",
        "domains",
        "driver",
        "id",
        "tracked",
        "value",
    )

    def __init__(
        self,
        *,
        domains: int = 32,
        attributes: int = 32,
        capacities: int = 32,
        domain: int = 63,
        id: int = 32,
        driver: int = 63,
        value: int = 64,
        tracked: bool = False,
    ) -> None:
        self.domains, self.attributes, self.capacities = domains, attributes, capacities
        self.domain, self.id, self.driver, self.value = domain, id, driver, value
        # Whether a map/filter result is as long as its range (as at run time); cel-go's
        # estimator leaves it unbounded.
        self.tracked = tracked


def _mul(a: int, b: int) -> int:
    return min(a * b, MAX_UINT64)


def _factor(size: int, factor: float) -> int:
    """checker/cost.go multiplyByCostFactor: ceil(size * factor) in float64, saturating."""
    value = float(size)
    if value > 0 and value > MAX_UINT64 / factor:
        return MAX_UINT64
    product = math.ceil(value * factor)
    return MAX_UINT64 if product >= 2**64 else product


# A size: (path, size, element size) -- the path names what ``device`` holds.
_Shape = tuple[str, int, int]
_UNKNOWN: _Shape = ("", MAX_UINT64, MAX_UINT64)
# What the estimate knows of a value's type: "string", "list", "map" or "" (dyn, scalar),
# and for a list its elements' kind.
_Kind = tuple[str, str]
_DYN: _Kind = ("", "")
_STRING: _Kind = ("string", "")
_STRINGS: _Kind = ("list", "string")
_QUANTITY: _Kind = ("quantity", "")
# Functions whose result is a string or a list of strings (ext/strings.go, library/regex.go).
_RESULT_KINDS: dict[str, _Kind] = {
    **dict.fromkeys(
        [
            "lowerAscii",
            "upperAscii",
            "trim",
            "substring",
            "replace",
            "charAt",
            "join",
            "find",
            "format",
            "strings.quote",
            "string",
        ],
        _STRING,
    ),
    "split": _STRINGS,
    "findAll": _STRINGS,
    "quantity": _QUANTITY,
    "add": _QUANTITY,
    "sub": _QUANTITY,
    "semver": ("semver", ""),
}


# Functions and operators whose result is a scalar.
_SCALAR = frozenset(
    [
        "size",
        "int",
        "uint",
        "double",
        "bool",
        "duration",
        "timestamp",
        "indexOf",
        "lastIndexOf",
        "compareTo",
        "sign",
        "asInteger",
        "asApproximateFloat",
        "isSorted",
        "isQuantity",
        "isSemver",
        "isInteger",
        "isGreaterThan",
        "isLessThan",
        "major",
        "minor",
        "patch",
        "matches",
        "startsWith",
        "endsWith",
        "contains",
        "sets.contains",
        "sets.equivalent",
        "sets.intersects",
        "_==_",
        "_!=_",
        "_<_",
        "_<=_",
        "_>_",
        "_>=_",
        "_&&_",
        "_||_",
        "!_",
        "_in_",
        "@not_strictly_false",
        "_-_",
        "_*_",
        "_/_",
        "_%_",
        "-_",
    ]
)


class _Coster:
    def __init__(self, sizes: Sizes) -> None:
        self.s = sizes
        self.vars: dict[str, _Shape] = {}
        self.kinds: dict[str, _Kind] = {}
        # A node is costed in one scope only, so its cost is computed once.
        self.known: dict[int, int] = {}

    def bound(self, var: str, shape: _Shape, kind: _Kind) -> tuple[_Shape | None, _Kind | None]:
        saved = self.vars.get(var), self.kinds.get(var)
        self.vars[var], self.kinds[var] = shape, kind
        return saved

    def unbind(self, var: str, saved: tuple[_Shape | None, _Kind | None]) -> None:
        shape, kind = saved
        if shape is None:
            self.vars.pop(var, None)
        else:
            self.vars[var] = shape
        if kind is None:
            self.kinds.pop(var, None)
        else:
            self.kinds[var] = kind

    def kind(self, node: Node) -> _Kind:
        """The type the checker would give ``node``, as far as the estimate needs it."""
        kind = node[0]
        if kind == "const":
            return _STRING if node[2] == "string" else _DYN
        if kind == "list":
            items = {self.kind(i)[0] for i in node[1]}
            return ("list", items.pop() if len(items) == 1 else "")
        if kind == "map":
            return ("map", "")
        if kind == "ident":
            return self.kinds.get(node[1], _DYN)
        if kind == "bind":
            saved = self.bound(node[1], self.shape(node[2]), self.kind(node[2]))
            result = self.kind(node[3])
            self.unbind(node[1], saved)
            return result
        if kind == "comp":
            if node[7] == "filter":
                return ("list", self.element_kind(node[1])[0])
            if node[7] == "map":
                # the mapped expression: the step is accu + [expr] (or cond ? that : accu)
                step = node[5]
                grow = step[3][1] if step[1] == "_?_:_" else step
                saved = self.bound(node[2], _UNKNOWN, self.element_kind(node[1]))
                mapped = self.kind(grow[3][1][1][0])
                self.unbind(node[2], saved)
                return ("list", mapped[0])
            return _DYN
        if kind == "select" or node[1] == "_[_]":
            base = self.shape(node[1] if kind == "select" else node[3][0])[0]
            if base == "device":
                return _STRING if kind == "select" and node[2] == "driver" else ("map", "")
            if base in ("device.attributes", "device.capacity"):
                return ("map", "")
            return _QUANTITY if base == "device.capacity[]" else _DYN
        if node[1] == "_+_":
            left, right = self.kind(node[3][0]), self.kind(node[3][1])
            return left if left[0] in ("list", "string") else right
        if node[1] == "_?_:_":
            return self.kind(node[3][1])
        return _RESULT_KINDS.get(node[1], _DYN)

    def element_kind(self, range_: Node) -> _Kind:
        """The kind of what a comprehension over ``range_`` binds: a list's elements or a
        map's keys."""
        kind = self.kind(range_)
        if kind[0] == "map":
            return _STRING if self.shape(range_)[0].startswith("device") else _DYN
        return (kind[1], "") if kind[0] == "list" else _DYN

    def shape(self, node: Node) -> _Shape:
        """What a node evaluates to: a path under ``device``, its size, its elements' size."""
        s = self.s
        kind = node[0]
        if kind == "const":
            return ("", node[1], 1)
        if kind == "ident":
            if node[1] == "device":
                return ("device", MAX_UINT64, MAX_UINT64)
            return self.vars.get(node[1], _UNKNOWN)
        if kind == "list":
            items = [self.shape(i)[1] for i in node[1]]
            return ("", len(items), max(items, default=0))
        if kind == "bind":
            saved = self.bound(node[1], self.shape(node[2]), self.kind(node[2]))
            result = self.shape(node[3])
            self.unbind(node[1], saved)
            return result
        if kind == "select" or (kind == "call" and node[1] == "_[_]"):
            base = self.shape(node[1] if kind == "select" else node[3][0])
            path = base[0]
            if path == "device":
                field = node[2] if kind == "select" else ""
                if field == "driver":
                    return ("", s.driver, 1)
                if field in ("attributes", "capacity"):
                    return (f"device.{field}", s.domains, s.domain)
                return _UNKNOWN
            if path in ("device.attributes", "device.capacity"):
                count = s.attributes if path == "device.attributes" else s.capacities
                return (path + "[]", count, s.id)
            if path == "device.attributes[]":
                return ("", s.value, 1)
            if path == "device.capacity[]":
                return ("", 1, 1)
            return _UNKNOWN
        if kind == "call" and node[1] == "_+_":
            left, right = self.shape(node[3][0]), self.shape(node[3][1])
            return ("", min(left[1] + right[1], MAX_UINT64), max(left[2], right[2]))
        # checker/cost.go computeTypeSize: a scalar (bool, int, uint, double, duration,
        # timestamp) has size 1; min, max and sum give a list's element.
        if kind == "call" and (
            node[1] in _SCALAR
            or (node[1] in ("min", "max", "sum") and self.kind(node[2] or node)[1] != "string")
        ):
            return ("", 1, 1)
        if kind == "call" and node[1] in _RESULT_SIZES:
            return ("", _RESULT_SIZES[node[1]](self, node[2], node[3]), MAX_UINT64)
        if kind == "comp" and node[7] in ("map", "filter"):
            # checker/cost.go (cel-go v0.24+): a list-building comprehension is as long as
            # its range.
            return ("", self.shape(node[1])[1], MAX_UINT64)
        return _UNKNOWN

    def cost(self, node: Node) -> int:
        known = self.known.get(id(node))
        if known is None:
            known = self.known[id(node)] = self._cost(node)
        return known

    def _cost(self, node: Node) -> int:
        kind = node[0]
        if kind == "const":
            return 0
        if kind == "ident":
            return 1
        if kind == "select":
            return min(1 + self.cost(node[1]), MAX_UINT64)
        if kind == "list":
            return min(_LIST_CREATE + sum(self.cost(i) for i in node[1]), MAX_UINT64)
        if kind == "map":
            return min(_MAP_CREATE + sum(self.cost(i) for i in node[1]), MAX_UINT64)
        if kind == "comp":
            return self.comprehension(node)
        if kind == "bind":
            return self.bind(node)
        return self.call(node)

    def bind(self, node: Node) -> int:
        """checker/cost.go costBind: the empty range list, the init, then the result with
        the variable standing for the init (its size and path)."""
        _, var, init, result = node
        total = _LIST_CREATE + self.cost(init)
        saved = self.bound(var, self.shape(init), self.kind(init))
        total += self.cost(result)
        self.unbind(var, saved)
        return min(total, MAX_UINT64)

    def comprehension(self, node: Node) -> int:
        _, range_, var, init, cond, step, result, _kind = node
        total = self.cost(range_) + self.cost(init)
        shape = self.shape(range_)
        element = shape[2]
        if shape[0] == "device.attributes[]" or shape[0] == "device.capacity[]":
            element_shape: _Shape = ("", element, 1)
        else:
            element_shape = ("", element, MAX_UINT64)
        saved_var = self.bound(var, element_shape, self.element_kind(range_))
        init_shape = self.shape(init) if init[0] == "list" else ("", 1, 1)
        saved_accu = self.bound(_RESULT, init_shape, self.kind(init))
        loop = self.cost(cond) + self.cost(step)
        self.unbind(var, saved_var)
        total += self.cost(result)
        self.unbind(_RESULT, saved_accu)
        if self.s.tracked and _kind in ("map", "filter"):
            total += _growth(shape[1])
        return min(total + _mul(shape[1], loop), MAX_UINT64)

    def call(self, node: Node) -> int:
        _, fn, target, args = node
        operands = ([target] if target is not None else []) + list(args)
        arg_cost = min(sum(self.cost(a) for a in operands), MAX_UINT64)
        rule = _FUNCTION_COSTS.get(fn)
        own = 1 if rule is None else rule(self, target, args)
        return min(own + arg_cost, MAX_UINT64)

    def size(self, node: Node | None) -> int:
        return MAX_UINT64 if node is None else self.shape(node)[1]


def _growth(n: int) -> int:
    """What cel-go's runtime adds for growing a map/filter result to ``n`` entries.

    Its tracker (interpreter/runtimecost.go) charges list concatenation the copy,
    ceil((lhs + rhs) * 0.1), where the estimator charges 1: sum of ceil(k / 10), k = 1..n.
    """
    if n >= MAX_UINT64:
        return MAX_UINT64
    q, r = divmod(n, 10)
    return 10 * q * (q + 1) // 2 + r * (q + 1)


def _free(c: _Coster, target: Node | None, args: list[Node]) -> int:
    return 0


def _conditional(c: _Coster, target: Node | None, args: list[Node]) -> int:
    # cond + max(branches): the branch costs are in the sum; take the smaller back out.
    return -min(c.cost(args[1]), c.cost(args[2]))


def _compare(c: _Coster, target: Node | None, args: list[Node]) -> int:
    smallest = min(c.size(args[0]), c.size(args[1]))
    return _factor(smallest, _TRAVERSAL)


def _equals(c: _Coster, target: Node | None, args: list[Node]) -> int:
    # library/cost.go: equality of two quantities or two versions is O(1).
    left, right = c.kind(args[0])[0], c.kind(args[1])[0]
    if left == right and left in ("quantity", "semver"):
        return 1
    return _compare(c, target, args)


def _in(c: _Coster, target: Node | None, args: list[Node]) -> int:
    # A list is searched element by element; a map is one lookup; a dyn value (an
    # attribute) may be either, and cel-go takes the dearer.
    return 1 if c.kind(args[1])[0] == "map" else c.size(args[1])


def _is_list(node: Node) -> bool:
    return node[0] == "list" or (node[0] == "comp" and node[7] in ("map", "filter"))


def _add(c: _Coster, target: Node | None, args: list[Node]) -> int:
    if _is_list(args[0]) or _is_list(args[1]):
        return 1
    strings = any(a[0] == "const" and a[2] == "string" for a in args)
    if strings or c.kind(args[0])[0] == "string" or c.kind(args[1])[0] == "string":
        return _factor(c.shape(("call", "_+_", None, args))[1], _TRAVERSAL)
    return 1


def _traverse_target(c: _Coster, target: Node | None, args: list[Node]) -> int:
    return _factor(c.size(target), _TRAVERSAL) if target is not None else 1


def _traverse_arg(c: _Coster, target: Node | None, args: list[Node]) -> int:
    return _factor(c.size(args[0]), _TRAVERSAL) if args else 1


def _contains(c: _Coster, target: Node | None, args: list[Node]) -> int:
    return _mul(_factor(c.size(target), _TRAVERSAL), _factor(c.size(args[0]), _TRAVERSAL))


def _matches(c: _Coster, target: Node | None, args: list[Node]) -> int:
    subject = target if target is not None else args[0]
    pattern = args[-1]
    text = _factor(min(c.size(subject) + 1, MAX_UINT64), _TRAVERSAL)
    return _mul(text, _factor(c.size(pattern), _REGEX_FACTOR))


# ---- the Kubernetes libraries (library/cost.go EstimateCallCost) and ext.Sets ----------


def _list_scan(c: _Coster, target: Node | None, args: list[Node]) -> int:
    """isSorted, sum, min, max, indexOf, lastIndexOf: one comparison per element (plus a
    string traversal for string elements, whose size is unknown to the estimate); on a
    string target (indexOf, lastIndexOf) a traversal of it."""
    if target is None:
        return 1
    kind = c.kind(target)
    if kind[0] in ("list", "map"):
        element = 1
        if kind[1] == "string":
            element = min(1 + _factor(MAX_UINT64, _TRAVERSAL), MAX_UINT64)
        return _mul(c.size(target), element)
    return _factor(c.size(target), _TRAVERSAL)


def _traverse_twice(c: _Coster, target: Node | None, args: list[Node]) -> int:
    # replace, split: the traversal plus the construction of the result.
    return _factor(c.size(target), 2 * _TRAVERSAL) if target is not None else 1


def _join(c: _Coster, target: Node | None, args: list[Node]) -> int:
    return _factor(_join_size(c, target, args), _TRAVERSAL) if target is not None else 1


def _find(c: _Coster, target: Node | None, args: list[Node]) -> int:
    if target is None or not args:
        return 1
    text = _factor(min(c.size(target) + 1, MAX_UINT64), _TRAVERSAL)
    return _mul(text, _factor(c.size(args[0]), _REGEX_FACTOR))


def _sets(factor: float) -> _Rule:
    # ext/sets.go estimateSetsCost: |a| * |b| * factor + 1.
    def rule(c: _Coster, target: Node | None, args: list[Node]) -> int:
        if len(args) != 2:
            return 1
        product = _mul(c.size(args[0]), c.size(args[1]))
        return min(_factor(product, factor) + 1, MAX_UINT64)

    return rule


def _quote(c: _Coster, target: Node | None, args: list[Node]) -> int:
    return _factor(c.size(args[0]), _TRAVERSAL) if len(args) == 1 else 1


def _join_size(c: _Coster, target: Node | None, args: list[Node]) -> int:
    count = c.size(target)
    # The elements' size: unknown (library/cost.go listElementNode has no size for them).
    size = _mul(count, MAX_UINT64) if count else 0
    if args:
        size = min(size + _mul(c.size(args[0]), max(count - 1, 0)), MAX_UINT64)
    return size


def _replace_size(c: _Coster, target: Node | None, args: list[Node]) -> int:
    size = c.size(target)
    if len(args) < 2:
        return MAX_UINT64
    old, new = args[0], args[1]
    old_min = old[1] if old[0] == "const" else 0
    new_max = c.size(new)
    if old_min == 0:
        count, kept = (size + 1 if size < MAX_UINT64 else size), size
    elif new_max <= old_min:
        count, kept = 0, size
    else:
        count, kept = math.ceil(size / old_min), 0
    return min(_mul(count, new_max) + kept, MAX_UINT64)


def _split_size(c: _Coster, target: Node | None, args: list[Node]) -> int:
    limit = args[1] if len(args) > 1 else None
    if limit is not None and limit[0] == "const" and len(limit) > 3 and limit[3] is not None:
        return int(limit[3]) % 2**64  # cel-go reads the literal as a uint64
    return c.size(target)


_Rule = Callable[[_Coster, Node | None, list[Node]], int]
_FUNCTION_COSTS: dict[str, _Rule] = {
    "_&&_": _free,
    "_||_": _free,
    "_?_:_": _conditional,
    "_==_": _equals,
    "_!=_": _compare,
    "_in_": _in,
    "_+_": _add,
    "startsWith": _traverse_arg,
    "endsWith": _traverse_arg,
    "contains": _contains,
    "matches": _matches,
    "quantity": _traverse_arg,
    "isQuantity": _traverse_arg,
    "semver": _traverse_arg,
    "isSemver": _traverse_arg,
    # library/cost.go
    **dict.fromkeys(("isSorted", "sum", "min", "max", "indexOf", "lastIndexOf"), _list_scan),
    **dict.fromkeys(("lowerAscii", "upperAscii", "substring", "trim"), _traverse_target),
    "replace": _traverse_twice,
    "split": _traverse_twice,
    "join": _join,
    "find": _find,
    "findAll": _find,
    # checker/cost.go: string.format and strings.quote; ext/sets.go
    "format": _traverse_target,
    "strings.quote": _quote,
    "sets.contains": _sets(1),
    "sets.intersects": _sets(1),
    "sets.equivalent": _sets(2),
}
# Result sizes the estimators declare (library/cost.go ResultSize, checker/cost.go).
_RESULT_SIZES: dict[str, _Rule] = {
    **dict.fromkeys(
        ("lowerAscii", "upperAscii", "substring", "trim"),
        lambda c, target, args: c.size(target),
    ),
    "replace": _replace_size,
    "split": _split_size,
    "join": _join_size,
    "find": lambda c, target, args: c.size(target),
    "findAll": lambda c, target, args: c.size(target),
    "strings.quote": lambda c, target, args: min(_mul(c.size(args[0]), 2) + 2, MAX_UINT64),
}


def estimate_cost(tree: Node, sizes: Sizes | None = None) -> int:
    """The worst-case cost of ``tree`` (from :func:`parse`), saturating at 2**64 - 1."""
    return max(_Coster(sizes or Sizes()).cost(tree), 0)
