"""The structured allocator: devices on one node for all of a pod's unallocated claims.

# staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/
# allocator_stable.go (Allocate, validateDeviceRequest, allocateOne, isSelectable,
# allocateDevice, createNodeSelector, matchAttributeConstraint, lookupAttribute) and
# pools_stable.go (GatherPools: newest generation per pool, incomplete and invalid pools).
An exhaustive search that stops at the first full solution: claims in order, their
requests in order, each device of a request tried over pools, slices and devices in
order; ``firstAvailable`` tries its subrequests in order.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from typing import Final

import attrs

from ...api import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationResult,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ResourceClaim,
    ResourceSlice,
    compile_selector,
)

__all__ = [
    "AllocationError",
    "Allocator",
    "DeviceID",
    "InvalidPoolsError",
    "Pool",
    "PoolCache",
    "Solution",
    "gather_pools",
]

DeviceID = tuple[str, str, str]
"""(driver, pool, device)."""

SelectorMatcher = Callable[[str, Device, str], bool]
"""``matcher(expression, device, driver)``; raises for a CEL runtime error."""

ALL: Final = "All"


class AllocationError(Exception):
    """A claim or class that cannot be handled at all (not "does not fit"): Filter turns
    it into an Error status, as upstream does."""


class InvalidPoolsError(AllocationError):
    """No solution on this node, and some reachable pool was invalid (upstream
    ErrFailedAllocationOnNode): the node is unschedulable, other nodes may do."""


@attrs.define(eq=False)
class Pool:
    driver: str
    name: str
    slices: list[ResourceSlice]
    incomplete: bool = False
    invalid: bool = False
    entries: list[tuple[ResourceSlice, DeviceID, Device]] = attrs.field(factory=list)
    """Every device of the pool with its id, in listing order."""

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def _node_matches(slice_: ResourceSlice, node: Node) -> bool:
    if slice_.node_name:
        return node.metadata.name == slice_.node_name
    if slice_.all_nodes:
        return True
    if slice_.node_selector is not None:
        return slice_.node_selector.matches(node.metadata.name, node.metadata.labels)
    return False


def gather_pools(slices: Sequence[ResourceSlice], node: Node) -> list[Pool]:
    """The pools with devices reachable from ``node``: the newest generation's slices."""
    pools: dict[tuple[str, str], Pool] = {}
    for s in slices:
        if not _node_matches(s, node):
            continue
        key = (s.driver, s.pool.name)
        pool = pools.get(key)
        if pool is None:
            pools[key] = Pool(s.driver, s.pool.name, [s])
            continue
        current = pool.slices[0].pool.generation
        if s.pool.generation < current:
            continue
        if s.pool.generation > current:
            pool.slices = []
        pool.slices.append(s)
    for pool in pools.values():
        pool.incomplete = len(pool.slices) != pool.slices[0].pool.resource_slice_count
        pool.entries = [
            (s, (pool.driver, pool.name, d.name), d) for s in pool.slices for d in s.devices
        ]
        pool.invalid = len(pool.entries) != len({e[1] for e in pool.entries})
    return list(pools.values())


class PoolCache:
    """Pools per node, kept across pods while the node and its slices stay the same
    objects (both are replaced, never changed, when they change)."""

    __slots__ = ("_pools",)

    def __init__(self) -> None:
        self._pools: dict[str, tuple[Node, list[ResourceSlice], list[Pool]]] = {}

    def pools(self, node: Node, slices: list[ResourceSlice]) -> list[Pool]:
        name = node.metadata.name
        cached = self._pools.get(name)
        if (
            cached is not None
            and cached[0] is node
            and len(cached[1]) == len(slices)
            and all(a is b for a, b in zip(cached[1], slices, strict=True))
        ):
            return cached[2]
        pools = gather_pools(slices, node)
        self._pools[name] = (node, list(slices), pools)
        return pools


@attrs.define(eq=False)
class _Request:
    """One request, or one subrequest of a ``firstAvailable`` request."""

    claim: int
    name: str  # "req" or "req/sub"
    base: str  # the request's own name
    sub: str  # the subrequest's name, "" for a plain request
    class_: DeviceClass
    selectors: tuple[str, ...]
    all_mode: bool
    count: int
    admin_access: bool
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] = attrs.field(factory=list)


