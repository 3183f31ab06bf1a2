"""The exceptions ksched raises: one root, each also a fitting stdlib class."""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "KschedError",
    "ManifestError",
    "NotFoundError",
    "SchedulerClosedError",
]


class KschedError(Exception):
    """Root of every error ksched raises on purpose."""


class ManifestError(KschedError, ValueError):
    """A Kubernetes object (dict or YAML) that cannot be read.

    The message names the object (``kind namespace/name``) and the field path.
    """


class ConfigError(KschedError, ValueError):
    """An invalid KubeSchedulerConfiguration, profile, plugin or plugin args."""


class NotFoundError(KschedError, LookupError):
    """A named object (pod, node, plugin) that does not exist."""


class SchedulerClosedError(KschedError, RuntimeError):
    """The scheduler was used after it shut down."""
