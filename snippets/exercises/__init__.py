"""The micro-project's four exercises (Part IV), one module each.

Every module has the same parts:

    starter    the code a reader starts from; it runs, and its result is wrong
    solution   the reference solution
    check(fn)  the acceptance criteria: calls ``fn`` and raises CheckError (an AssertionError),
               with a message that says what is wrong and where to look, unless the result is
               right
    main()     ``python -m snippets.exercises.<name>`` prints the solution's results

The tests assert that every check passes on ``solution`` and fails on ``starter``.
"""


import numbers


class CheckError(AssertionError):
    """An acceptance criterion of a check is not met; the message says what is wrong."""


def _is_number(value):
    """Whether a result holds a real number where a check expects one: a Python or NumPy int
    or float (not a bool, not a tensor: the reader's code calls .item())."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def attempt(check, fn, *args, **kwargs):
    """Run ``check(fn, ...)`` and return ``"PASS"`` or ``"FAIL: <message>"``.

    For a notebook cell that shows a starter failing without stopping the notebook.
    Only CheckError (a failed acceptance criterion) is caught; any other error propagates,
    an AssertionError of the code under check (its own ``assert``, or torch's) included,
    since it is a bug in that code, not a wrong answer.
    """
    if not callable(check) or not callable(fn):
        raise TypeError("attempt(check, fn): pass the module's check and the function to check")
    try:
        check(fn, *args, **kwargs)
    except CheckError as exc:
        return f"FAIL: {exc}"
    return "PASS"
