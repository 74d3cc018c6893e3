"""Derive the backward: nine layers an interviewer asks for, and a checker for your answer.

Each task is a module ``snippets.workshop.<task>`` with the layer's ``forward`` and the
reference ``backward`` side by side, shapes and dtypes in its docstring, and what the checker
needs (its cases, torch's own version of the layer, its hints). ``starters/<task>.py`` is the
starter a reader edits. ``python -m snippets.workshop list`` lists the tasks;
``python -m snippets.workshop check TASK [FILE] [--starter]`` checks a backward.
"""

RECORD_VARIABLE = "WORKSHOP_RECORD"  # names the record's folder (check.default_record)

TASKS = ("softmax_ce", "logsumexp", "layernorm", "batchnorm", "attention", "linear", "embedding", "maxpool",
         "custom_op")
