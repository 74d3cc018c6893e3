"""Reference code of the book. Pages show these files by inclusion; tests/ tests them.

``python -m snippets.<module>`` runs the modules that have a command line (``--help`` lists
their options); on any other module it says so and exits with status 2 (see ``_cli``).
"""

from snippets._cli import refuse_library_module

refuse_library_module()
