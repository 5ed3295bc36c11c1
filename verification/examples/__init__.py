"""Example adapters showing how to verify an outside implementation with ``--impl``."""
