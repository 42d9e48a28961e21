"""The Opdebug record of overflow detection: the NPU's 2048-byte status payload, written and decoded.

The NPU writes `Opdebug.Node_OpDebug...` as an ordinary dump file (dumpdata.write) whose one uint8 output is
this payload; msaccucmp's `convert` (`dump_parse/dump_data_parser.py`, `_parse_op_debug_old_version`, sizes in
`cmp_utils/constant/const_manager.py`) turns it into the JSON `decode` returns. All fields are little-endian
u64:
- at 0 the DHA Atomic Add info, at 128 the L2 Atomic Add info, at 256 the AI Core info: each
  `model_id, stream_id, task_id, task_type, pc_start, para_base`;
- at 512 the DHA Atomic Add status, at 768 the L2 Atomic Add status;
- at 1024 the AI Core `kernel_code, block_idx, status`.
Newer NPUs write another layout, read here too (`decode`; msaccucmp's `OpDebugInfoParser`): u32 `magic`
0x5a5a5a5a and `version`, then one accelerator record of u32 `valid, acc_type, rsv, data_len` and, from byte 24,
u64 fields named by its type; an AI Core / Vector record of version 1 holds four u64 statuses.
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


_AIC_AIV = ("model_id", "stream_id", "task_id", "task_type", "context_id", "thread_id", "pc_start", "para_base",
            "core_id", "block_id", "status")
NEW_LAYOUT_FIELDS = {"AIC": _AIC_AIV, "AIV": _AIC_AIV,
                     "SDMA": ("model_id", "stream_id", "task_id", "task_type", "context_id", "thread_id", "src_addr",
                              "dst_addr", "channel_id", "status"),
                     "AICPU": ("model_id", "stream_id", "task_id", "task_type", "context_id", "cpu_id", "thread_id",
                               "status")}
ACC_TYPES = {0: "AIC", 1: "AIV", 2: "AICPU", 3: "SDMA"}
NEW_HEX_FIELDS = ("pc_start", "para_base", "src_addr", "dst_addr")
STATUS_WORDS = 4            # the statuses of an AIC / AIV record of version 1
_U32 = struct.Struct("<I")


def decode_new_layout(payload):
    """The JSON msaccucmp writes for a payload of the newer layout: {"magic", "version", "acc_list"}."""
    if len(payload) < 24:
        raise ValueError(f"the Opdebug payload holds {len(payload)} bytes, too few for its newer layout's header")
    magic, version, valid, acc_code, reserved, data_len = (_U32.unpack_from(payload, 4 * i)[0] for i in range(6))
    acc_type = ACC_TYPES.get(acc_code)
    if acc_type is None:
        raise ValueError(f"the Opdebug payload names accelerator type {acc_code}, not one of {ACC_TYPES}")
    fields = NEW_LAYOUT_FIELDS[acc_type]
    wide_status = acc_type in ("AIC", "AIV") and version == 1
    words = len(fields) + (STATUS_WORDS - 1 if wide_status else 0)
    if len(payload) < 24 + 8 * words:
        raise ValueError(f"the Opdebug payload holds {len(payload)} bytes; its {acc_type} record needs {24 + 8 * words}")
    values = _get(payload, 24, words)
    data = dict(zip(fields, values))
    if wide_status:
        data["status"] = values[len(fields) - 1:]
    for name in NEW_HEX_FIELDS:
        if name in data:
            data[name] = hex(data[name])
    return {"magic": hex(magic), "version": version,
            "acc_list": {"valid": valid, "acc_type": acc_type, "rsv": reserved, "data_len": data_len, "data": data}}


def decode(payload):
    """The JSON msaccucmp writes for a payload: {"DHA Atomic Add", "L2 Atomic Add", "AI Core"} for the 2048-byte
    layout, {"magic", "version", "acc_list"} for the newer one; a ValueError saying what is wrong otherwise."""
    if len(payload) >= 4 and _U32.unpack_from(payload)[0] == NEW_LAYOUT_MAGIC:
        return decode_new_layout(payload)
    if len(payload) != SIZE:
        raise ValueError(f"the Opdebug payload holds {len(payload)} bytes where the NPU's layout has {SIZE}")
    dha, l2, ai_core = _info(payload, DHA_INFO), _info(payload, L2_INFO), _info(payload, AI_CORE_INFO)
    dha["status"] = _get(payload, DHA_STATUS, 1)[0]
    l2["status"] = _get(payload, L2_STATUS, 1)[0]
    kernel_code, block_idx, status = _get(payload, AI_CORE_STATUS, len(AI_CORE_STATUS_FIELDS))
    ai_core.update(kernel_code=hex(kernel_code), block_idx=block_idx, status=status)
    return {"DHA Atomic Add": dha, "L2 Atomic Add": l2, "AI Core": ai_core}
