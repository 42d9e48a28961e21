"""Gradient split strategies of the CANN hccl package: checked, and a tuning knob with no effect here."""
