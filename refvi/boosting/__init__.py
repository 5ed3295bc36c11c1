"""refvi.boosting (under construction)."""
