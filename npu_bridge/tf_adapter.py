"""`from npu_bridge import tf_adapter`: the names scripts read from the adapter's SWIG module.

The real module is the C++ plugin's binding; ported scripts use its GE data-type codes (tf_adapter.DT_FLOAT, as
the dtype of npu_plugin.malloc_shared_memory) and nothing else. The codes are GE's DataType values.
"""
DT_FLOAT = 0
DT_FLOAT16 = 1
DT_INT8 = 2
DT_INT32 = 3
DT_UINT8 = 4
DT_INT16 = 6
DT_UINT16 = 7
DT_UINT32 = 8
DT_INT64 = 9
DT_UINT64 = 10
DT_DOUBLE = 11
DT_BOOL = 12
