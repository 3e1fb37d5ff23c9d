"""privaudit's front ends: the command line, the CI gate, the pytest plugin, progress display,
and the loading of what users name (registered algorithms, ``module:attr``, input files).

This is the top layer (DESIGN.md section 2): it uses the core (`audit`), the algorithms, the
attacks and the reports; nothing imports it.
"""
