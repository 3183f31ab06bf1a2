"""Resource names: extended and scalar resources.

# pkg/apis/core/v1/helper/helpers.go, pkg/scheduler/util
"""

from __future__ import annotations

import functools
import re

# ---- resource names (pkg/apis/core/v1/helper, pkg/scheduler/util) ------------------------

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def qualified_name_errors(value: str) -> list[str]:
    """apimachinery's IsQualifiedName: ``[prefix/]name``, prefix a DNS-1123 subdomain."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return ["prefix part must be a lowercase RFC 1123 subdomain"]
    else:
        return ["a qualified name must consist of a name with an optional DNS subdomain prefix"]
    if not name:
        return ["name part must be non-empty"]
    if len(name) > 63:
        return ["name part must be no more than 63 characters"]
    if not _QUALIFIED_NAME.match(name):
        return ["name part must consist of alphanumeric characters, '-', '_' or '.'"]
    return []


def is_prefixed_native_resource(name: str) -> bool:
    return "kubernetes.io/" in name


@functools.lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """Fully qualified, outside the ``kubernetes.io`` domain, and not a quota name."""
    if "/" not in name or is_prefixed_native_resource(name) or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


@functools.lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages, ``kubernetes.io/``-prefixed or attachable-volume resources."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or is_prefixed_native_resource(name)
        or name.startswith("attachable-volumes-")
    )
