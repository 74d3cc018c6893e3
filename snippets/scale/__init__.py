"""Autograd at scale (Part VII): compiled, mixed-precision, checkpointed and distributed training.

``launch.run_ranks`` starts the processes of a distributed example (gloo on 127.0.0.1); the
other modules hold each page's examples, as functions a rank runs.
"""
