"""Quantities: apimachinery quantity_test.go TestQuantityParse forms, rounded as the
scheduler counts them (cpu: MilliValue, others: Value, both rounding up)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from ksched.api import InvalidQuantityError, parse_quantity, quantity_value

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
        ("12E", "memory", 12 * 10**18),
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
    assert parse_quantity(text) == expected


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
