"""The Opdebug record of overflow detection: the NPU's 2048-byte status payload, written and decoded.

The NPU writes `Opdebug.Node_OpDebug...` as an ordinary dump file (dumpdata.write) whose one uint8 output is
this payload; msaccucmp's `convert` (`dump_parse/dump_data_parser.py`, `_parse_op_debug_old_version`, sizes in
`cmp_utils/constant/const_manager.py`) turns it into the JSON `decode` returns. All fields are little-endian
u64:
- at 0 the DHA Atomic Add info, at 128 the L2 Atomic Add info, at 256 the AI Core info: each
  `model_id, stream_id, task_id, task_type, pc_start, para_base`;
- at 512 the DHA Atomic Add status, at 768 the L2 Atomic Add status;
- at 1024 the AI Core `kernel_code, block_idx, status`.
The newer layout (first u32 0x5a5a5a5a) is recognised, not decoded.
"""
import struct

SIZE = 2048
NEW_LAYOUT_MAGIC = 0x5a5a5a5a
INFO_FIELDS = ("model_id", "stream_id", "task_id", "task_type", "pc_start", "para_base")
HEX_FIELDS = ("pc_start", "para_base")
DHA_INFO, L2_INFO, AI_CORE_INFO = 0, 128, 256
DHA_STATUS, L2_STATUS, AI_CORE_STATUS = 512, 768, 1024
AI_CORE_STATUS_FIELDS = ("kernel_code", "block_idx", "status")
AICORE_FLOAT_OVERFLOW = 0x20        # the AI Core status bit of a floating-point overflow
_U64 = struct.Struct("<Q")


def _put(buffer, offset, values):
    for index, value in enumerate(values):
        _U64.pack_into(buffer, offset + index * _U64.size, value)


def encode(model_id, task_id, status=AICORE_FLOAT_OVERFLOW, stream_id=0):
    """The payload the NPU writes for a step whose first overflowing AI Core task is `task_id` of `model_id`:
    that task's info and `status` in the AI Core blocks, the atomic units' info naming the model, status 0."""
    buffer = bytearray(SIZE)
    clear = (model_id, stream_id, 0, 0, 0, 0)
    _put(buffer, DHA_INFO, clear)
    _put(buffer, L2_INFO, clear)
    _put(buffer, AI_CORE_INFO, (model_id, stream_id, task_id, 0, 0, 0))
    _put(buffer, AI_CORE_STATUS, (0, 0, status))
    return bytes(buffer)


def _get(payload, offset, count):
    return [_U64.unpack_from(payload, offset + index * _U64.size)[0] for index in range(count)]


def _info(payload, offset):
    values = dict(zip(INFO_FIELDS, _get(payload, offset, len(INFO_FIELDS))))
    for name in HEX_FIELDS:
        values[name] = hex(values[name])
    return values


def decode(payload):
    """The JSON msaccucmp writes for a payload: {"DHA Atomic Add", "L2 Atomic Add", "AI Core"}; a ValueError
    saying what the payload is when it is not the 2048-byte layout."""
    if len(payload) >= 4 and struct.unpack_from("<I", payload)[0] == NEW_LAYOUT_MAGIC:
        raise ValueError("an Opdebug payload in the newer layout (magic 0x5a5a5a5a): npu-debug decodes the "
                         "2048-byte one; msaccucmp.py convert decodes both")
    if len(payload) != SIZE:
        raise ValueError(f"the Opdebug payload holds {len(payload)} bytes where the NPU's layout has {SIZE}")
    dha, l2, ai_core = _info(payload, DHA_INFO), _info(payload, L2_INFO), _info(payload, AI_CORE_INFO)
    dha["status"] = _get(payload, DHA_STATUS, 1)[0]
    l2["status"] = _get(payload, L2_STATUS, 1)[0]
    kernel_code, block_idx, status = _get(payload, AI_CORE_STATUS, len(AI_CORE_STATUS_FIELDS))
    ai_core.update(kernel_code=hex(kernel_code), block_idx=block_idx, status=status)
    return {"DHA Atomic Add": dha, "L2 Atomic Add": l2, "AI Core": ai_core}
