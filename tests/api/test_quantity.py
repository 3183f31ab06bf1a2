"""Quantities: apimachinery quantity_test.go TestQuantityParse forms, rounded as the
scheduler counts them (cpu: MilliValue, others: Value, both rounding away from zero),
saturated at the int64 bounds, and parsed at a cost bounded by their text."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from ksched.api import InvalidQuantityError, Quantity, parse_quantity, quantity_value
from ksched.api._quantity import MAX_INT64, MIN_INT64

KI, MI, GI = 2**10, 2**20, 2**30


@pytest.mark.parametrize(
    ("text", "resource", "expected"),
    [
        ("100m", "cpu", 100),
        ("1.5", "cpu", 1500),
        ("2e3", "memory", 2000),
        ("512Mi", "memory", 512 * MI),
        ("1G", "memory", 10**9),
        ("1Ki", "memory", KI),
        (".5", "cpu", 500),
        ("1e-3", "cpu", 1),
        ("1E-3", "cpu", 1),
        ("1E6", "memory", 10**6),
        ("1.3E+6", "memory", 1_300_000),
        ("1.2e3", "memory", 1200),
        ("0.5e-1", "cpu", 50),
        ("100.035k", "memory", 100_035),
        ("8.1k", "memory", 8100),
        ("2.5P", "memory", 25 * 10**14),
        ("1.01E", "memory", 101 * 10**16),
        ("12E", "memory", 2**63 - 1),  # 12e18 > int64: saturated
        ("7Mi", "memory", 7 * MI),
        ("6Gi", "memory", 6 * GI),
        ("5Ti", "memory", 5 * 2**40),
        ("4Pi", "memory", 4 * 2**50),
        ("3Ei", "memory", 3 * 2**60),
        ("0.5Mi", "memory", MI // 2),
        ("0.05Gi", "memory", 53_687_092),  # 53687091.2 rounded up
        ("100.035Ki", "memory", 102_436),  # 102435.84 rounded up
        ("5n", "cpu", 1),  # MilliValue rounds up
        ("4u", "cpu", 1),
        ("3m", "cpu", 3),
        ("3.001n", "cpu", 1),
        ("0.9n", "cpu", 1),
        ("0.1m", "cpu", 1),
        ("1.5", "memory", 2),  # Value rounds up
        ("0.001", "cpu", 1),
        (".001", "cpu", 1),
        (".0001k", "cpu", 100),
        ("1.", "memory", 1),
        ("1.G", "memory", 10**9),
        ("9", "cpu", 9000),
        ("+1", "cpu", 1000),
        ("-1", "cpu", -1000),
        ("0", "cpu", 0),
        (2, "cpu", 2000),
        (0.25, "cpu", 250),
        (3, "memory", 3),
    ],
    ids=str,
)
def test_quantity_value(text: str | int | float, resource: str, expected: int) -> None:
    assert quantity_value(resource, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100m", Fraction(1, 10)),
        ("1.5", Fraction(3, 2)),
        ("2e3", Fraction(2000)),
        ("512Mi", Fraction(512 * MI)),
        ("5n", Fraction(5, 10**9)),
        ("-3m", Fraction(-3, 1000)),
    ],
)
def test_parse_quantity_is_exact(text: str, expected: Fraction) -> None:
    assert parse_quantity(text).to_fraction() == expected


@pytest.mark.parametrize(
    "text",
    [
        # TestQuantityParse invalid rows
        "1.1.M",
        "1+1.0M",
        "0.1mi",
        "0.1am",
        "aoeu",
        ".5i",
        "1i",
        "-3.01i",
        "-3.01e-",
        # more
        "",
        "1.5x",
        "Mi",
        ".",
        "1 Mi",
        "1MiB",
        "1k2",
        "--1",
    ],
    ids=repr,
)
def test_invalid_quantity_raises(text: str) -> None:
    with pytest.raises(InvalidQuantityError):
        parse_quantity(text)


@pytest.mark.parametrize(
    "text",
    [
        " 1",
        "1 ",
        "1e4294967297",
    ],
    ids=repr,
)
def test_surrounding_whitespace_is_invalid(text: str) -> None:
    # quantity_test.go: "trailing whitespace is forbidden"
    with pytest.raises(InvalidQuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("value", [True, None, float("inf"), float("nan"), [1]], ids=repr)
def test_non_quantity_values_raise(value: object) -> None:
    with pytest.raises(InvalidQuantityError):
        parse_quantity(value)  # type: ignore[arg-type]  # the wrong type, on purpose


def test_invalid_quantity_is_a_value_error() -> None:
    assert issubclass(InvalidQuantityError, ValueError)


# quantity.go ParseQuantity: a binary-suffix value is capped at 2^63-1 ("8Ei" parses as
# 2^63-1); a decimal one keeps its value; anything finer than 1n rounds up to 1n.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8Ei", Fraction(MAX_INT64)),
        ("-8Ei", Fraction(-MAX_INT64)),
        ("7Ei", Fraction(7 * 2**60)),
        ("18446744073709551616", Fraction(2**64)),  # decimal: not capped
        ("0.9n", Fraction(1, 10**9)),
        ("1.5n", Fraction(2, 10**9)),
        ("-0.1n", Fraction(-1, 10**9)),
        ("1e-2147483647", Fraction(1, 10**9)),
        ("0.0000000001Ki", Fraction(103, 10**9)),  # 102.4n -> 103n
        ("0.0000000000001Ki", Fraction(1, 10**9)),  # 0.1024n -> 1n
        ("1.2345", Fraction(12345, 10**4)),  # String() reports it as "1234500u"
    ],
    ids=str,
)
def test_parse_rounds_to_nano_and_caps_binary_si(text: str, expected: Fraction) -> None:
    assert parse_quantity(text).to_fraction() == expected


# Value()/MilliValue() of quantities beyond int64: ksched saturates (newer apimachinery's
# scaledValue does; v1.24 leaves the overflow undefined). A huge exponent or a 200-digit
# number is a request no node can hold, never a negative or wrapped one.
@pytest.mark.parametrize(
    ("text", "resource", "expected"),
    [
        ("1e10000000", "memory", MAX_INT64),
        ("1e10000000", "cpu", MAX_INT64),
        ("-1e10000000", "memory", MIN_INT64),
        ("1" * 200, "memory", MAX_INT64),
        ("9223372036854775807", "memory", MAX_INT64),
        ("9223372036854775807", "cpu", MAX_INT64),  # x1000 overflows
        ("9223372036854775", "cpu", 9223372036854775000),
        ("9223372036854775808", "memory", MAX_INT64),
        ("8Ei", "memory", MAX_INT64),
        ("1e18", "memory", 10**18),
        ("1e19", "memory", MAX_INT64),
        ("1e2147483647", "memory", MAX_INT64),
        ("-1.5", "memory", -2),  # away from zero, as int64Amount.AsScaledInt64
        ("-1.5m", "cpu", -2),
    ],
    ids=str,
)
def test_int64_values_saturate(text: str, resource: str, expected: int) -> None:
    assert quantity_value(resource, text) == expected


def test_comparisons_do_not_build_the_number() -> None:
    huge, huger = parse_quantity("1e10000000"), parse_quantity("2e10000000")
    assert huge < huger and huger > huge and huge != huger
    assert parse_quantity("1e10000000") == parse_quantity("10e9999999")
    assert parse_quantity("-1e10000000") < parse_quantity("-1") < 0 < parse_quantity("1n")
    assert parse_quantity("1k") == 1000 == parse_quantity("1000") == parse_quantity("1e3")
    assert parse_quantity("1.0") == parse_quantity("1") and parse_quantity("0") <= 0
    assert hash(parse_quantity("1.50")) == hash(parse_quantity("1.5"))
    assert parse_quantity("1" * 200 + ".5") > parse_quantity("1" * 200)


@pytest.mark.parametrize(
    "text",
    [
        "1e10000000",
        "1e2147483647",
        "-1e-2147483647",
        "1" * 100_000,
        "0." + "0" * 100_000 + "1",
        "9" * 50_000 + "." + "9" * 50_000 + "Ei",
        "1." + "9" * 100_000 + "m",
    ],
    ids=lambda t: f"{t[:12]}...({len(t)})",
)
def test_hostile_quantities_cost_microseconds_not_seconds(text: str) -> None:
    start = time.process_time()
    quantity = parse_quantity(text)
    quantity.value(), quantity.milli_value()
    _ = quantity < parse_quantity("1"), quantity == parse_quantity("2")
    # A generous bound (a shared 2-core machine): the exact-Fraction parser took
    # 14-42 s on the first of these.
    assert time.process_time() - start < 0.5


def test_exact_arithmetic_is_refused_beyond_a_sane_size() -> None:
    with pytest.raises(InvalidQuantityError, match="too large"):
        parse_quantity("1e10000000").to_fraction()
    assert parse_quantity("1e100").to_fraction() == 10**100


def test_quantity_of_normalises_zeros() -> None:
    assert Quantity.of(False, "00120", -1) == Quantity(False, "12", 0)
    assert Quantity.of(True, "000", 5) == Quantity() == 0
    assert str(parse_quantity("1e10000000")) == "1e10000000"
    assert str(parse_quantity("-1500m")) == "-15e-1"