class _MatchAttribute:
    """All devices of the constrained requests share the attribute's value."""

    __slots__ = ("attribute", "num", "requests", "value")

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute
        self.value: DeviceAttribute | None = None
        self.num = 0

    def _applies(self, req: _Request) -> bool:
        return not self.requests or req.base in self.requests or req.name in self.requests

    def add(self, req: _Request, device: Device, device_id: DeviceID) -> bool:
        if not self._applies(req):
            return True
        attr = lookup_attribute(device, device_id[0], self.attribute)
        if attr is None:
            return False
        if self.num == 0:
            self.value, self.num = attr, 1
            return True
        have = self.value
        assert have is not None
        # bool is an int in Python: compare the kinds too, as the API's typed fields do.
        if type(attr.value) is not type(have.value) or attr.value != have.value:
            return False
        self.num += 1
        return True

    def remove(self, req: _Request) -> None:
        if self._applies(req):
            self.num -= 1


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """The fully qualified attribute, or its bare id when the domain is the driver's."""
    found = device.attributes.get(name)
    if found is not None:
        return found
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


class Allocator:
    """Allocates ``claims`` (none allocated yet) on one node at a time.

    ``allocated`` holds the devices in use by other claims, in-flight ones included.
    """

    def __init__(
        self,
        claims: Sequence[ResourceClaim],
        classes: Mapping[str, DeviceClass],
        slices: Sequence[ResourceSlice],
        allocated: Container[DeviceID],
        matcher: SelectorMatcher,
        pool_cache: PoolCache | None = None,
    ) -> None:
        self.claims = list(claims)
        self.classes = classes
        self.slices = slices
        self.allocated = allocated
        self.matcher = matcher
        self.pool_cache = pool_cache if pool_cache is not None else PoolCache()
        # Slices by the node they name, and those a selector or allNodes may reach: a
        # node's Filter looks at its own and the shared ones, not at every slice.
        self._by_node: dict[str, list[ResourceSlice]] = {}
        self._shared: list[ResourceSlice] = []
        self._position: dict[int, int] = {}
        for i, s in enumerate(slices):
            self._position[id(s)] = i
            if s.node_name:
                self._by_node.setdefault(s.node_name, []).append(s)
            else:
                self._shared.append(s)

        # Requests resolved once (classes, selectors compiled); a problem is kept and
        # raised by every allocate(), as upstream's Allocate reports it per node.
        self._error: AllocationError | None = None
        self._specs: list[list[list[_Request]]] = []
        try:
            self._specs = [self._claim_specs(ci, c) for ci, c in enumerate(self.claims)]
        except AllocationError as exc:
            self._error = exc

    def _claim_specs(self, ci: int, claim: ResourceClaim) -> list[list[_Request]]:
        out: list[list[_Request]] = []
        for req in claim.spec.requests:
            if req.first_available:
                out.append([self._spec(ci, s, req.name, s.name) for s in req.first_available])
            else:
                out.append([self._spec(ci, req, req.name, "")])
        return out

    def _spec(
        self, ci: int, req: DeviceRequest | DeviceSubRequest, base: str, sub: str
    ) -> _Request:
        name = f"{base}/{sub}" if sub else base
        claim = self.claims[ci].key
        class_ = self.classes.get(req.device_class_name)
        if class_ is None:
            raise AllocationError(
                f"claim {claim}, request {name}: could not retrieve device class "
                f"{req.device_class_name}: deviceclass.resource.k8s.io "
                f'"{req.device_class_name}" not found'
            )
        for owner, selectors in (
            (f"class {class_.name}", class_.selectors),
            (f"claim {claim}", req.selectors),
        ):
            for i, expression in enumerate(selectors):
                try:
                    compile_selector(expression)
                except ValueError as exc:
                    raise AllocationError(
                        f"{owner}: selector #{i}: CEL compile error: {exc}"
                    ) from exc
        return _Request(
            claim=ci,
            name=name,
            base=base,
            sub=sub,
            class_=class_,
            selectors=req.selectors,
            all_mode=req.allocation_mode == ALL,
            count=req.count,
            admin_access=isinstance(req, DeviceRequest) and req.admin_access,
        )

    def slices_for(self, node: Node) -> list[ResourceSlice]:
        """The slices that may hold devices reachable from ``node``, in listing order."""
        own = self._by_node.get(node.metadata.name, [])
        if not self._shared:
            return own
        if not own:
            return self._shared
        return sorted([*own, *self._shared], key=lambda s: self._position[id(s)])

    def allocate(self, node: Node) -> list[AllocationResult] | None:
        """One allocation result per claim, or None when the node cannot satisfy them.

        Raises:
            AllocationError: a claim or class that no node can handle, or a CEL runtime
                error; the message names the claim or class and the selector.
        """
        solution = self.solve(node)
        return None if solution is None else solution.results()

    def solve(self, node: Node) -> Solution | None:
        """Like :meth:`allocate`, with the results built only when asked for (Filter finds
        a solution on many nodes; Reserve needs the one of the chosen node)."""
        if self._error is not None:
            raise self._error
        run = _Run(self, node)
        return Solution(run) if run.run() else None


