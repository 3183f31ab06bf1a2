"""CEL device selectors: compiled once, evaluated against one device at a time.

# staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go: the ``device`` variable
# (``driver``, ``attributes[domain][id]``, ``capacity[domain][id]``), unqualified names
# under the driver's domain, an unknown domain reading as an empty map, a missing id as
# the runtime error "no such key: ID"; the Kubernetes quantity library
# (k8s.io/apiserver/pkg/cel/library/quantity.go) and semver library.
Evaluation uses the ``common-expression-language`` engine (Rust); quantities and
versions, which it lacks, are tagged maps with functions over them registered here; the
rest of the Kubernetes base library and ``cel.bind`` come from ``_cel_library``.
Cost limits (compile.go: ``cel.CostLimit(CELSelectorExpressionMaxCost)``): the engine
tracks no cost, so each selector carries cel-go's worst-case estimate (``max_cost``, from
``_cel_cost``), which manifest validation holds to 1,000,000; at evaluation a selector
whose estimate is over the limit, or a device larger than the bounds the estimate assumes,
is costed again with that device's sizes and not evaluated when the bound passes the
limit, failing as cel-go does: "operation cancelled: actual cost limit exceeded". The
length limit (10 KiB) is enforced when an expression is compiled.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from ._cel_cost import Sizes, estimate_cost, parse
from ._cel_library import LIBRARY, check_references, rewrite_binds
from ._dra import (
    CEL_SELECTOR_EXPRESSION_MAX_COST,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    Device,
    SemVer,
)
from ._quantity import InvalidQuantityError, parse_quantity

__all__ = [
    "ERR_COST_LIMIT_EXCEEDED",
    "CelError",
    "DeviceSelector",
    "compile_selector",
    "device_matches",
]

# cel-go interpreter (runtimecost.go): the error that stops an evaluation over its limit.
ERR_COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"
# The bounds compile.go declares for the device type (k8s.io/api/resource/v1 types.go).
_MAX_ENTRIES, _MAX_DOMAIN, _MAX_ID, _MAX_DRIVER, _MAX_VALUE = 32, 63, 32, 63, 64

_Q = "__quantity__"
_V = "__semver__"
# Domains named with a literal key: they read as empty maps when a device has none.
_DOMAIN_KEY = re.compile(r"""\.\s*(attributes|capacity)\s*\[\s*("([^"\\]*)"|'([^'\\]*)')\s*\]""")
# The engine's message for an exception a registered function raised.
_FUNCTION_ERROR = re.compile(
    r"Python function call failed: \w+: (.*)\. Check function arguments and their types\.$",
    re.DOTALL,
)
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)


def _not_a_function_failure(record: logging.LogRecord) -> bool:
    # The engine also logs each exception a registered function raises; ksched raises it
    # as a CelError, so the log line would only repeat it.
    return not str(record.msg).startswith("Python function '")


logging.getLogger("cel").addFilter(_not_a_function_failure)


class CelError(ValueError):
    """A selector that does not compile, or failed while being evaluated."""


# ---- quantity and semver values ----------------------------------------------------


def quantity_value(q: Fraction) -> dict[str, str]:
    """A quantity as the engine carries it: a tagged map, equal for equal amounts."""
    return {_Q: str(q)}


def _q(value: object) -> Fraction:
    if isinstance(value, Mapping) and _Q in value:
        return Fraction(value[_Q])
    raise CelError(f"no such overload: expected a quantity, got {value!r}")


def _quantity(text: object) -> dict[str, str]:
    try:
        return quantity_value(parse_quantity(str(text)).to_fraction())
    except InvalidQuantityError as exc:
        raise CelError(f"quantities must match the regular expression: {exc}") from exc


