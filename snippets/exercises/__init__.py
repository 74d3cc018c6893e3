"""The micro-project's four exercises (Part IV), one module each.

Every module has the same parts:

    starter    the code a reader starts from; it runs, and its result is wrong
    solution   the reference solution
    check(fn)  the acceptance criteria: calls ``fn`` and raises AssertionError, with a message
               that says what is wrong and where to look, unless the result is right
    main()     ``python -m snippets.exercises.<name>`` prints the solution's results

The tests assert that every check passes on ``solution`` and fails on ``starter``.
"""


def attempt(check, fn, *args, **kwargs):
    """Run ``check(fn, ...)`` and return ``"PASS"`` or ``"FAIL: <message>"``.

    For a notebook cell that shows a starter failing without stopping the notebook.
    Only an AssertionError (a failed acceptance criterion) is caught; any other error
    propagates, since it is a bug in the code under check, not a wrong answer.
    """
    if not callable(check) or not callable(fn):
        raise TypeError("attempt(check, fn): pass the module's check and the function to check")
    try:
        check(fn, *args, **kwargs)
    except AssertionError as exc:
        return f"FAIL: {exc}"
    return "PASS"
