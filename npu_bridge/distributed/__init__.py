"""Multi-rank jobs on TensorFlow's own distributed runtime: what HCCL is to the NPU, emulated on one machine.

Each rank is one process running the user's script. The processes find each other through the rank table
(RANK_TABLE_FILE, the real version 1.0 format), start one TensorFlow gRPC server each (ClusterSpec job
"worker", task = rank id, port HCCL_IF_BASE_PORT + rank id on the rank's server_id address), and run HCCL
collectives as TensorFlow collective ops (group and instance keys) inside ordinary v1 sessions on those servers.

    rank_table.py   parse, check and write rank tables
    job.py          this process's rank, the job's ranks and addresses, read from the environment
    cluster.py      the gRPC server and the session target / config sessions need to run collectives
    ports.py        free loopback ports (TensorFlow-free, for the launcher)
    collectives.py  HCCL semantics as TensorFlow collective ops (keys, groups, timeouts)
    launch.py       `npu-run --ranks N`: N rank processes with their environment, supervised
"""