def _semver_key(value: object) -> tuple[Any, ...]:
    if not (isinstance(value, Mapping) and _V in value):
        raise CelError(f"no such overload: expected a semver, got {value!r}")
    match = _SEMVER.match(str(value[_V]))
    assert match is not None  # checked when made
    pre = match[4]
    pre_key: tuple[Any, ...] = (
        (1,)
        if pre is None
        else (0, *((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")))
    )
    return (int(match[1]), int(match[2]), int(match[3]), pre_key)


def semver_value(text: str) -> dict[str, str]:
    return {_V: text}


def _semver(text: object) -> dict[str, str]:
    if not _SEMVER.match(str(text)):
        raise CelError(f"could not parse {text!r} as semver")
    return semver_value(str(text))


def _ordered(a: object) -> Callable[[object], Any]:
    return _q if isinstance(a, Mapping) and _Q in a else _semver_key


def _compare_to(a: object, b: object) -> int:
    key = _ordered(a)
    x, y = key(a), key(b)
    result: int = (x > y) - (x < y)
    return result


def _is_integer(a: object) -> bool:
    return _q(a).denominator == 1


def _as_integer(a: object) -> int:
    value = _q(a)
    if value.denominator != 1 or not -(2**63) <= value < 2**63:
        raise CelError("cannot convert value to integer")
    return int(value)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": lambda s: _safe(_quantity, s),
    "semver": _semver,
    "isSemver": lambda s: bool(_SEMVER.match(str(s))),
    "compareTo": _compare_to,
    "isGreaterThan": lambda a, b: _compare_to(a, b) > 0,
    "isLessThan": lambda a, b: _compare_to(a, b) < 0,
    "sign": lambda a: (_q(a) > 0) - (_q(a) < 0),
    "isInteger": _is_integer,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda a: float(_q(a)),
    "add": lambda a, b: quantity_value(_q(a) + (_q(b) if isinstance(b, Mapping) else b)),
    "sub": lambda a, b: quantity_value(_q(a) - (_q(b) if isinstance(b, Mapping) else b)),
    "major": lambda v: _semver_key(v)[0],
    "minor": lambda v: _semver_key(v)[1],
    "patch": lambda v: _semver_key(v)[2],
}


_DECLARED = frozenset(_FUNCTIONS)


def _safe(fn: Callable[[object], object], arg: object) -> bool:
    try:
        fn(arg)
    except CelError:
        return False
    return True


# ---- compiling and evaluating ------------------------------------------------------


class DeviceSelector:
    """One compiled CEL selector. Compile with :func:`compile_selector` (cached)."""

    __slots__ = ("_domains", "_functions", "_program", "_tree", "expression", "max_cost")

    def __init__(self, expression: str) -> None:
        if len(expression) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            raise CelError(
                f"compilation failed: expression is longer than "
                f"{CEL_SELECTOR_EXPRESSION_MAX_LENGTH} characters"
            )
        import cel  # here: importing the engine takes a good part of a second

        try:
            self._program = cel.compile(rewrite_binds(expression))
        except ValueError as exc:
            raise CelError(f"compilation failed: {exc}") from exc
        self.expression = expression
        try:
            self._tree = parse(expression)
        except ValueError as exc:
            raise CelError(f"cost estimation failed: {exc}") from exc
        try:
            called = check_references(self._tree, _DECLARED)
        except ValueError as exc:
            raise CelError(f"compilation failed: {exc}") from exc
        self.max_cost: int = estimate_cost(self._tree)
        """cel-go's worst-case cost estimate (2**64 - 1: unbounded)."""
        # Only the functions the expression calls: registering them is most of the cost
        # of setting up an evaluation.
        used = self._program.functions()
        self._functions = {n: f for n, f in _FUNCTIONS.items() if n in used}
        self._functions.update((n, LIBRARY[n]) for n in called)
        self._domains = frozenset(
            (m[1], m[3] if m[3] is not None else m[4]) for m in _DOMAIN_KEY.finditer(expression)
        )

    def matches(self, device: Device, driver: str) -> bool:
        """Whether ``device`` of ``driver`` satisfies the selector.

        Raises:
            CelError: a runtime error (a missing attribute, a wrong type); the message
                says which, as upstream's ``CEL runtime error`` does.
        """
        if self.max_cost > CEL_SELECTOR_EXPRESSION_MAX_COST or not _within_bounds(device, driver):
            self.check_cost(device, driver)
        import cel

        variables = {"device": device_variable(device, driver, self._domains)}
        try:
            context = cel.Context(variables=variables, functions=self._functions or None)
            result = self._program.execute(context)
        except KeyError as exc:
            raise CelError(f"no such key: {exc.args[0] if exc.args else ''}") from exc
        except CelError:
            raise
        except Exception as exc:  # the engine raises plain builtins for runtime errors
            raised = _FUNCTION_ERROR.search(str(exc))
            raise CelError(raised[1] if raised else str(exc)) from exc
        if not isinstance(result, bool):
            raise CelError(
                f"CEL result of type {type(result).__name__} could not be converted to bool"
            )
        return result

    def check_cost(
        self, device: Device, driver: str, limit: int = CEL_SELECTOR_EXPRESSION_MAX_COST
    ) -> int:
        """The cost bound of evaluating against ``device``, checked against ``limit``.

        Raises:
            CelError: the bound exceeds ``limit`` ("operation cancelled: actual cost limit
                exceeded", as cel-go stops such an evaluation).
        """
        bound = estimate_cost(self._tree, _device_sizes(device, driver))
        if bound > limit:
            raise CelError(ERR_COST_LIMIT_EXCEEDED)
        return bound


def _within_bounds(device: Device, driver: str) -> bool:
    """Whether ``device`` is no larger than the bounds the static estimate assumes."""
    if len(device.attributes) > _MAX_ENTRIES or len(device.capacity) > _MAX_ENTRIES:
        return False
    if len(driver) > _MAX_DRIVER:
        return False
    for name, attr in device.attributes.items():
        value = attr.value
        if isinstance(value, str) and len(value) > _MAX_VALUE:
            return False
        domain, _, ident = name.rpartition("/")
        if len(ident) > _MAX_ID or len(domain) > _MAX_DOMAIN:
            return False
    return all(len(name) <= _MAX_DOMAIN + 1 + _MAX_ID for name in device.capacity)


def _device_sizes(device: Device, driver: str) -> Sizes:
    """The sizes of one device, for the bound of one evaluation."""
    per_domain: dict[str, int] = {}
    per_capacity: dict[str, int] = {}
    ids, domains, values = [0], [len(driver)], [0]
    for names, counts in ((device.attributes, per_domain), (device.capacity, per_capacity)):
        for name in names:
            domain, _, ident = name.rpartition("/")
            domain = domain or driver
            counts[domain] = counts.get(domain, 0) + 1
            ids.append(len(ident))
            domains.append(len(domain))
    for attr in device.attributes.values():
        value = attr.value
        values.append(len(value) if isinstance(value, str) else 1)
    return Sizes(
        domains=max(len(per_domain), len(per_capacity)),
        attributes=max(per_domain.values(), default=0),
        capacities=max(per_capacity.values(), default=0),
        domain=max(domains),
        id=max(ids),
        driver=len(driver),
        value=max(values),
        tracked=True,
    )


def device_variable(
    device: Device, driver: str, domains: frozenset[tuple[str, str]] = frozenset()
) -> dict[str, Any]:
    """The ``device`` variable for one device (unqualified names under the driver)."""
    attributes: dict[str, dict[str, Any]] = {}
    capacity: dict[str, dict[str, Any]] = {}
    for name, attr in device.attributes.items():
        domain, _, ident = name.rpartition("/")
        value = attr.value
        attributes.setdefault(domain or driver, {})[ident] = (
            semver_value(value.text) if isinstance(value, SemVer) else value
        )
    for name, amount in device.capacity.items():
        domain, _, ident = name.rpartition("/")
        capacity.setdefault(domain or driver, {})[ident] = quantity_value(amount)
    for which, domain in domains:
        (attributes if which == "attributes" else capacity).setdefault(domain, {})
    return {"driver": driver, "attributes": attributes, "capacity": capacity}


_CACHE: dict[str, DeviceSelector] = {}
_CACHE_MAX = 1024


def compile_selector(expression: str) -> DeviceSelector:
    """The compiled selector for ``expression``, compiled once and then cached.

    Raises:
        CelError: the expression does not compile.
    """
    selector = _CACHE.get(expression)
    if selector is None:
        selector = DeviceSelector(expression)
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[expression] = selector
    return selector


def device_matches(expression: str, device: Device, driver: str) -> bool:
    """Whether ``device`` matches the CEL ``expression`` (compiled once, cached)."""
    return compile_selector(expression).matches(device, driver)
