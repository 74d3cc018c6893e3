"""Walk the graph autograd records and draw it as a mermaid flowchart.

The graph is the chain of ``grad_fn`` nodes reached from a tensor through
``next_functions``. Each entry of ``next_functions`` is a pair ``(node, input_nr)``;
``node`` is ``None`` for an input that does not require grad. A leaf that requires grad
appears as an ``AccumulateGrad`` node whose ``.variable`` is the leaf tensor itself.
"""

import torch


def _root_node(tensor):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"expected a torch.Tensor, got {type(tensor).__name__}")
    if tensor.grad_fn is None:
        if tensor.requires_grad:
            raise ValueError(
                "this tensor is a leaf (it has no grad_fn): draw the graph of a tensor "
                "computed from it, such as the loss"
            )
        if not (tensor.is_floating_point() or tensor.is_complex()):
            raise ValueError(
                f"this tensor is {tensor.dtype}, which cannot carry a gradient, so the operation that "
                "made it recorded nothing: draw the floating-point tensor it was computed from"
            )
        raise ValueError(
            "this tensor has no grad_fn: no input required grad, or it was computed "
            "under torch.no_grad() / torch.inference_mode(), so autograd recorded nothing"
        )
    return tensor.grad_fn


# --8<-- [start:walk]
def walk(tensor):
    """Return ``(nodes, edges)`` of the graph that ends at ``tensor.grad_fn``.

    ``nodes`` lists each node once, breadth first from the root; ``edges`` lists
    ``(parent_index, child_index)`` pairs, one per non-None entry of ``next_functions``,
    in the order autograd stores them. Edges point the way gradients flow: from the
    node of an output to the nodes of its inputs.
    """
    root = _root_node(tensor)
    nodes, index, edges = [root], {root: 0}, []
    i = 0
    while i < len(nodes):
        for child, _input_nr in nodes[i].next_functions:
            if child is None:  # an input that does not require grad
                continue
            if child not in index:
                index[child] = len(nodes)
                nodes.append(child)
            edges.append((i, index[child]))
        i += 1
    return nodes, edges
# --8<-- [end:walk]


def node_label(node, names=None):
    """``MulBackward0``, or ``AccumulateGrad (w)`` for the leaf that ``names`` calls ``w``."""
    if not hasattr(node, "next_functions"):
        raise TypeError(f"node must be an autograd node such as t.grad_fn, got {type(node).__name__}")
    if names is not None and not isinstance(names, dict):
        raise TypeError(f"names must be a dict {{name: leaf tensor}}, got {type(names).__name__}")
    label = type(node).__name__
    variable = getattr(node, "variable", None)
    if variable is not None:
        for name, value in (names or {}).items():
            if value is variable:
                return f"{label} ({name})"
    return label


def to_mermaid(tensor, names=None, direction="LR"):
    """The graph of ``tensor`` as mermaid ``flowchart`` source, one line per node and edge.

    ``names`` maps names to leaf tensors, to label their ``AccumulateGrad`` nodes (a ``"``
    in a name is written as mermaid's ``#quot;``).
    The text is deterministic, so a page can show it and a test can regenerate it.
    """
    if direction not in {"LR", "RL", "TB", "TD", "BT"}:
        raise ValueError(f"direction must be one of LR, RL, TB, TD, BT; got {direction!r}")
    nodes, edges = walk(tensor)
    lines = [f"flowchart {direction}"]
    quoted = [node_label(node, names).replace('"', "#quot;") for node in nodes]  # mermaid's escape
    lines += [f'    n{i}["{label}"]' for i, label in enumerate(quoted)]
    lines += [f"    n{a} --> n{b}" for a, b in edges]
    return "\n".join(lines)
