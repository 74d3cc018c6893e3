"""A gradient-flow inspector: per-layer gradient norms recorded by hooks, as a table and a chart.

For every layer of a model that has a ``weight`` parameter of its own (``nn.Linear``, the
convolutions, the normalisation layers, ``nn.Embedding``) it records, during one backward pass:

* ``out``: the norm of the gradient with respect to the layer's output (a tensor hook that a
  forward hook puts on the output), the signal that flows back through the layer;
* ``weight``: the norm of the gradient of the layer's weight in this pass (a tensor hook on
  the weight; it observes and returns nothing, so the gradient is unchanged).

Each norm is summed in float64: a float32 norm of entries below about 2e-23 reads 0 (their
squares underflow) and one of entries near 1e19 reads inf. Every hook, the ones put on outputs
too, is removed when the ``with`` block ends: run forward and backward inside it. A module with parameters but no ``weight``
(an ``nn.LSTM``, say) is refused rather than skipped, so every layer with parameters is in
the report, by its weight (a bias's gradient is not recorded).
"""

import math

import torch
from torch import nn

from snippets.guards import require_module


# --8<-- [start:inspector]
class GradientFlow:
    """``with GradientFlow(model) as flow: loss.backward()`` then read ``flow.norms``.

    ``flow.norms`` maps the name of each layer with a weight (as ``named_modules`` gives it)
    to ``{"out": float, "weight": float}``, in the model's order; a layer that the loss does
    not use records nothing (``{}``).
    """

    def __init__(self, model):
        require_module(model)
        own = {n: dict(m.named_parameters(recurse=False)) for n, m in model.named_modules()}
        no_weight = [repr(n) for n, params in own.items() if params and "weight" not in params]
        if no_weight:
            raise ValueError(f"module(s) {', '.join(no_weight)} have parameters but none named weight: "
                             "GradientFlow inspects layers with a weight (Linear, Conv, norm layers, Embedding)")
        self.layers = [(n, m) for n, m in model.named_modules() if "weight" in own[n]]
        if not self.layers:
            raise ValueError("model has no parameters: there is no layer to inspect")
        for n, m in self.layers:
            if not m.weight.requires_grad:
                raise ValueError(f"the weight of layer {n!r} ({type(m).__name__}) does not require grad: "
                                 "unfreeze it to inspect its gradient")
        self.norms, self._handles = {}, []

    def _record(self, name, key):
        def hook(grad):
            g = grad.coalesce().values() if grad.is_sparse else grad   # nn.Embedding(sparse=True)
            wide = torch.complex128 if g.is_complex() else torch.float64
            self.norms.setdefault(name, {})[key] = torch.linalg.vector_norm(g, dtype=wide).item()
            # returns None: observe, do not replace
        return hook

    def _on_forward(self, name):
        def hook(module, inputs, output):
            if isinstance(output, torch.Tensor) and output.requires_grad:
                self._handles.append(output.register_hook(self._record(name, "out")))
        return hook

    def __enter__(self):
        for name, layer in self.layers:
            self.norms[name] = {}
            self._handles.append(layer.register_forward_hook(self._on_forward(name)))
            self._handles.append(layer.weight.register_hook(self._record(name, "weight")))
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles.clear()
        return False
# --8<-- [end:inspector]


# --8<-- [start:report]
def table(norms):
    """One line per layer: name, output-gradient norm, weight-gradient norm (3 significant digits).

    A NaN or inf norm is flagged at the end of its line: backward produced non-finite gradients.
    A layer that the loss does not use shows ``-`` and is flagged too.
    """
    if not isinstance(norms, dict):
        raise TypeError(f"norms must be the dict GradientFlow records (flow.norms), got {type(norms).__name__}")
    if not norms:
        raise ValueError("no norms recorded: run forward and backward inside `with GradientFlow(model)`")
    for name, n in norms.items():
        if not isinstance(n, dict):
            raise TypeError(f"norms[{name!r}] is a {type(n).__name__}, not a dict: pass the dict "
                            "GradientFlow records (flow.norms)")
    if not any(norms.values()):
        raise ValueError("no gradient recorded: run forward and backward inside `with GradientFlow(model)`")
    lines = [f"{'layer':>6}  {'grad out':>9}  {'grad weight':>11}"]
    for name, n in norms.items():
        out, weight = n.get("out", math.nan), n.get("weight", math.nan)
        if "weight" not in n:
            flag = "  <- no gradient: the loss does not use this layer"
        elif "out" not in n:          # the weight's hook fired, the forward's did not
            flag = "  <- no output gradient: run the forward inside `with GradientFlow(model)`, calling the layer"
        else:
            flag = "" if math.isfinite(out) and math.isfinite(weight) else "  <- not finite"
        lines.append(f"{name:>6}  {'-' if 'out' not in n else format(out, '.3g'):>9}  "
                     f"{'-' if 'weight' not in n else format(weight, '.3g'):>11}{flag}")
    return "\n".join(lines)


