"""One module per paper; importing a module registers its statements (``seed000`` ... ``seed004``)."""
