"""Accelerator drivers: one module per vendor, plus a fake driver."""
