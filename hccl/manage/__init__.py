"""Group management of the CANN hccl package, answered for the single emulated rank."""
