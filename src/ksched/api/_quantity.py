"""Kubernetes resource quantities, at a cost bounded by the length of their text.

# apimachinery pkg/api/resource/quantity.go (ParseQuantity, Value, MilliValue,
# ScaledValue), amount.go, scale_int.go
Every form the API accepts: plain and decimal numbers (``1.5``), decimal SI suffixes
(``n u m k M G T P E``), binary suffixes (``Ki Mi Gi Ti Pi Ei``) and exponents (``2e3``).

A quantity is held as upstream's ``inf.Dec`` holds it: a digit string and a power of ten,
never as the integer it names, so ``1e10000000`` costs what its ten characters cost
(an exact ``Fraction`` of it took seconds of CPU). As ``ParseQuantity`` does, a parsed
value is rounded away from zero to a whole nano (``0.9n`` is ``1n``) and a binary-suffix
value is capped at 2^63-1 (``8Ei`` is 2^63-1); a decimal one keeps its exact value.

The scheduler counts CPU in millicores and everything else in whole units
(``MilliValue()`` / ``Value()``): rounded away from zero, as upstream's int64 path rounds,
and saturated at the int64 bounds. Upstream leaves an overflowing ``Value()`` undefined
(v1.24 on amd64 turns ``1e10000000`` into -2^63); newer apimachinery saturates, and so
does ksched: such a pod asks for more than any node has.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

import attrs

__all__ = [
    "MAX_INT64",
    "MIN_INT64",
    "InvalidQuantityError",
    "Quantity",
    "parse_quantity",
    "quantity_value",
]

MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)

_DECIMAL_SUFFIX = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_SUFFIX |= {"P": 15, "E": 18}
_BINARY_SUFFIX = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?:[eE](?P<exp>[+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)"
)

_MAX_EXPONENT = 2**31 - 1
"""Upstream parses the exponent as an int32."""

_NANO = -9
_BINARY_DIGITS = 69
"""Fraction digits kept to round ``x * 2**60`` up to a nano exactly: with 9 + 60 digits
the value dropped (below 10**-69) can never carry the product across a nano boundary."""

_MAX_EXACT_DIGITS = 4000
"""``to_fraction`` and int quantities stay below Python's int/str conversion limit."""

_CACHED_TEXT = 64
"""Only quantity strings up to this length are memoised (a cache holding a megabyte
string per entry would be a cache an attacker fills)."""


class InvalidQuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


