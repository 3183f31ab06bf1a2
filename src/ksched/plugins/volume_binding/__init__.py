"""VolumeBinding: binds a pod's PersistentVolumeClaims as part of scheduling it."""

from ._binder import ERR_REASON_BIND_CONFLICT as ERR_REASON_BIND_CONFLICT
from ._binder import ERR_REASON_NODE_CONFLICT as ERR_REASON_NODE_CONFLICT
from ._binder import ERR_REASON_NOT_ENOUGH_SPACE as ERR_REASON_NOT_ENOUGH_SPACE
from ._binder import ERR_REASON_PV_NOT_EXIST as ERR_REASON_PV_NOT_EXIST
from ._binder import BindingInfo as BindingInfo
from ._binder import PodVolumes as PodVolumes
from ._binder import VolumeBinder as VolumeBinder
from ._plugin import ERR_UNBOUND_IMMEDIATE as ERR_UNBOUND_IMMEDIATE
from ._plugin import VolumeBinding as VolumeBinding
from ._scorer import DEFAULT_BIND_TIMEOUT_SECONDS as DEFAULT_BIND_TIMEOUT_SECONDS
from ._scorer import UtilizationShapePoint as UtilizationShapePoint
from ._scorer import VolumeBindingArgs as VolumeBindingArgs
from ._scorer import build_scorer as build_scorer

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "BindingInfo",
    "PodVolumes",
    "UtilizationShapePoint",
    "VolumeBinder",
    "VolumeBinding",
    "VolumeBindingArgs",
    "build_scorer",
]
