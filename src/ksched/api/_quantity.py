"""Kubernetes resource quantities.

# apimachinery pkg/api/resource/quantity.go: ParseQuantity, MilliValue, Value
Every form the API accepts: plain and decimal numbers (``1.5``), decimal SI suffixes
(``n u m k M G T P E``), binary suffixes (``Ki Mi Gi Ti Pi Ei``) and exponents (``2e3``).
CPU is counted in millicores and everything else in whole units, both rounded up as
upstream's ``MilliValue()`` / ``Value()`` do.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

__all__ = ["InvalidQuantityError", "parse_quantity", "quantity_value"]

_SUFFIX: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}

_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<exp>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


_MAX_EXPONENT = 2**31 - 1
"""Upstream parses the exponent as an int32."""


class InvalidQuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def parse_quantity(text: str | int | float) -> Fraction:
    """The exact value of a quantity string (``"100m"`` -> ``Fraction(1, 10)``)."""
    if isinstance(text, bool):
        raise InvalidQuantityError(f"invalid quantity {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        if not math.isfinite(text):
            raise InvalidQuantityError(f"invalid quantity {text!r}")
        return Fraction(str(text))
    if not isinstance(text, str):
        raise InvalidQuantityError(f"invalid quantity {text!r}")
    match = _QUANTITY.match(text)
    if match is None:
        raise InvalidQuantityError(f"invalid quantity {text!r}")
    value = Fraction(match["num"])
    if match["exp"]:
        exponent = int(match["exp"][1:])
        if abs(exponent) > _MAX_EXPONENT:
            raise InvalidQuantityError(f"invalid quantity {text!r}: exponent out of range")
        value *= Fraction(10) ** exponent
    else:
        value *= _SUFFIX[match["suffix"] or ""]
    return -value if match["sign"] == "-" else value


@functools.lru_cache(maxsize=4096, typed=True)
def quantity_value(resource: str, text: str | int | float) -> int:
    """The integer the scheduler counts for ``resource``: millicores for cpu, else units.

    Rounded up, as ``Quantity.MilliValue()`` and ``Quantity.Value()`` round.
    """
    value = parse_quantity(text)
    if resource == "cpu":
        value *= 1000
    return math.ceil(value)
