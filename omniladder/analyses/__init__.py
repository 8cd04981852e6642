"""Questions asked of plans over time and of what a gateway did: the traffic audit."""