@attrs.frozen(eq=False)
class Quantity:
    """An exact decimal quantity: ``digits * 10**exponent``, negated when ``negative``.

    ``digits`` has no leading or trailing zeros (``""`` is zero), so equal amounts are
    equal objects. Compare quantities (and ints) with the usual operators.
    """

    negative: bool = False
    digits: str = ""
    exponent: int = 0

    @classmethod
    def of(cls, negative: bool, digits: str, exponent: int) -> Quantity:
        """The quantity of a digit string (any zeros) times ``10**exponent``."""
        stripped = digits.lstrip("0")
        if not stripped:
            return ZERO
        trimmed = stripped.rstrip("0")
        return cls(negative, trimmed, exponent + len(stripped) - len(trimmed))

    @classmethod
    def from_int(cls, value: int) -> Quantity:
        """An integer as a quantity."""
        if value.bit_length() > _MAX_EXACT_DIGITS * 3:
            raise InvalidQuantityError("invalid quantity: too many digits")
        return cls.of(value < 0, str(abs(value)), 0)

    @property
    def sign(self) -> int:
        """-1, 0 or 1."""
        return 0 if not self.digits else -1 if self.negative else 1

    @property
    def magnitude(self) -> int:
        """How many digits its integer part has (<= 0 below 1): the cheap order key."""
        return len(self.digits) + self.exponent

    def scaled_value(self, scale: int) -> int:
        """``ScaledValue``: this amount in units of ``10**scale``, rounded away from zero,
        saturated at the int64 bounds."""
        if not self.digits:
            return 0
        whole = self.magnitude - scale
        if whole > 19:  # 10**19 > 2**63: saturated whatever the digits
            return MIN_INT64 if self.negative else MAX_INT64
        if whole <= 0:  # below one unit, not zero: one unit
            count = 1
        elif len(self.digits) > whole:  # a fraction dropped: round up
            count = int(self.digits[:whole]) + 1
        else:
            count = int(self.digits) * 10 ** (whole - len(self.digits))
        if self.negative:
            return max(-count, MIN_INT64)
        return min(count, MAX_INT64)

    def value(self) -> int:
        """``Value()``: whole units, rounded away from zero, saturated."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """``MilliValue()``: thousandths, rounded away from zero, saturated."""
        return self.scaled_value(-3)

    def to_fraction(self) -> Fraction:
        """The exact value, for arithmetic on quantities of a sane size.

        Raises:
            InvalidQuantityError: more than a few thousand digits would be needed.
        """
        if len(self.digits) + abs(self.exponent) > _MAX_EXACT_DIGITS:
            raise InvalidQuantityError(f"quantity {self} is too large for exact arithmetic")
        value = Fraction(int(self.digits or "0")) * Fraction(10) ** self.exponent
        return -value if self.negative else value

    def _compare(self, other: Quantity) -> int:
        if self.sign != other.sign:
            return -1 if self.sign < other.sign else 1
        if not self.digits:
            return 0
        if self.magnitude != other.magnitude:
            order = -1 if self.magnitude < other.magnitude else 1
        else:
            width = max(len(self.digits), len(other.digits))
            mine, theirs = self.digits.ljust(width, "0"), other.digits.ljust(width, "0")
            order = 0 if mine == theirs else -1 if mine < theirs else 1
        return -order if self.negative else order

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int) and not isinstance(other, bool):
            return self._compare(Quantity.from_int(other)) == 0
        if not isinstance(other, Quantity):
            return NotImplemented
        return (self.negative, self.digits, self.exponent) == (
            other.negative,
            other.digits,
            other.exponent,
        )

    def __hash__(self) -> int:
        return hash((self.negative, self.digits, self.exponent))

    def __lt__(self, other: Quantity | int) -> bool:
        return self._compare(_coerce(other)) < 0

    def __le__(self, other: Quantity | int) -> bool:
        return self._compare(_coerce(other)) <= 0

    def __gt__(self, other: Quantity | int) -> bool:
        return self._compare(_coerce(other)) > 0

    def __ge__(self, other: Quantity | int) -> bool:
        return self._compare(_coerce(other)) >= 0

    def __str__(self) -> str:
        if not self.digits:
            return "0"
        sign = "-" if self.negative else ""
        if 0 <= self.exponent <= 18:
            return f"{sign}{self.digits}{'0' * self.exponent}"
        return f"{sign}{self.digits}e{self.exponent}"


ZERO = Quantity()


def _coerce(other: Quantity | int) -> Quantity:
    if isinstance(other, Quantity):
        return other
    if isinstance(other, int) and not isinstance(other, bool):
        return Quantity.from_int(other)
    raise TypeError(f"cannot compare a quantity with {type(other).__name__}")


def _round_up_to_nano(negative: bool, digits: str, exponent: int) -> Quantity:
    """``digits * 10**exponent`` (no leading zeros), its magnitude rounded up to 1n."""
    drop = _NANO - exponent
    if drop <= 0 or not digits.rstrip("0"):
        return Quantity.of(negative, digits, exponent)
    kept, tail = digits[:-drop], digits[-drop:]
    if not tail.rstrip("0"):
        return Quantity.of(negative, kept, _NANO)
    return Quantity.of(negative, _increment(kept), _NANO)


def _increment(digits: str) -> str:
    """The decimal string one more than ``digits`` (``""`` counts as 0), in linear time."""
    body = digits.rstrip("9")
    nines = len(digits) - len(body)
    if not body:
        return "1" + "0" * nines
    return body[:-1] + str(int(body[-1]) + 1) + "0" * nines


def _binary(negative: bool, whole: str, frac: str, power: int) -> Quantity:
    """``whole.frac * 2**power`` rounded up to a nano and capped at 2^63-1, as
    ParseQuantity treats a binary suffix."""
    whole = whole.lstrip("0")
    if len(whole) > 19:  # >= 10**19 before the suffix: capped
        return Quantity.of(negative, str(MAX_INT64), 0)
    kept = frac[:_BINARY_DIGITS]
    inexact = bool(frac[_BINARY_DIGITS:].rstrip("0"))
    scaled = int((whole or "0") + kept.ljust(_BINARY_DIGITS, "0")) << power
    nanos, rest = divmod(scaled, 10 ** (_BINARY_DIGITS - 9))
    if rest or inexact:
        nanos += 1
    nanos = min(nanos, MAX_INT64 * 10**9)
    return Quantity.of(negative, str(nanos), _NANO)


def _parse_text(text: str) -> Quantity:
    match = _QUANTITY.fullmatch(text)
    if match is None or not (match["int"] or match["frac"]):
        raise InvalidQuantityError(f"invalid quantity {text!r}")
    negative = match["sign"] == "-"
    whole, frac = match["int"], match["frac"] or ""
    suffix = match["suffix"] or ""
    if suffix in _BINARY_SUFFIX:
        return _binary(negative, whole, frac, _BINARY_SUFFIX[suffix])
    if match["exp"] is not None:
        significant = match["exp"].lstrip("+-").lstrip("0")
        exponent = int(match["exp"]) if len(significant) <= 10 else _MAX_EXPONENT + 1
        if abs(exponent) > _MAX_EXPONENT:
            raise InvalidQuantityError(f"invalid quantity {text!r}: exponent out of range")
    else:
        exponent = _DECIMAL_SUFFIX[suffix]
    digits = (whole + frac).lstrip("0")
    return _round_up_to_nano(negative, digits, exponent - len(frac))


@functools.lru_cache(maxsize=4096)
def _parse_short(text: str) -> Quantity:
    return _parse_text(text)


def parse_quantity(text: str | int | float) -> Quantity:
    """The quantity a string (or a YAML/JSON number) names (``"100m"`` -> 0.1).

    Raises:
        InvalidQuantityError: not a quantity.
    """
    if isinstance(text, str):
        return _parse_short(text) if len(text) <= _CACHED_TEXT else _parse_text(text)
    if isinstance(text, bool) or not isinstance(text, int | float):
        raise InvalidQuantityError(f"invalid quantity {text!r}")
    if isinstance(text, int):
        return _round_up_to_nano(text < 0, Quantity.from_int(text).digits, 0)
    return _parse_text(repr(text))  # 'inf' and 'nan' fail the grammar


@functools.lru_cache(maxsize=4096, typed=True)
def _short_value(resource: str, text: str | int | float) -> int:
    quantity = parse_quantity(text)
    return quantity.milli_value() if resource == "cpu" else quantity.value()


def quantity_value(resource: str, text: str | int | float) -> int:
    """The integer the scheduler counts for ``resource``: millicores for cpu, else units.

    Rounded away from zero and saturated at the int64 bounds, as ``MilliValue()`` and
    ``Value()`` count.
    """
    if not isinstance(text, str | int | float) or (
        isinstance(text, str) and len(text) > _CACHED_TEXT
    ):
        quantity = parse_quantity(text)  # a long text (not kept in the cache), or invalid
        return quantity.milli_value() if resource == "cpu" else quantity.value()
    return _short_value(resource, text)
