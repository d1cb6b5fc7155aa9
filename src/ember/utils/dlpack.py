"""``torch.utils.dlpack``: zero-copy tensor exchange through the DLPack protocol."""
from .._ops.api_names import DLDeviceType, from_dlpack, to_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
