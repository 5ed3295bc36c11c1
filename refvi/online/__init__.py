"""refvi.online (under construction)."""
