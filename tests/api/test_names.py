"""Name and label checks: upstream's tables, and its messages word for word.

# staging/src/k8s.io/apimachinery/pkg/api/validate/content/kube_test.go (TestIsLabelKey,
# TestIsLabelValue) and .../util/validation/validation_test.go (TestIsDNS1123Label,
# TestIsDNS1123Subdomain).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ksched.api._names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    is_valid_port_num,
    is_valid_qualified_name,
    label_value_errors,
    qualified_name_errors,
)

LABEL_KEY_GOOD = [
    "simple",
    "now-with-dashes",
    "1-starts-with-num",
    "1234",
    "simple/simple",
    "now-with-dashes/simple",
    "now-with-dashes/now-with-dashes",
    "now.with.dots/simple",
    "now-with.dashes-and.dots/simple",
    "1-num.2-num/3-num",
    "1234/5678",
    "1.2.3.4/5678",
    "Uppercase_Is_OK_123",
    "example.com/Uppercase_Is_OK_123",
    "requests.storage-foo",
    "a" * 63,
    "a" * 253 + "/" + "b" * 63,
]
LABEL_KEY_BAD = [
    "nospecialchars%^=@",
    "cantendwithadash-",
    "-cantstartwithadash-",
    "only/one/slash",
    "Example.com/abc",
    "example_com/abc",
    "example.com/",
    "/simple",
    "a" * 64,
    "a" * 254 + "/abc",
]


@pytest.mark.parametrize("key", LABEL_KEY_GOOD, ids=[k[:40] for k in LABEL_KEY_GOOD])
def test_is_label_key_success_cases(key: str) -> None:
    assert is_qualified_name(key) == []


@pytest.mark.parametrize("key", LABEL_KEY_BAD, ids=[k[:40] for k in LABEL_KEY_BAD])
def test_is_label_key_error_cases(key: str) -> None:
    assert is_qualified_name(key) != []


LABEL_VALUE_GOOD = ["simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234"]
LABEL_VALUE_GOOD += ["a" * 63, ""]
LABEL_VALUE_BAD = [
    "nospecialchars%^=@",
    "Tama-nui-te-rā.is.Māori.sun",
    "\\backslashes\\are\\bad",
    "-starts-with-dash",
    "ends-with-dash-",
    ".starts.with.dot",
    "ends.with.dot.",
    "a" * 64,
]


@pytest.mark.parametrize(
    "value", LABEL_VALUE_GOOD, ids=[v[:40] or "empty" for v in LABEL_VALUE_GOOD]
)
def test_is_label_value_success_cases(value: str) -> None:
    assert is_label_value(value) == []


@pytest.mark.parametrize("value", LABEL_VALUE_BAD, ids=[v[:40] for v in LABEL_VALUE_BAD])
def test_is_label_value_error_cases(value: str) -> None:
    assert is_label_value(value) != []


@pytest.mark.parametrize(
    "value",
    ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2"],
)
def test_is_dns1123_label_success_cases(value: str) -> None:
    assert is_dns1123_label(value) == []


@pytest.mark.parametrize(
    "value",
    ["", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a",
     "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2", " ", "a ", " a",
     "a b", "1 ", " 1", "1 2", "a" * 64],
)  # fmt: skip
def test_is_dns1123_label_error_cases(value: str) -> None:
    assert is_dns1123_label(value) != []


@pytest.mark.parametrize(
    "value",
    ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2",
     "a.a", "ab.a", "abc.a", "a1.a", "a-1.a", "a--1--2--b.a", "a.1", "ab.1", "abc.1", "a1.1",
     "a-1.1", "a--1--2--b.1", "0.a", "01.a", "012.a", "1a.a", "1-a.a", "1--a--b--2",
     "0.1", "01.1", "012.1", "1a.1", "1-a.1", "1--a--b--2.1", "a.b.c.d.e", "aa.bb.cc.dd.ee",
     "1.2.3.4.5", "11.22.33.44.55", "a" * 253],
)  # fmt: skip
def test_is_dns1123_subdomain_success_cases(value: str) -> None:
    assert is_dns1123_subdomain(value) == []


@pytest.mark.parametrize(
    "value",
    ["", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a",
     "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a..b", "1.", ".1", "1..2", " ", "a ", " a",
     "a b", "1 ", " 1", "1 2", "A.a", "aB.a", "ab.A", "A1.a", "a1.A", "A.1", "aB.1", "A1.1",
     "1A.1", "0.A", "01.A", "012.A", "1A.a", "1a.A", "A.B.C.D.E", "AA.BB.CC.DD.EE", "a.B.c.d.e",
     "aa.bB.cc.dd.ee", "a@b", "a,b", "a_b", "a;b", "a:b", "a%b", "a?b", "a$b", "a" * 254],
)  # fmt: skip
def test_is_dns1123_subdomain_error_cases(value: str) -> None:
    assert is_dns1123_subdomain(value) != []


def test_messages_are_upstreams_word_for_word() -> None:
    assert is_dns1123_subdomain("nodeA") == [
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        "'-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]
    assert is_qualified_name("NoUppercaseOrSpecialCharsLike=Equals") == [
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
        "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    ]
    assert is_dns1123_label("a.b") == ["must not contain dots"]
    assert is_qualified_name("/simple")[0] == "prefix part must be non-empty"
    assert is_valid_port_num(65536) == ["must be between 1 and 65535, inclusive"]
    assert is_valid_port_num(1) == []


# Strings near the edges of the rules: the characters they allow and a few they do not,
# "/" and "." often, lengths around 63 and 253.
_NAME_CHARS = st.sampled_from("aZ09-_./" + "A.z/\n é")
_NAMES = st.one_of(
    st.text(_NAME_CHARS, max_size=20),
    st.builds(
        lambda prefix, name: f"{prefix}/{name}",
        st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,260}[a-z0-9])?", fullmatch=True),
        st.text(_NAME_CHARS, min_size=0, max_size=70),
    ),
    st.text(st.sampled_from("ab.-_"), min_size=55, max_size=70),
)


@given(_NAMES)
def test_the_one_match_check_of_a_qualified_name_agrees_with_every_check(value: str) -> None:
    assert is_valid_qualified_name(value) == (not qualified_name_errors(value))
    assert is_qualified_name(value) == qualified_name_errors(value)


@given(_NAMES)
def test_the_one_match_check_of_a_label_value_agrees_with_every_check(value: str) -> None:
    assert is_label_value(value) == label_value_errors(value)


@pytest.mark.parametrize("key", LABEL_KEY_GOOD)
def test_good_label_keys_pass_the_one_match_check(key: str) -> None:
    assert is_valid_qualified_name(key)


@pytest.mark.parametrize("key", LABEL_KEY_BAD)
def test_bad_label_keys_fail_the_one_match_check(key: str) -> None:
    assert not is_valid_qualified_name(key)
