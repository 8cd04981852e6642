"""``whatif`` (SPEC §10): the demand a gateway recorded replayed against the fleet as it is,
against alternatives, and held against the least any schedule could have paid.

``demand`` the requests and token units, ``fit`` the consumption model (§10.2), ``replay``
the scenarios on the engine (§10.3), ``bound`` the linear program (§10.6), ``report`` the
answer the views read.
"""
