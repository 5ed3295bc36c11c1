"""refvi.optim (under construction)."""
