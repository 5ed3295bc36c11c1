"""refvi.ngvi (under construction)."""