class Solution:
    """An allocation found on one node."""

    __slots__ = ("_run",)

    def __init__(self, run: _Run) -> None:
        self._run = run

    def results(self) -> list[AllocationResult]:
        """One allocation result per claim, in the allocator's claim order."""
        return [self._run.result(ci) for ci in range(len(self._run.a.claims))]


class _Run:
    """One Allocate call: per-node state for the backtracking search."""

    def __init__(self, alloc: Allocator, node: Node) -> None:
        self.a = alloc
        self.node = node
        self.pools = alloc.pool_cache.pools(node, alloc.slices_for(node))
        self.matches: dict[tuple[DeviceID, int], bool] = {}
        self.requests: list[list[list[_Request]]] = []  # claim -> request -> alternatives
        self.constraints: list[list[_MatchAttribute]] = []
        self.in_use: dict[DeviceID, set[int]] = {}
        self.results: list[list[tuple[_Request, DeviceID, ResourceSlice]]] = []

    # ---- per-node requests -----------------------------------------------------------

    def _claim_name(self, index: int) -> str:
        return self.a.claims[index].key

    def _for_node(self, spec: _Request) -> _Request:
        """The request as this node sees it: an All request gets this node's devices."""
        if not spec.all_mode:
            return spec
        r = attrs.evolve(spec, all_devices=[])
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(
                    f"claim {self._claim_name(r.claim)}, request {r.name}: asks for all "
                    f"devices, but resource pool {pool.id} is currently being updated"
                )
            if pool.invalid:
                raise AllocationError(
                    f"claim {self._claim_name(r.claim)}, request {r.name}: asks for all "
                    f"devices, but resource pool {pool.id} is currently invalid"
                )
            for s, device_id, device in pool.entries:
                if self._selectable(r, device_id, device, s):
                    r.all_devices.append((device_id, device, s))
        r.count = len(r.all_devices)
        return r

    def _prepare(self) -> None:
        for ci, claim in enumerate(self.a.claims):
            per_request = [[self._for_node(r) for r in alts] for alts in self.a._specs[ci]]
            min_devices = sum(min(r.count for r in alts) for alts in per_request)
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim.key}: number of requested devices {min_devices} exceeds "
                    f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            self.requests.append(per_request)
            self.constraints.append(
                [
                    _MatchAttribute(c.requests, c.match_attribute)
                    for c in claim.spec.constraints
                    if c.match_attribute is not None
                ]
            )
            self.results.append([])

    # ---- the search --------------------------------------------------------------

    def run(self) -> bool:
        self._prepare()
        if not self._claim(0):
            if any(pool.invalid for pool in self.pools):
                raise InvalidPoolsError("invalid resource pools were encountered")
            return False
        return True

    def _claim(self, ci: int) -> bool:
        if ci >= len(self.a.claims):
            return True
        return self._request(ci, 0)

    def _request(self, ci: int, ri: int) -> bool:
        if ri >= len(self.requests[ci]):
            return self._claim(ci + 1)
        for req in self.requests[ci][ri]:  # firstAvailable: the first that works
            if req.all_mode and not req.all_devices:
                continue
            if len(self.results[ci]) + req.count > ALLOCATION_RESULTS_MAX_SIZE:
                continue
            if self._device(req, ci, ri, 0):
                return True
        return False

    def _device(self, req: _Request, ci: int, ri: int, n: int) -> bool:
        if n >= req.count:
            return self._request(ci, ri + 1)
        if req.all_mode:
            device_id, device, s = req.all_devices[n]
            undo = self._take(req, device_id, device, s, must=True)
            if undo is None:
                return False
            if self._device(req, ci, ri, n + 1):
                return True
            undo()
            return False
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            allocated, in_use, admin = self.a.allocated, self.in_use, req.admin_access
            for s, device_id, device in pool.entries:
                if admin:
                    if req.claim in in_use.get(device_id, ()):
                        continue
                elif device_id in allocated or device_id in in_use:
                    continue
                if not self._selectable(req, device_id, device, s):
                    continue
                undo = self._take(req, device_id, device, s, must=False)
                if undo is None:
                    continue
                if self._device(req, ci, ri, n + 1):
                    return True
                undo()
        return False

    def _busy(self, req: _Request, device_id: DeviceID) -> bool:
        if req.admin_access:
            return req.claim in self.in_use.get(device_id, ())
        return device_id in self.a.allocated or device_id in self.in_use

    def _selectable(
        self, req: _Request, device_id: DeviceID, device: Device, s: ResourceSlice
    ) -> bool:
        key = (device_id, id(req))
        known = self.matches.get(key)
        if known is not None:
            return known
        ok = self._selectors_match(req, device, s.driver, device_id, class_=True) and (
            self._selectors_match(req, device, s.driver, device_id, class_=False)
        )
        self.matches[key] = ok
        return ok

    def _selectors_match(
        self, req: _Request, device: Device, driver: str, device_id: DeviceID, *, class_: bool
    ) -> bool:
        selectors = req.class_.selectors if class_ else req.selectors
        for i, expression in enumerate(selectors):
            try:
                if not self.a.matcher(expression, device, driver):
                    return False
            except ValueError as exc:
                owner = (
                    f"class {req.class_.name}" if class_ else f"claim {self._claim_name(req.claim)}"
                )
                raise AllocationError(
                    f"{owner}: selector #{i} on device {'/'.join(device_id)}: "
                    f"CEL runtime error: {exc}"
                ) from exc
        return True

    def _take(
        self, req: _Request, device_id: DeviceID, device: Device, s: ResourceSlice, *, must: bool
    ) -> Callable[[], None] | None:
        if self._busy(req, device_id):
            return None
        constraints = self.constraints[req.claim]
        for i, c in enumerate(constraints):
            if not c.add(req, device, device_id):
                if must:
                    raise AllocationError(
                        f"claim {self._claim_name(req.claim)}, request {req.name}: cannot add "
                        f"device {'/'.join(device_id)} because a claim constraint would not "
                        "be satisfied"
                    )
                for done in constraints[:i]:
                    done.remove(req)
                return None
        self.in_use.setdefault(device_id, set()).add(req.claim)
        results = self.results[req.claim]
        results.append((req, device_id, s))

        def undo() -> None:
            for c in constraints:
                c.remove(req)
            users = self.in_use[device_id]
            users.discard(req.claim)
            if not users:
                del self.in_use[device_id]
            results.pop()

        return undo

    # ---- results -----------------------------------------------------------------

    def result(self, ci: int) -> AllocationResult:
        taken = self.results[ci]
        devices = tuple(
            DeviceRequestAllocationResult(
                request=req.name,
                driver=device_id[0],
                pool=device_id[1],
                device=device_id[2],
                admin_access=req.admin_access,
            )
            for req, device_id, _ in taken
        )
        return AllocationResult(devices=devices, node_selector=_node_selector(taken))


def _node_selector(
    taken: Sequence[tuple[_Request, DeviceID, ResourceSlice]],
) -> NodeSelector | None:
    """Where the allocated devices are reachable: the node of a node-local device, else
    the requirements of the slices' node selectors, else everywhere (None)."""
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for _, _, s in taken:
        if s.node_name:
            field = NodeSelectorRequirement(
                key="metadata.name", operator="In", values=(s.node_name,)
            )
            return NodeSelector(terms=(NodeSelectorTerm(match_fields=(field,)),))
        if s.node_selector is not None and s.node_selector.terms:
            term = s.node_selector.terms[0]
            fields.extend(r for r in term.match_fields if r not in fields)
            expressions.extend(r for r in term.match_expressions if r not in expressions)
    if fields or expressions:
        term = NodeSelectorTerm(match_expressions=tuple(expressions), match_fields=tuple(fields))
        return NodeSelector(terms=(term,))
    return None
