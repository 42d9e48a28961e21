"""Gradient split strategies of the CANN hccl package, checked and kept for the single emulated rank."""
