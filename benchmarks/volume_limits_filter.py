"""NodeVolumeLimits.filter alone, as in SchedulingMigratedInTreePVs: CPU time per call.

A 500-node cluster as the workload builds it (attach limit 39 per node, CSINodes listing
``kubernetes.io/aws-ebs`` as migrated, pods with one in-tree EBS volume behind a bound
claim), ``--placed`` such pods per node; one pending pod filtered against every node, for
``--pods`` pods. Prints one JSON line: CPU seconds (``time.process_time``) per Filter call.
Run under two ``PYTHONPATH``s, interleaved, to compare two versions of the plugin.

    python benchmarks/volume_limits_filter.py --placed 3
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import attrs

from ksched import InMemoryCluster
from ksched.api import (
    ANN_MIGRATED_PLUGINS,
    AWSElasticBlockStoreVolumeSource,
    ClaimRef,
    CSINode,
    CSINodeDriver,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimVolumeSource,
    Volume,
)
from ksched.framework import CycleState, NodeInfo, PodInfo
from ksched.plugins.node_volume_limits import NodeVolumeLimits
from ksched.testing import make_node, make_pod


class _Handle:
    def __init__(self, cluster: InMemoryCluster) -> None:
        self.cluster = cluster


def _pod(cluster: InMemoryCluster, i: int) -> Any:
    claim, volume = f"pvc-{i}", f"vol-{i}"
    cluster.apply(
        PersistentVolume(
            metadata=ObjectMeta(name=volume, namespace=""),
            claim_ref=ClaimRef(name=claim, namespace="default"),
            phase="Bound",
            aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id=volume),
        )
    )
    cluster.apply(
        PersistentVolumeClaim(
            metadata=ObjectMeta(name=claim, namespace="default"),
            volume_name=volume,
            phase="Bound",
        )
    )
    pod = make_pod(f"p-{i}").obj()
    source = PersistentVolumeClaimVolumeSource(claim_name=claim)
    vol = Volume(name="vol", kind="persistentVolumeClaim", persistent_volume_claim=source)
    return attrs.evolve(pod, spec=attrs.evolve(pod.spec, volumes=(vol,)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--placed", type=int, default=3)
    parser.add_argument("--pods", type=int, default=200)
    args = parser.parse_args()
    cluster = InMemoryCluster()
    ann = {ANN_MIGRATED_PLUGINS: "kubernetes.io/aws-ebs"}
    infos = []
    serial = 0
    for n in range(args.nodes):
        name = f"node-{n}"
        node = make_node(name).capacity(**{"attachable-volumes-csi-ebs.csi.aws.com": "39"}).obj()
        driver = CSINodeDriver(name="ebs.csi.aws.com", node_id=name, allocatable_count=39)
        cluster.apply(
            CSINode(
                metadata=ObjectMeta(name=name, namespace="", annotations=ann), drivers=(driver,)
            )
        )
        info = NodeInfo(node=node, name=name)
        for _ in range(args.placed):
            info.add_pod(PodInfo.of(_pod(cluster, serial)))
            serial += 1
        infos.append(info)
    pending = [_pod(cluster, serial + i) for i in range(args.pods)]
    plugin = NodeVolumeLimits.new(None, _Handle(cluster))  # type: ignore[arg-type]
    start = time.process_time()
    for pod in pending:
        state = CycleState()
        for info in infos:
            plugin.filter(state, pod, info)
    spent = time.process_time() - start
    calls = args.pods * args.nodes
    print(json.dumps({"placed": args.placed, "calls": calls, "usPerCall": spent / calls * 1e6}))


if __name__ == "__main__":
    main()
