"""A bit-exact CPU model of TMA, mbarriers and clusters."""
