"""Object templates of scheduler_perf workloads: YAML files run through Go's text/template.

# test/integration/scheduler_perf/create.go getSpecFromTextTemplateFile, getTemplateFuncs
A template sees ``.Index`` (the object's index within its op), ``.Count`` (how many the op
creates) and the workload's params. ksched evaluates the subset the upstream files use:
``{{ .Name }}`` and calls of the arithmetic functions (``{{ DivideInt .Index 8 }}``, nested in
parentheses). Anything else (``if``, ``range``, pipes) is an error naming the file.

A template without ``{{`` is parsed once; a rendered one is parsed once per distinct text,
so pods of the same gang share one parse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from ..api import KubeObject, read_object
from ._errors import WorkloadError

__all__ = ["ObjectTemplate", "render"]

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)
_TOKEN = re.compile(r'\s*(\(|\)|"(?:[^"\\]|\\.)*"|[^\s()]+)')
_FIELD = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)")
_RENDER_CACHE_LIMIT = 4096


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"cannot cast {value!r} to float64")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return float(value)
    raise ValueError(f"cannot cast {value!r} to float64")


def _divide(a: Any, b: Any) -> float:
    divisor = _number(b)
    if divisor == 0:
        raise ValueError("division by zero")
    return _number(a) / divisor


_FUNCS: dict[str, Callable[..., int | float]] = {
    "AddFloat": lambda *xs: math.fsum(_number(x) for x in xs),
    "AddInt": lambda *xs: int(math.fsum(_number(x) for x in xs)),
    "SubtractFloat": lambda a, b: _number(a) - _number(b),
    "SubtractInt": lambda a, b: int(_number(a) - _number(b)),
    "MultiplyFloat": lambda *xs: math.prod(_number(x) for x in xs),
    "MultiplyInt": lambda *xs: int(math.prod(_number(x) for x in xs)),
    "DivideFloat": _divide,
    "DivideInt": lambda a, b: int(_divide(a, b)),
    "Mod": lambda a, b: int(_number(a)) % int(_number(b)),
    # The lower-case names some upstream templates still use (sprig's div and mod).
    "div": lambda a, b: int(_divide(a, b)),
    "mod": lambda a, b: int(_number(a)) % int(_number(b)),
}


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


class _Expr:
    """One parsed action: a field, a literal or a function call."""

    __slots__ = ("args", "func", "kind", "value")

    def __init__(self, kind: str, value: Any = None, func: str = "", args: tuple[_Expr, ...] = ()):
        self.kind = kind
        self.value = value
        self.func = func
        self.args = args

    def eval(self, env: Mapping[str, Any]) -> Any:
        if self.kind == "literal":
            return self.value
        if self.kind == "field":
            if self.value not in env:
                raise KeyError(self.value)
            return env[self.value]
        return _FUNCS[self.func](*(a.eval(env) for a in self.args))


def _parse(tokens: list[str], pos: int, *, nested: bool) -> tuple[_Expr, int]:
    """A term (field, literal, ``( call )``) or, at the top, a call with arguments."""
    head = tokens[pos]
    if head in _FUNCS:
        args: list[_Expr] = []
        pos += 1
        while pos < len(tokens) and tokens[pos] != ")":
            arg, pos = _term(tokens, pos)
            args.append(arg)
        return _Expr("call", func=head, args=tuple(args)), pos
    if nested:
        raise ValueError(f"unknown function {head!r}")
    return _term(tokens, pos)


def _term(tokens: list[str], pos: int) -> tuple[_Expr, int]:
    tok = tokens[pos]
    if tok == "(":
        expr, pos = _parse(tokens, pos + 1, nested=True)
        if pos >= len(tokens) or tokens[pos] != ")":
            raise ValueError("unbalanced parentheses")
        return expr, pos + 1
    field = _FIELD.fullmatch(tok)
    if field:
        return _Expr("field", field.group(1)), pos + 1
    if tok.startswith('"'):
        return _Expr("literal", tok[1:-1].encode().decode("unicode_escape")), pos + 1
    try:
        return _Expr("literal", int(tok)), pos + 1
    except ValueError:
        pass
    try:
        return _Expr("literal", float(tok)), pos + 1
    except ValueError:
        raise ValueError(f"unsupported template action {tok!r}") from None


def _compile(source: str, text: str) -> list[tuple[str, _Expr]]:
    """``(literal text before, action)`` pairs; the final text is the tail."""
    out: list[tuple[str, _Expr]] = []
    last = 0
    for match in _ACTION.finditer(text):
        body = match.group(1)
        tokens = _TOKEN.findall(body)
        try:
            if not tokens or "|" in tokens:
                raise ValueError(f"unsupported template action {{{{{body}}}}}")
            expr, pos = _parse(tokens, 0, nested=False)
            if pos != len(tokens):
                raise ValueError(f"unsupported template action {{{{{body}}}}}")
        except ValueError as exc:
            raise WorkloadError(f"{source}: {exc}") from None
        out.append((text[last : match.start()], expr))
        last = match.end()
    out.append((text[last:], _Expr("literal", "")))
    return out


def render(source: str, text: str, env: Mapping[str, Any]) -> str:
    """``text`` with its ``{{ }}`` actions evaluated against ``env``."""
    parts = _compile(source, text)
    return _render_compiled(source, parts, env)


def _render_compiled(source: str, parts: list[tuple[str, _Expr]], env: Mapping[str, Any]) -> str:
    chunks: list[str] = []
    for literal, expr in parts:
        chunks.append(literal)
        try:
            chunks.append(_format(expr.eval(env)))
        except KeyError as exc:
            raise WorkloadError(
                f"{source}: template uses .{exc.args[0]}, which is not set"
            ) from None
        except (ValueError, TypeError, ZeroDivisionError) as exc:
            raise WorkloadError(f"{source}: {exc}") from None
    return "".join(chunks)


class ObjectTemplate:
    """A Kubernetes object template file: ``build(env)`` gives the object for one index."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.text = path.read_text()
        except OSError as exc:
            raise WorkloadError(f"template {path}: {exc.strerror or exc}") from exc
        self.static = "{{" not in self.text
        self._parts = None if self.static else _compile(str(path), self.text)
        self._cache: dict[str, dict[str, Any]] = {}
        self.fields = frozenset(_FIELD.findall(" ".join(_ACTION.findall(self.text))))
        """Names the template reads (``.Index``, params...)."""

    def data(self, env: Mapping[str, Any]) -> dict[str, Any]:
        """The object's dict for ``env``. Callers must not mutate it (it may be shared)."""
        text = self.text
        if self._parts is not None:
            text = _render_compiled(str(self.path), self._parts, env)
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
        except yaml.YAMLError as exc:
            raise WorkloadError(f"template {self.path}: invalid YAML: {exc}") from exc
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise WorkloadError(f"template {self.path}: expected one Kubernetes object")
        if len(self._cache) >= _RENDER_CACHE_LIMIT:
            self._cache.clear()
        self._cache[text] = docs[0]
        return docs[0]

    def build(self, env: Mapping[str, Any], name: str, namespace: str | None) -> KubeObject:
        """The object for ``env``, named ``name`` (when the template only has generateName)."""
        data = self.data(env)
        meta = dict(data.get("metadata") or {})
        if not meta.get("name"):
            meta["name"] = name
        if namespace is not None:
            meta["namespace"] = namespace
        return read_object({**data, "metadata": meta})

    @property
    def generate_name(self) -> str:
        """``metadata.generateName`` of a static template ('' when unset or templated)."""
        if not self.static:
            return ""
        meta = self.data({}).get("metadata") or {}
        return str(meta.get("generateName") or "")