def xychart(norms, title, key="out"):
    """Mermaid xychart source: log10 of each layer's ``key`` norm (2 decimals), input layer first.

    The y axis runs from the power of ten below the smallest value's (1 to 2 decades below
    it) to the largest (or 0); the
    bars are the site's accent colour on a transparent background, readable on the light and
    the dark theme.

    A zero norm has no logarithm; the chart refuses it (show a dead layer in the table).
    """
    if key not in ("out", "weight"):
        raise ValueError(f"key must be 'out' or 'weight', got {key!r}")
    if not isinstance(norms, dict) or not norms:
        raise ValueError("norms must be the non-empty dict GradientFlow records (flow.norms)")
    if not isinstance(title, str) or not title.strip() or any(c in title for c in '"\n'):
        raise ValueError(f"title must be one line of text without double quotes, got {title!r}")
    values = []
    for name, n in norms.items():
        if key not in n:
            why = ("the loss does not use this layer; table() shows it" if any(key in m for m in norms.values())
                   else "run forward and backward inside `with GradientFlow(model)`")
            raise ValueError(f"layer {name!r} recorded no {key!r} gradient: {why}")
        if not (n[key] > 0 and math.isfinite(n[key])):
            raise ValueError(f"layer {name!r}: norm {n[key]} has no finite log10; use table() for it")
        values.append(round(math.log10(n[key]), 2))
    labels = ", ".join(f'"{name}"' for name in norms)
    # bars grow from the bottom of the axis: start it a whole decade below the smallest value's
    # floor, so the smallest gradient still shows as a bar
    low, high = math.floor(min(values)) - 1, max(0, math.ceil(max(values)))
    return "\n".join([
        "---",
        "config:",
        "  themeVariables:",
        "    xyChart:",
        '      backgroundColor: "transparent"',
        '      plotColorPalette: "#e64a19"',
        # tick labels and axis lines in a grey readable on both themes (the default is black)
        *[f'      {part}: "#808080"' for part in (
            "xAxisLabelColor", "yAxisLabelColor", "xAxisTickColor", "yAxisTickColor",
            "xAxisLineColor", "yAxisLineColor")],
        "---",
        "xychart-beta",
        f"    accTitle: {title}",
        f"    accDescr: log10 of the gradient norm at each layer's {'output' if key == 'out' else 'weight'}, input layer first",
        f'    title "{title}"',
        f"    x-axis \"layer\" [{labels}]",
        f'    y-axis "log10 gradient norm" {low} --> {high}',
        "    bar [" + ", ".join(f"{v:g}" for v in values) + "]",
    ])
# --8<-- [end:report]


# --8<-- [start:models]
def deep_mlp(depth=8, width=32, activation=nn.Sigmoid, init_gain=None, seed=0):
    """``depth`` Linear layers of ``width`` with ``activation`` between them.

    ``init_gain=None`` keeps PyTorch's default initialisation; a number draws each weight from
    N(0, init_gain^2 / width) and zeroes the biases (2 ** 0.5 is He initialisation for ReLU).
    """
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (depth, width)):
        raise ValueError(f"depth and width must be ints >= 1, got {depth!r} and {width!r}")
    if not (isinstance(activation, type) and issubclass(activation, nn.Module)):
        raise TypeError(f"activation must be a module class such as nn.ReLU (not nn.ReLU()), got {activation!r}")
    if init_gain is not None and (isinstance(init_gain, bool) or not (isinstance(init_gain, (int, float)) and 0 < init_gain < math.inf)):
        raise ValueError(f"init_gain must be None or a positive finite number, got {init_gain!r}")
    torch.manual_seed(seed)
    layers = []
    for _ in range(depth):
        linear = nn.Linear(width, width)
        if init_gain is not None:
            nn.init.normal_(linear.weight, std=init_gain / width ** 0.5)
            nn.init.zeros_(linear.bias)
        layers += [linear, activation()]
    return nn.Sequential(*layers[:-1])      # no activation after the last Linear


def inspect(model, x):
    """Run ``model(x).pow(2).mean()`` forward and backward under GradientFlow; return the norms.
    The parameters' ``.grad`` is cleared first; a model in training mode updates its running
    statistics (BatchNorm's), as any forward does."""
    if not isinstance(model, nn.Module) or not isinstance(x, torch.Tensor):
        raise TypeError(f"inspect(model, x) takes an nn.Module and an input tensor (N, width), "
                        f"got {type(model).__name__} and {type(x).__name__}")
    if x.dim() == 0 or x.shape[0] == 0:
        raise ValueError(f"x has shape {tuple(x.shape)}: pass a batch (N, width) with N >= 1; the mean "
                         "loss of an empty batch is NaN and every norm would read 0")
    model.zero_grad(set_to_none=True)
    with GradientFlow(model) as flow:
        model(x).pow(2).mean().backward()
    return flow.norms
# --8<-- [end:models]
