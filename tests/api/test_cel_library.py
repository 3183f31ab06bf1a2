# Upstream's cases are kept verbatim: non-ASCII letters and some long literals.
# ruff: noqa: RUF001, E501
"""The Kubernetes CEL library for device selectors: cel.bind, strings, lists, regex, sets.

Cases from staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go, cel-go's
ext/strings_test.go (the version-2 functions) and ext/sets_test.go (with their estimated
costs), and k8s.io/apiserver/pkg/cel/library/cost_test.go.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from ksched.api import CelError, Device, DeviceAttribute, compile_selector
from ksched.api._cel_cost import MAX_UINT64, estimate_cost, parse
from ksched.api._cel_library import LIBRARY, rewrite_binds

DRIVER = "dra.example.com"
EMPTY = Device(name="d")


def _evaluate(expression: str, device: Device = EMPTY) -> bool:
    return compile_selector(expression).matches(device, DRIVER)


# ---- compile_test.go --------------------------------------------------------------------

_TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
_NESTED = (
    f"{_TEN}.all(x, {_TEN}.all(y, {_TEN}.all(z, {_TEN}.all(z2, {_TEN}.all(z3, {_TEN}.all(z4, "
    f"{_TEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
_SERVICES = {"services": DeviceAttribute("some_example_value")}
# name, expression, attributes, capacity, expected match (or error), expected cost
COMPILE_TEST = [
    (
        "bind",
        'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
        {"name": DeviceAttribute(True)},
        {},
        True,
        15,
    ),
    (
        "split_attribute",
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        _SERVICES,
        {},
        True,
        19,
    ),
    (
        "regexp_attribute",
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        {"services": DeviceAttribute("asymetric")},
        {},
        True,
        18,
    ),
    (
        "check_attribute_domains",
        'device.attributes.exists_one(x, x == "dra.example.com")',
        _SERVICES,
        {},
        True,
        164,
    ),
    (
        "check_attribute_ids",
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        _SERVICES,
        {},
        True,
        133,
    ),
    (
        "check_capacity_domains",
        'device.capacity.exists_one(x, x == "dra.example.com")',
        {},
        {"memory": Fraction(1024**2)},
        True,
        164,
    ),
    (
        "check_capacity_ids",
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        {},
        {"memory": Fraction(1024**2)},
        True,
        133,
    ),
    ("expensive", _NESTED, {}, {}, "actual cost limit exceeded", 85555551),
]


@pytest.mark.parametrize(
    ("expression", "attributes", "capacity", "want", "cost"),
    [c[1:] for c in COMPILE_TEST],
    ids=[c[0] for c in COMPILE_TEST],
)
def test_compile_test_cases(
    expression: str,
    attributes: dict[str, DeviceAttribute],
    capacity: dict[str, Fraction],
    want: bool | str,
    cost: int,
) -> None:
    selector = compile_selector(expression)
    assert selector.max_cost == cost
    device = Device(name="d", attributes=attributes, capacity=capacity)
    if isinstance(want, str):
        with pytest.raises(CelError, match=want):
            selector.matches(device, DRIVER)
    else:
        assert selector.matches(device, DRIVER) is want


# ---- cel.bind (ext/bindings.go) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ("cel.bind(x, 1, x + 1) == 2", True),
        # nested: the inner init reads the outer variable, then shadows it
        ("cel.bind(x, 1, cel.bind(x, x + 1, x * 2)) == 4", True),
        ("cel.bind(a, 1, cel.bind(b, a + 1, a + b)) == 3", True),
        # the bound name is gone after the bind
        ("cel.bind(x, 2, x) + cel.bind(x, 3, x) == 5", True),
        # used in a macro, and shadowed by the macro's own variable
        ("cel.bind(xs, [1, 2, 3], xs.all(x, x > 0) && xs.exists(x, x == 3))", True),
        ("cel.bind(x, [1, 2], x.map(x, x * 10)) == [10, 20]", True),
        # binding a map and reading through it
        (
            'cel.bind(dra, device.attributes["dra.example.com"], '
            'dra.model == "a100" && "model" in dra)',
            True,
        ),
        # shadowing the device variable
        ("cel.bind(device, 7, device) == 7", True),
        # the text of a string is not a bind
        ("'cel.bind(x, 1, x)'.size() == 17", True),
    ],
)
def test_bind_scoping(expression: str, want: bool) -> None:
    device = Device(name="d", attributes={"model": DeviceAttribute("a100")})
    assert _evaluate(expression, device) is want


def test_in_on_an_attribute_costs_its_size() -> None:
    # compile_test.go "in-operator-on-list": an attribute is dyn with at most 64 elements,
    # and `in` may search it as a list.
    expression = '1 in device.attributes["dra.example.com"].names'
    assert compile_selector(expression).max_cost == 4 + 64


def test_bind_is_rewritten_to_a_one_element_map() -> None:
    assert rewrite_binds("cel.bind(x, 1, cel.bind(y, x, y)) && cel.bind(z, 2, z > 1)") == (
        "[1].map(x, [x].map(y, y)[0])[0] && [2].map(z, z > 1)[0]"
    )
    assert rewrite_binds('device.driver == "cel.bind"') == 'device.driver == "cel.bind"'


def test_bind_cost_is_the_empty_range_the_init_and_the_result() -> None:
    # checker/cost.go costBind: 10 (the empty list) + init + result; a bound map keeps
    # the sizes the device declares (an attribute value: 64 characters).
    assert estimate_cost(parse("cel.bind(x, 1, x)")) == 10 + 0 + 1
    bound = 'cel.bind(d, device.attributes["dra.example.com"], d.name.lowerAscii())'
    # init 3, result: d 1 + .name 1 + lowerAscii ceil(64 * 0.1) = 7
    assert estimate_cost(parse(bound)) == 10 + 3 + 9


def test_bind_variable_must_be_a_simple_identifier() -> None:
    with pytest.raises(CelError, match=r"cel.bind\(\) variable names must be simple identifiers"):
        compile_selector("cel.bind(a.b, 1, true)")


# ---- ext.Strings version 2 (ext/strings_test.go) -----------------------------------------

STRINGS_TRUE = [
    "'tacocat'.charAt(3) == 'o'",
    "'tacocat'.charAt(7) == ''",
    "'©αT'.charAt(0) == '©' && '©αT'.charAt(1) == 'α' && '©αT'.charAt(2) == 'T'",
    "'tacocat'.indexOf('') == 0",
    "'tacocat'.indexOf('ac') == 1",
    "'tacocat'.indexOf('none') == -1",
    "'tacocat'.indexOf('', 3) == 3",
    "'tacocat'.indexOf('a', 3) == 5",
    "'tacocat'.indexOf('at', 3) == 5",
    "'ta©o©αT'.indexOf('©') == 2",
    "'ta©o©αT'.indexOf('©', 3) == 4",
    "'ta©o©αT'.indexOf('©αT', 3) == 4",
    "'ta©o©αT'.indexOf('©α', 5) == -1",
    "'ijk'.indexOf('k') == 2",
    "'hello wello'.indexOf('hello wello') == 0",
    "'hello wello'.indexOf('ello', 6) == 7",
    "'hello wello'.indexOf('elbo room!!') == -1",
    "'hello wello'.indexOf('elbo room!!!') == -1",
    "''.lastIndexOf('@@') == -1",
    "'tacocat'.lastIndexOf('') == 7",
    "'tacocat'.lastIndexOf('at') == 5",
    "'tacocat'.lastIndexOf('none') == -1",
    "'tacocat'.lastIndexOf('', 3) == 3",
    "'tacocat'.lastIndexOf('a', 3) == 1",
    "'ta©o©αT'.lastIndexOf('©') == 4",
    "'ta©o©αT'.lastIndexOf('©', 3) == 2",
    "'ta©o©αT'.lastIndexOf('©α', 4) == 4",
    "'hello wello'.lastIndexOf('ello', 6) == 1",
    "'hello wello'.lastIndexOf('low') == -1",
    "'hello wello'.lastIndexOf('elbo room!!') == -1",
    "'hello wello'.lastIndexOf('elbo room!!!') == -1",
    "'hello wello'.lastIndexOf('hello wello') == 0",
    "'bananananana'.lastIndexOf('nana', 7) == 6",
    "'TacoCat'.lowerAscii() == 'tacocat'",
    "'TacoCÆt'.lowerAscii() == 'tacocÆt'",
    "'TacoCÆt Xii'.lowerAscii() == 'tacocÆt xii'",
    '"12 days 12 hours".replace("{0}", "2") == "12 days 12 hours"',
    '"{0} days {0} hours".replace("{0}", "2") == "2 days 2 hours"',
    '"{0} days {0} hours".replace("{0}", "2", 1).replace("{0}", "23") == "2 days 23 hours"',
    '"1 ©αT taco".replace("αT", "o©α") == "1 ©o©α taco"',
    '"hello hello".replace("", "_") == "_h_e_l_l_o_ _h_e_l_l_o_"',
    '"hello hello".replace("h", "") == "ello ello"',
    '"hello world".split(" ") == ["hello", "world"]',
    '"hello world events!".split(" ", 0) == []',
    '"hello world events!".split(" ", 1) == ["hello world events!"]',
    '"o©o©o©o".split("©", -1) == ["o", "o", "o", "o"]',
    '"tacocat".substring(4) == "cat"',
    '"tacocat".substring(7) == ""',
    '"tacocat".substring(0, 4) == "taco"',
    '"tacocat".substring(4, 4) == ""',
    "'ta©o©αT'.substring(2, 6) == \"©o©α\"",
    "'ta©o©αT'.substring(7, 7) == \"\"",
    '" \\f\\n\\r\\t\\vtext  ".trim() == "text"',
    '"\\u0085\\u00a0\\u1680text".trim() == "text"',
    '"text\\u2000\\u2001\\u2002\\u2003\\u2004\\u2004\\u2006\\u2007\\u2008\\u2009".trim() == "text"',
    '"\\u200atext\\u2028\\u2029\\u202F\\u205F\\u3000".trim() == "text"',
    '"\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff".trim() == "\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff"',
    "'tacoCat'.upperAscii() == 'TACOCAT'",
    "'tacoCαt'.upperAscii() == 'TACOCαT'",
    "[].join() == ''",
    "[].join('-') == ''",
    'strings.quote("first\\nsecond") == "\\"first\\\\nsecond\\""',
    'strings.quote("bell\\a") == "\\"bell\\\\a\\""',
    'strings.quote("\\bbackspace") == "\\"\\\\bbackspace\\""',
    'strings.quote("\\fform feed") == "\\"\\\\fform feed\\""',
    'strings.quote("carriage \\r return") == "\\"carriage \\\\r return\\""',
    'strings.quote("horizontal tab\\t") == "\\"horizontal tab\\\\t\\""',
    'strings.quote("vertical \\v tab") == "\\"vertical \\\\v tab\\""',
    'strings.quote("double \\\\\\\\ slash") == "\\"double \\\\\\\\\\\\\\\\ slash\\""',
    'strings.quote("two escape sequences \\a\\n") == "\\"two escape sequences \\\\a\\\\n\\""',
    'strings.quote("verbatim") == "\\"verbatim\\""',
    'strings.quote("ends with \\\\") == "\\"ends with \\\\\\\\\\""',
    'strings.quote("\\\\ starts with") == "\\"\\\\\\\\ starts with\\""',
    'strings.quote("printable unicode😀") == "\\"printable unicode😀\\""',
    'strings.quote("mid string \\" quote") == "\\"mid string \\\\\\" quote\\""',
    'strings.quote(\'single-quote with "double quote"\') == "\\"single-quote with \\\\\\"double quote\\\\\\"\\""',
    'strings.quote("size(\'ÿ\')") == "\\"size(\'ÿ\')\\""',
    'strings.quote("size(\'πέντε\')") == "\\"size(\'πέντε\')\\""',
    'strings.quote("завтра") == "\\"завтра\\""',
    'strings.quote("\\U0001F431\\U0001F600\\U0001F61B") == "\\"\\U0001F431\\U0001F600\\U0001F61B\\""',
    'strings.quote("ta©o©αT") == "\\"ta©o©αT\\""',
    'strings.quote("") == "\\"\\""',
    "'tacocat'.indexOf('a', 30) == -1",
    "'tacocat'.lastIndexOf('a', 30) == -1",
]

STRINGS_ERRORS = [
    ("'tacocat'.charAt(30) == ''", "index out of range: 30"),
    ("'tacocat'.lastIndexOf('a', -1) == -1", "index out of range: -1"),
    ('"tacocat".substring(40) == "cat"', "index out of range: 40"),
    ('"tacocat".substring(-1) == "cat"', "index out of range: -1"),
    ('"tacocat".substring(1, 50) == "cat"', "index out of range: 50"),
    ('"tacocat".substring(49, 50) == "cat"', "index out of range: 49"),
    ('"tacocat".substring(4, 3) == ""', "invalid substring range. start: 4, end: 3"),
    ('42.charAt(2) == ""', "no such overload"),
    ("'hello'.charAt(true) == \"\"", "no such overload"),
    ("24.indexOf('2') == 0", "no such overload"),
    ("'hello'.indexOf(true) == 1", "no such overload"),
    ("42.indexOf('4', 0) == 0", "no such overload"),
    ("'42'.indexOf(4, 0) == 0", "no such overload"),
    ("'42'.indexOf('4', '0') == 0", "no such overload"),
    ("'42'.indexOf('4', 0, 1) == 0", "no such overload"),
    ('42.split("2") == ["4"]', "no such overload"),
    ('42.replace(2, 1) == "41"', "no such overload"),
    ('"42".replace(2, 1) == "41"', "no such overload"),
    ('"42".replace("2", 1) == "41"', "no such overload"),
    ('42.replace("2", "1", 1) == "41"', "no such overload"),
    ('"42".replace(2, "1", 1) == "41"', "no such overload"),
    ('"42".replace("2", 1, 1) == "41"', "no such overload"),
    ('"42".replace("2", "1", "1") == "41"', "no such overload"),
    ('"42".replace("2", "1", 1, false) == "41"', "no such overload"),
    ('42.split("") == ["4", "2"]', "no such overload"),
    ('"42".split(2) == ["4"]', "no such overload"),
    ('42.split("2", "1") == ["4"]', "no such overload"),
    ('"42".split(2, 1) == ["4"]', "no such overload"),
    ('"42".split("2", "1") == ["4"]', "no such overload"),
    ('"42".split("2", 1, 1) == ["4"]', "no such overload"),
    ("'hello'.substring(1, 2, 3) == \"\"", "no such overload"),
    ('30.substring(true, 3) == ""', "no such overload"),
    ('"tacocat".substring(true, 3) == ""', "no such overload"),
    ('"tacocat".substring(0, false) == ""', "no such overload"),
]


@pytest.mark.parametrize("expression", STRINGS_TRUE)
def test_strings(expression: str) -> None:
    assert _evaluate(expression) is True


@pytest.mark.parametrize(("expression", "error"), STRINGS_ERRORS)
def test_strings_errors(expression: str, error: str) -> None:
    with pytest.raises(CelError, match=f"^{error}"):
        _evaluate(expression)


def test_string_lists() -> None:
    # The DRA size estimator gives a list literal's strings no size, so cel-go's estimate
    # of a scan over them is far over the limit (library/cost.go listElementNode).
    assert compile_selector("['a', 'b', 'b', 'c'].isSorted()").max_cost > 1_000_000
    assert LIBRARY["isSorted"](["a", "b", "b", "c"]) is True
    assert LIBRARY["lastIndexOf"](["a", "b", "b", "c"], "b") == 2


def test_join_on_a_literal_list() -> None:
    # The DRA size estimator knows no size for a list literal's strings, so cel-go's
    # estimate of join() on one is far over the limit (library/cost.go join).
    assert compile_selector("['x', 'y'].join('-') == 'x-y'").max_cost > 1_000_000
    assert LIBRARY["join"](["x", "y"]) == "xy"
    assert LIBRARY["join"](["x", "y"], "-") == "x-y"


def test_reverse_is_not_in_version_2() -> None:
    # ext.Strings(ext.StringsVersion(2)) in the 1.35 base environment: reverse came in 3.
    with pytest.raises(CelError, match="undeclared reference to 'reverse'"):
        compile_selector("'gums'.reverse() == 'smug'")


# ---- library.Lists and library.Regex (lists.go, regex.go, cost_test.go) -----------------

_LISTS = {
    "int": ("[1, 2, 3, 4, 5]", 15),
    "uint": ("[uint(1), uint(2), uint(3), uint(4), uint(5)]", 20),
    "double": ("[1.0, 2.0, 3.0, 4.0, 5.0]", 15),
    "bool": ("[false, true, false, true, false]", 15),
    "duration": (
        "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]",
        20,
    ),
}


@pytest.mark.parametrize("op", [".sum()", ".isSorted()", ".max()", ".min()"])
@pytest.mark.parametrize("kind", list(_LISTS))
def test_list_function_costs(kind: str, op: str) -> None:
    if op == ".sum()" and kind == "bool":
        return  # no sum over bools
    literal, cost = _LISTS[kind]
    assert estimate_cost(parse(literal + op)) == cost


@pytest.mark.parametrize(
    ("expression", "cost"),
    [
        ("[1, 2, 3, 4, 5].indexOf(3)", 15),
        ("[1.0, 2.0, 3.0, 4.0, 5.0].lastIndexOf(3.0)", 15),
        ("[false, true, false, true, false].indexOf(true)", 15),
        ("'01234567890123456789012345678901234567890123456789'.indexOf('123')", 5),
        ("'01234567890123456789012345678901234567890123456789'.lastIndexOf('123')", 5),
    ],
)
def test_index_of_costs(expression: str, cost: int) -> None:
    assert estimate_cost(parse(expression)) == cost


@pytest.mark.parametrize(
    ("expression", "cost"),
    [
        ("'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3),
        ("'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 9),
        ("'ABCDEFGHIJ abcdefghij'.upperAscii()", 3),
        ("strings.quote('ABCDEFGHIJ abcdefghij')", 3),
        ("strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 11),
        ("'abc 123 def 123'.replace('123', '456')", 3),
        ("'abc 123 def 123'.replace('', 'x')", 3),
        ("'abc 123 def 123'.replace('123', '')", 3),
        ("'abc 123 def 123'.replace('123', '456', 1)", 3),
        ("'abc 123 def 123'.split(' ')", 3),
        ("'abc 123 def 123'.split(' ', 1)", 3),
        ("'abc 123 def 123'.substring(5)", 2),
        ("'abc 123 def 123'.substring(5, 8)", 2),
        ("'  abc 123 def 123  '.trim()", 2),
        ("'abc 123 def 123'.find('123')", 2),
        ("'abc 123 def 123'.findAll('123')", 2),
        ("'abc 123 def 123'.findAll('123', 1)", 2),
        ('quantity("200M") == quantity("200M")', 3),
        ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 6),
        ('quantity("50k").add(quantity("20")) == quantity("50.02k")', 5),
        ('quantity("50k").sub(20) == quantity("49980")', 4),
    ],
)
def test_string_library_costs(expression: str, cost: int) -> None:
    # cost_test.go TestStringLibrary, TestQuantityCost (the estimate's maximum)
    assert estimate_cost(parse(expression)) == cost


@pytest.mark.parametrize(
    "expression",
    [
        "[1, 2, 3].isSorted()",
        "![2.0, 1.0].isSorted()",
        "[1].isSorted()",
        "[].isSorted()",
        "[1, 3].sum() == 4",
        "[1.0, 3.0].sum() == 4.0",
        "[duration('1m'), duration('1s')].sum() == duration('61s')",
        "[].sum() == 0",
        "[1, 3].min() == 1",
        "[1, 3].max() == 3",
        "[1].min() == 1",
        "[1, 2, 2, 3].indexOf(2) == 1",
        "[1.0].indexOf(1.1) == -1",
        "[].indexOf('string') == -1",
        "'abc 123'.find('[0-9]+') == '123'",
        "'abc 123'.find('xyz') == ''",
        "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
        "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
        "'123 abc 456'.findAll('xyz') == []",
        # Go's FindAllString drops an empty match abutting the previous match
        "'123 abc 456'.findAll('[0-9]*') == ['123', '', '', '', '', '456']",
    ],
)
def test_lists_and_regex(expression: str) -> None:
    # the examples of lists.go and regex.go
    assert _evaluate(expression) is True


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("[].min() == 0", "min called on empty list"),
        ("[].max() == 0", "max called on empty list"),
        ("'abc'.find('(') == ''", "Illegal regex"),
        # RE2 has no lookaround and no backreferences
        (
            "'ab'.find('a(?=b)') == 'a'",
            "Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `\\(\\?=`",
        ),
        ("'aa'.findAll('(a)\\\\1') == []", "Illegal regex: error parsing regexp: invalid escape"),
    ],
)
def test_lists_and_regex_errors(expression: str, error: str) -> None:
    with pytest.raises(CelError, match=f"^{error}"):
        _evaluate(expression)


# ---- ext.Sets (ext/sets_test.go) --------------------------------------------------------

SETS = [
    ("sets.contains([], [])", 21),
    ("sets.contains([1], [])", 21),
    ("sets.contains([1], [1])", 22),
    ("sets.contains([1], [1, 1])", 23),
    ("sets.contains([1, 1], [1])", 23),
    ("sets.contains([2, 1], [1])", 23),
    ("sets.contains([1, 2, 3, 4], [2, 3])", 29),
    ("sets.contains([1], [1.0, 1])", 23),
    ("sets.contains([1, 2], [2u, 2.0])", 25),
    ("sets.contains([1, 2u], [2, 2.0])", 25),
    ("sets.contains([1, 2.0, 3u], [1.0, 2u, 3])", 30),
    ("sets.contains([[1], [2, 3]], [[2, 3.0]])", 53),
    ("!sets.contains([1], [2])", 23),
    ("!sets.contains([1], [1, 2])", 24),
    ('!sets.contains([1], ["1", 1])', 24),
    ("!sets.contains([1], [1.1, 1u])", 24),
    ("sets.equivalent([], [])", 21),
    ("sets.equivalent([1], [1])", 23),
    ("sets.equivalent([1], [1, 1])", 25),
    ("sets.equivalent([1, 1], [1])", 25),
    ("sets.equivalent([1], [1u, 1.0])", 25),
    ("sets.equivalent([1], [1u, 1.0])", 25),
    ("sets.equivalent([1, 2, 3], [3u, 2.0, 1])", 39),
    ("sets.equivalent([[1.0], [2, 3]], [[1], [2, 3.0]])", 69),
    ("!sets.equivalent([2, 1], [1])", 26),
    ("!sets.equivalent([1], [1, 2])", 26),
    ("!sets.equivalent([1, 2], [2u, 2, 2.0])", 34),
    ("!sets.equivalent([1, 2], [1u, 2, 2.3])", 34),
    ("sets.intersects([1], [1])", 22),
    ("sets.intersects([1], [1, 1])", 23),
    ("sets.intersects([1, 1], [1])", 23),
    ("sets.intersects([2, 1], [1])", 23),
    ("sets.intersects([1], [1, 2])", 23),
    ("sets.intersects([1], [1.0, 2])", 23),
    ("sets.intersects([1, 2], [2u, 2, 2.0])", 27),
    ("sets.intersects([1, 2], [1u, 2, 2.3])", 27),
    ("sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])", 65),
    ("!sets.intersects([], [])", 22),
    ("!sets.intersects([1], [])", 22),
    ("!sets.intersects([1], [2])", 23),
    ('!sets.intersects([1], ["1", 2])', 24),
    ("!sets.intersects([1], [1.1, 2u])", 24),
]


@pytest.mark.parametrize(("expression", "cost"), SETS)
def test_sets(expression: str, cost: int) -> None:
    selector = compile_selector(expression)
    assert selector.max_cost == cost
    assert selector.matches(EMPTY, DRIVER) is True


# ---- the environment ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("noSuchFunction(1)", "undeclared reference to 'noSuchFunction'"),
        ("device.driver.noSuchMethod()", "undeclared reference to 'noSuchMethod'"),
        ("math.greatest(1, 2) == 2", "undeclared reference to 'math'"),
        ("url('https://example.com') != null", r"url \(URL library\) is not supported"),
        ("ip('10.0.0.1').family() == 4", r"ip \(IP and CIDR libraries\) is not supported"),
        ("[1].all(i, v, v > 0)", r"all \(two-variable comprehensions\) is not supported"),
        ("'%d'.format([1]) == '1'", "format .* is not supported"),
        ("format.named('dns1123Label') != null", "the Kubernetes Format library is not supported"),
        ("ip.isCanonical('10.0.0.1')", "the Kubernetes IP library is not supported"),
    ],
)
def test_undeclared_and_unsupported_references(expression: str, message: str) -> None:
    with pytest.raises(CelError, match=f"compilation failed: {message}"):
        compile_selector(expression)


def test_a_wrong_type_at_run_time_is_no_such_overload() -> None:
    device = Device(name="d", attributes={"cores": DeviceAttribute(108)})
    with pytest.raises(CelError, match=r"^no such overload: lowerAscii\(int\)$"):
        _evaluate('device.attributes["dra.example.com"].cores.lowerAscii() == ""', device)


def test_string_functions_on_attributes() -> None:
    device = Device(name="d", attributes={"model": DeviceAttribute("NVIDIA A100-SXM4-80GB")})
    selector = compile_selector(
        'cel.bind(m, device.attributes["dra.example.com"].model.lowerAscii(), '
        'm.split("-")[0].endsWith("a100") && m.find("[0-9]+gb") == "80gb")'
    )
    assert selector.max_cost < 1_000_000
    assert selector.matches(device, DRIVER) is True


def test_unbounded_string_sizes_saturate_as_cel_go_does() -> None:
    # checker/cost.go multiplyByCostFactor: ceil(float64(MaxUint64) * 0.1).
    tree = parse("'a'.charAt(0) == 'a'.charAt(0)")
    assert estimate_cost(tree) == 1 + 1 + 1844674407370955264
    assert estimate_cost(parse("[[1]].map(x, x)[0] == [1]")) < MAX_UINT64


def test_list_functions_over_a_map_result() -> None:
    # map() over the ids: range 3 + init 10 + result 1 + 32 * (1 + 1 + 10 + 2) = 462;
    # sum() of ints: 32 * 1; > 0: 1.
    ints = 'device.attributes["dra.example.com"].map(k, k.size()).sum() > 0'
    assert estimate_cost(parse(ints)) == 462 + 32 + 1
    # a list of strings of no declared size: each comparison is unbounded
    strings = 'device.attributes["dra.example.com"].map(k, k).indexOf("a") >= 0'
    assert estimate_cost(parse(strings)) == MAX_UINT64
