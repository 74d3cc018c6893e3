"""The API index: every public ``torch`` API the book's code calls or reads, the pages that use
it, and where PyTorch's documentation documents it (docs/reference/apis.md, ``<!-- api-index -->``).

    code_units(path)         the code of a page as it runs: its python blocks, ``--8<--`` lines
                             expanded, one unit per ``cont`` chain; a notebook's code cells, one unit
    references_of(unit)      the raw references one unit makes to torch (``ast``; no torch needed)
    resolve(raw)             the public name a raw reference reaches, or None (needs torch)
    entries(pages)           every API with the pages that use it, in nav order, and its link
    api_index(page, pages)   the index as Markdown (written by overrides/hooks.py)

    python -m bookbuild.apis                   write api_names.json (on the pinned torch)
    python -m bookbuild.apis --where API       each statement of the book's code that uses API

How code names an API (``Collector``): through imports and aliases (``import torch.nn.functional
as F``, ``from torch.func import grad``), as an attribute chain from a torch module
(``torch.autograd.forward_ad.make_dual``), as a method or attribute of an instance of a torch class
(``opt = torch.optim.SGD(...)``; ``opt.step()``), of a class the code derives from a torch class
(``Square.apply``, ``self.register_buffer``) or of a ``Function``'s ``ctx``, and as a method or
attribute of a tensor (``RULE``, stated on the page). A raw reference is a string:
``module:attr.chain`` for a torch object (``torch:autograd.grad``, ``torch.func:grad``: the module is
imported, the chain read with ``getattr``, as Python does), ``module:chain().NAME`` for an attribute
of what calling it returns, and ``torch:Tensor.NAME`` for a tensor's.

Resolving a raw reference needs torch, which the site's build does not (``make serve`` runs
without it), so the resolutions are stored in ``api_names.json`` beside this module:
``python -m bookbuild.apis`` writes it on the pinned torch, and a test proves it current (the build
leaves out, and says so, a reference the file does not hold yet). A raw reference resolves to a
public path from ``torch`` (no part starting with ``_``) that reaches the same object: the one
PyTorch documents it by, a row of ``torch_docs.DOCS`` (``torch.autograd.gradcheck.gradcheck`` ->
``torch.autograd.gradcheck``), else the shortest; a class's attribute to the public class nearest
to the one that defines it (``nn.Linear(...).parameters`` -> ``torch.nn.Module.parameters``,
``x.grad`` -> ``torch.Tensor.grad``). It resolves to None when it is not a public torch API: a
module, a private name, an attribute the code set itself (``ctx.scale = k``), a name
``torch.Tensor`` lacks.

Where each API is documented, and how that was checked: bookbuild/torch_docs.py.
"""

from __future__ import annotations

import ast
import html
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from bookcheck import DOCS, ROOT

from bookbuild import torch_docs

NAMES_FILE = Path(__file__).with_name("api_names.json")

RULE = ("`x.NAME` counts as `torch.Tensor.NAME` when `torch.Tensor` has `NAME` and `x` comes from torch: the "
        "result of a `torch` function or of a tensor's method, attribute, arithmetic or indexing, a value a torch "
        "API returns or yields (`model.parameters()`, `torch.autograd.grad(...)[0]`), an argument torch passes "
        "(to a function given to a `torch` API or to the book's checkers, to the `forward` and `backward` of a "
        "`Function` or `Module`), an argument of a function that the same code calls with a tensor or checks "
        "with `isinstance(x, torch.Tensor)`, or a name last assigned one of these in the same block, `cont` "
        "chain or notebook.")

# ---------------------------------------------------------------------------------------------
# Collecting raw references (pure ast; the build runs this without torch)
# ---------------------------------------------------------------------------------------------

NODE = ("torch.autograd.graph", ("Node",))
# In a Function's forward, setup_context and backward, ``ctx`` is the graph node torch makes for
# the call, an instance of this class (its methods come from FunctionCtx, its ``saved_tensors``
# and ``needs_input_grad`` from the C++ node).
CTX = ("torch.autograd.function", ("BackwardCFunction",))
# A tensor attribute whose value is not a tensor (what follows it is not a tensor's attribute).
NOT_TENSOR = {
    "item", "tolist", "numpy", "shape", "size", "dtype", "device", "ndim", "dim", "stride", "data_ptr",
    "storage_offset", "is_leaf", "requires_grad", "element_size", "nelement", "numel", "untyped_storage",
    "is_contiguous", "layout", "names", "register_hook", "register_post_accumulate_grad_hook", "is_floating_point",
    "is_complex", "equal", "get_device", "is_sparse", "is_inference", "is_shared", "is_cuda", "dim_order",
    "nbytes", "itemsize", "is_set_to", "storage", "retains_grad", "is_meta", "output_nr",
}
# A tensor attribute whose value is an instance of a torch class.
TENSOR_ATTR_CLASS = {"grad_fn": NODE}
# Methods of a module (and of a tensor) that return their receiver.
RETURNS_SELF = {"double", "float", "half", "bfloat16", "to", "train", "eval", "requires_grad_", "cpu", "cuda",
                "apply", "share_memory"}
# A torch function whose result is an instance of a torch class (not a tensor).
RETURNS_CLASS = {"torch.autograd.forward_ad:unpack_dual": ("torch.autograd.forward_ad", ("UnpackedDualTensor",))}
# Methods (of a tensor, or functions of torch) that return a named tuple of tensors
# (``values``, ``indices``): always, or when given a dimension.
NAMED_TUPLE = {"sort", "topk", "kthvalue", "mode", "aminmax", "cummax", "cummin", "frexp", "slogdet"}
NAMED_TUPLE_WITH_DIM = {"max", "min", "median", "nanmedian"}
# Names that Python's built-in types have: a value only held or yielded by a torch object (an
# optimizer's ``state``, what ``model.parameters()`` yields) counts as a tensor for other names only.
BUILTIN_NAMES = set().union(*(dir(t) for t in (dict, list, tuple, set, str, bytes, int, float, complex)))
# Builtins that give back what they are given (a tensor, or a container of tensors).
PASS_THROUGH = {"abs", "sum", "max", "min", "sorted", "list", "tuple", "next", "iter", "reversed", "dict",
                "round", "pow", "divmod", "map", "filter", "set", "frozenset"}
# Methods torch calls with tensors, when defined in a class derived from a torch class.
TORCH_CALLED = {"forward", "backward", "setup_context", "jvp", "vjp", "vmap", "__call__"}
CTX_METHODS = {"forward", "backward", "setup_context", "jvp", "vjp", "vmap"}
TENSOR_CLASSES = {"Tensor", "Parameter"}  # isinstance(x, torch.Tensor): x is a tensor
# What a page's code means by these names when it uses them without importing them (a block
# that shows one function of a module whose imports are elsewhere).
CONVENTIONAL = {"torch": ("torch", ()), "nn": ("torch", ("nn",)), "F": ("torch.nn", ("functional",))}


@dataclass(frozen=True)
class Torch:
    """A torch object reached by importing ``module`` and reading ``chain``."""
    module: str
    chain: tuple = ()

    def key(self) -> str:
        return f"{self.module}:{'.'.join(self.chain)}"

    def attr(self, name: str) -> "Torch":
        return Torch(self.module, self.chain + (name,))


@dataclass(frozen=True)
class Result:
    """What calling a torch object returns (an instance, when it is a class)."""
    of: Torch


class TensorValue:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


TENSOR = TensorValue("TENSOR")  # a tensor, by the rule
HELD = TensorValue("HELD")  # what a torch object holds or yields: a tensor, or a dict, a list, a name


@dataclass(frozen=True)
class Union:
    """One of several instances of torch classes (a parameter given a Linear here, a
    Sequential there): an attribute is each class's."""
    of: frozenset


@dataclass(frozen=True)
class ReturnsSelf:
    """A method that returns its receiver (``model.double()``, ``x.float()``)."""
    of: object


@dataclass(frozen=True)
class NamedTuple:
    """What ``x.max(dim=0)``, ``x.sort()`` return: ``values`` and ``indices``, both tensors."""


@dataclass(frozen=True)
class Container:
    """A tuple, list or dict (a literal, a comprehension): what its elements are (and, for a
    tuple or list literal, each element's value, for unpacking)."""
    element: object
    items: tuple | None = None


@dataclass(eq=False)
class UserClass:
    node: ast.ClassDef
    base: object  # the first torch base (a Torch), or None
    members: set


@dataclass(eq=False)
class UserFunction:
    node: ast.AST  # FunctionDef or Lambda
    scope: "Scope"  # where it is defined
    method_of: UserClass | None = None
    foreign: bool = False  # defined in a snippets module: its body is not the page's code
    torch_code: bool = False  # defined in a module that imports torch


def _is_tensor(value) -> bool:
    return value is TENSOR or value is HELD or isinstance(value, (Result, Union, NamedTuple))


def _holds_tensors(value) -> bool:
    return _is_tensor(value) or (isinstance(value, Container) and _holds_tensors(value.element))


def _element(value):
    """What iterating, indexing or unpacking ``value`` gives."""
    if value is HELD or isinstance(value, (Result, Union)):
        return HELD
    if _is_tensor(value):
        return TENSOR
    if isinstance(value, Container):
        return value.element
    return None


def _join(*values):
    """What a name holds when it may hold any of ``values``."""
    known = {v for v in values if v is not None and not isinstance(v, (Container, UserFunction, UserClass))}
    if len(known) == 1:
        return known.pop()  # one kind of value: kept as it is (an instance of a torch class stays one)
    if known and all(isinstance(v, (Result, Union)) for v in known):  # instances of several torch classes
        return Union(frozenset().union(*(v.of if isinstance(v, Union) else {v} for v in known)))
    for v in values:
        if _is_tensor(v):
            return TENSOR
    for v in values:
        if isinstance(v, Container):
            return v
    return None


def _returned(values):
    """What a function returns, from the values of its return statements: a tensor, a container
    holding tensors (each element's value kept when every return has as many), or None."""
    values = [v for v in values if v is not None]
    containers = [v for v in values if isinstance(v, Container)]
    if containers and len(containers) == len(values):
        sizes = {len(c.items) if c.items is not None else -1 for c in containers}
        if len(sizes) == 1 and -1 not in sizes:
            items = tuple(_join(*parts) for parts in zip(*(c.items for c in containers)))
            return Container(_join(*items), items) if any(_holds_tensors(i) for i in items) else None
        found = [c for c in containers if _holds_tensors(c)]
        return found[0] if found else None
    return TENSOR if any(_is_tensor(v) for v in values) else None


def _summary(value):
    """A hashable summary of a value, for the memo of calls into the book's snippets modules."""
    if _is_tensor(value):
        return "tensor"
    if isinstance(value, Container):
        return ("container", _summary(value.element))
    if isinstance(value, (UserFunction, UserClass)):
        return id(value.node)
    return None


class Scope:
    def __init__(self, parent=None):
        self.names: dict = {}
        self.parent = parent

    def get(self, name):
        scope = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None

    def set(self, name, value):
        self.names[name] = value


def new_shared() -> dict:
    """What every unit's analysis shares: the snippets modules read, the calls into them."""
    return {"modules": {}, "memo": {}}


def new_learned() -> dict:
    """What one pass over a unit learns for the next: the values the parameters of the code's
    functions receive ("all": torch calls it with tensors), what each function returns when
    given a tensor, and what it returns when given none."""
    return {"params": {}, "returns": {}, "makes": {}, "checked": set()}


def _param_names(node) -> list[str]:
    args = node.args
    return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]


def _imports_torch(statements) -> bool:
    for node in ast.walk(ast.Module(body=list(statements), type_ignores=[])):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch" and not node.level:
            return True
    return False


class Collector:
    """Walks one unit of code in order, with the values of its names (``RULE``), and records
    the raw references it makes."""

    def __init__(self, learned=None, shared=None, record=True, package=""):
        self.found: set[str] = set()
        self.record_on = record
        self.learned = learned if learned is not None else new_learned()
        self.shared = shared if shared is not None else new_shared()
        self.scope = Scope()
        self.returns: list | None = None  # the values the function being walked returns
        self.narrowed: set = set()  # names checked with isinstance(name, torch.Tensor) here
        self.package = package
        self.torch_code = False
        self.trace: dict | None = None  # key -> the statements that make it (to read the rule at work)
        self.line = ""

    # -- recording
    def record(self, key: str):
        if self.record_on:
            self.found.add(key)
            if self.trace is not None:
                self.trace.setdefault(key, []).append(self.line)

    def use(self, node):
        """Evaluate ``node`` where its value is used (not read further): a torch object is recorded."""
        value = self.eval(node)
        if isinstance(value, Torch) and value.chain:
            self.record(value.key())
        return value

    # -- expressions
    def eval(self, node):  # noqa: C901 - one case per node type
        if node is None:
            return None
        if isinstance(node, ast.Name):
            value = self.scope.get(node.id)
            return TENSOR if value is None and node.id in self.narrowed else value
        if isinstance(node, ast.Attribute):
            return self.attribute(self.eval(node.value), node.attr)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Subscript):
            value = self.use(node.value)
            self.use(node.slice)
            return _element(value)
        if isinstance(node, ast.BinOp):
            return _join(*(v if _is_tensor(v) else None for v in (self.use(node.left), self.use(node.right))))
        if isinstance(node, ast.UnaryOp):
            return TENSOR if _is_tensor(self.use(node.operand)) else None
        if isinstance(node, ast.BoolOp):
            return _join(*[self.use(v) for v in node.values])
        if isinstance(node, ast.Compare):
            values = [self.use(node.left)] + [self.use(c) for c in node.comparators]
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return None
            return TENSOR if any(_is_tensor(v) for v in values) else None
        if isinstance(node, ast.IfExp):
            self.use(node.test)
            return _join(self.use(node.body), self.use(node.orelse))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            values = [self.use(e) for e in node.elts]
            return Container(_join(*values), tuple(values)) if values else None
        if isinstance(node, ast.Dict):
            for k in node.keys:
                self.use(k)
            values = [self.use(v) for v in node.values]
            return Container(_join(*values)) if values else None
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node)
        if isinstance(node, ast.Lambda):
            return self.function(node)
        if isinstance(node, ast.NamedExpr):
            value = self.use(node.value)
            self.bind(node.target, value)
            return value
        if isinstance(node, ast.Starred):
            return self.use(node.value)
        if isinstance(node, ast.JoinedStr):
            for v in node.values:
                self.use(v)
            return None
        if isinstance(node, ast.FormattedValue):
            self.use(node.value)
            self.use(node.format_spec)
            return None
        if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom)):
            return self.use(node.value)
        if isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                self.use(part)
            return None
        return None  # constants

    def attribute(self, value, name: str):
        if name.startswith("__") and name.endswith("__"):
            return None  # Python's own (x.__class__), not an API
        if isinstance(value, Torch):
            return value.attr(name)
        if isinstance(value, Union):
            for one in sorted(value.of, key=lambda r: r.of.key()):
                self.attribute(one, name)
            return ReturnsSelf(value) if name in RETURNS_SELF else self.tensor_attribute(name, HELD)
        if isinstance(value, Result):
            self.record(f"{value.of.key()}().{name}")
            if value.of == Torch(*NODE):
                return Container(Container(Result(Torch(*NODE)))) if name == "next_functions" else None
            if name in RETURNS_SELF:
                return ReturnsSelf(value)
            # what calling a torch function returns is a tensor; what a torch object holds (a
            # parameter, a buffer, a bound method, an optimizer's state) may be something else
            return self.tensor_attribute(name, HELD)
        if isinstance(value, NamedTuple):
            return TENSOR
        if value is TENSOR or (value is HELD and name not in BUILTIN_NAMES):
            self.record(f"torch:Tensor.{name}")
            return self.tensor_attribute(name, TENSOR)
        if isinstance(value, UserClass):
            if name in value.members or value.base is None:
                return None
            return value.base.attr(name)  # Square.apply: torch.autograd.Function's
        if isinstance(value, Container) and name in ("values", "items", "get", "pop", "copy", "setdefault"):
            return value
        return None

    @staticmethod
    def tensor_attribute(name: str, otherwise):
        """The value of a tensor's attribute ``name``."""
        if name in TENSOR_ATTR_CLASS:
            return Result(Torch(*TENSOR_ATTR_CLASS[name]))
        return None if name in NOT_TENSOR else otherwise

    def call(self, node: ast.Call):  # noqa: C901 - one case per kind of callable
        func = self.eval(node.func)
        if isinstance(func, Torch) and func.chain:
            self.record(func.key())
        args = [self.use(a) for a in node.args]
        kwargs = {k.arg: self.use(k.value) for k in node.keywords}
        given = list(args) + list(kwargs.values())
        # torch, and the book's code written on torch, call the functions they are given with tensors
        if _is_tensor(func) or isinstance(func, Torch) or (isinstance(func, UserFunction) and func.torch_code):
            for arg in given:
                if isinstance(arg, UserFunction) and not arg.foreign:
                    self.learned["params"][arg.node] = "all"
        name = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if name in NAMED_TUPLE | NAMED_TUPLE_WITH_DIM and (_is_tensor(func) or isinstance(func, Torch)):
            rest = args[1:] if isinstance(func, Torch) else args  # torch.max(x, 0), x.max(0)
            if name in NAMED_TUPLE or "dim" in kwargs or any(not _is_tensor(a) for a in rest):
                return NamedTuple()
        if isinstance(func, UserFunction):
            return self.call_user(func, args, kwargs)
        if isinstance(func, ReturnsSelf):
            return func.of
        if isinstance(func, Torch):
            if func.key() in RETURNS_CLASS:
                return Result(Torch(*RETURNS_CLASS[func.key()]))
            return Result(func) if func.chain else None
        if func is HELD:
            return HELD  # model.parameters(), opt.state_dict()
        if _is_tensor(func):
            return TENSOR
        if isinstance(func, UserClass):
            return Result(func.base) if func.base is not None else None
        if isinstance(node.func, ast.Name) and func is None:
            if node.func.id in ("zip", "enumerate"):
                parts = [None, _element(args[0]) if args else None] if node.func.id == "enumerate" else [
                    _element(a) for a in args]
                return Container(Container(_join(*parts), tuple(parts)))
            if node.func.id in PASS_THROUGH and args:
                return _join(*args)
        return None

    def call_user(self, func: UserFunction, args, kwargs):
        """What calling one of the code's functions returns; what its parameters receive."""
        if func.foreign:
            return self.evaluate(func, args, kwargs)
        params = self.learned["params"].setdefault(func.node, {})
        if params != "all":
            names = _param_names(func.node)
            for name, value in list(zip(names, args)) + [(k, v) for k, v in kwargs.items() if k]:
                params[name] = _join(params.get(name), value)
        if func.node in self.learned["makes"]:
            return self.learned["makes"][func.node]  # it makes a tensor itself
        if any(_holds_tensors(v) for v in list(args) + list(kwargs.values())):
            return self.learned["returns"].get(func.node)  # it returns one when given one
        return None

    def evaluate(self, func: UserFunction, args, kwargs):
        """What a function of the book's snippets modules returns for these arguments: its body
        walked with them (not recorded: it is not the page's code)."""
        memo = self.shared["memo"]
        key = (id(func.node), tuple(_summary(a) for a in args),
               tuple(sorted((k, _summary(v)) for k, v in kwargs.items() if k)))
        if key in memo:
            return memo[key]
        memo[key] = None  # a recursive call reads as unknown
        values = dict(zip(_param_names(func.node), args))
        values.update((k, v) for k, v in kwargs.items() if k)
        reader = Collector(learned=new_learned(), shared=self.shared, record=False)
        reader.scope = Scope(func.scope)
        memo[key] = reader.walk_body(func, values)
        return memo[key]

    def comprehension(self, node):
        outer = self.scope
        self.scope = Scope(outer)
        try:
            for gen in node.generators:
                self.bind(gen.target, _element(self.use(gen.iter)))
                for cond in gen.ifs:
                    self.use(cond)
            if isinstance(node, ast.DictComp):
                self.use(node.key)
                return Container(self.use(node.value))
            return Container(self.use(node.elt))
        finally:
            self.scope = outer

    # -- binding names
    def bind(self, target, value):
        if isinstance(target, ast.Name):
            self.scope.set(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if (isinstance(value, Container) and value.items is not None and len(value.items) == len(target.elts)
                    and not any(isinstance(t, ast.Starred) for t in target.elts)):
                for t, v in zip(target.elts, value.items):  # a, b = x, y
                    self.bind(t, v)
                return
            element = _element(value)
            for t in target.elts:
                self.bind(t.value if isinstance(t, ast.Starred) else t, element)
        elif isinstance(target, ast.Attribute):
            base = self.eval(target.value)
            if isinstance(base, Torch):
                if not (target.attr.startswith("__") and target.attr.endswith("__")):
                    self.record(base.attr(target.attr).key())  # torch.backends.cudnn.deterministic = True
            else:
                self.attribute(base, target.attr)  # x.requires_grad = True, w.grad = None
        elif isinstance(target, ast.Subscript):
            self.use(target.value)
            self.use(target.slice)

    # -- functions and classes
    def tensor_checks(self, statements) -> set:
        """The names that ``statements`` check with ``isinstance(name, torch.Tensor)``."""
        found = set()
        for node in ast.walk(ast.Module(body=list(statements), type_ignores=[])):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
                    and len(node.args) == 2 and isinstance(node.args[0], ast.Name)):
                kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
                was = self.record_on
                self.record_on = False
                try:
                    if any(isinstance(v, Torch) and v.chain and v.chain[-1] in TENSOR_CLASSES
                           for v in map(self.eval, kinds)):
                        found.add(node.args[0].id)
                finally:
                    self.record_on = was
        return found

    def parameter_values(self, func: UserFunction, given: dict | None = None) -> dict:
        """The value of each parameter of ``func`` when its body is walked: from ``given`` (a
        call's arguments) or what the calls of the previous pass gave it, else by the rule."""
        node, cls = func.node, func.method_of
        args = node.args
        names = _param_names(node) + [a.arg for a in (args.vararg, args.kwarg) if a]
        learned = self.learned["params"].get(node, {}) if given is None else given
        static = isinstance(node, ast.FunctionDef) and any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
        annotations = {a.arg: a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs if a.annotation}
        values = {}
        for i, name in enumerate(names):
            v = TENSOR if learned == "all" else learned.get(name)
            ann = annotations.get(name)
            if v is None and ann is not None and not isinstance(ann, ast.Constant):
                t = self.eval(ann)
                v = TENSOR if isinstance(t, Torch) and t.chain and t.chain[-1] in TENSOR_CLASSES else None
            if cls is not None:
                torch_base = cls.base
                method = node.name
                if i == 0 and not static and method != "__new__":
                    v = Result(torch_base) if torch_base is not None else None  # self
                elif i == 0 and torch_base is not None and method in CTX_METHODS:
                    v = Result(Torch(*CTX))  # a Function's ctx
                elif torch_base is not None and method in TORCH_CALLED:
                    v = TENSOR
            values[name] = v
        return values

    def walk_body(self, func: UserFunction, given: dict | None = None):
        """Walk a function's body in a scope of its own; what it returns (``_returned``)."""
        node = func.node
        outer = self.scope, self.returns, self.narrowed
        body = node.body if isinstance(node.body, list) else [ast.Return(node.body)]
        self.scope, self.returns = Scope(func.scope), []
        try:
            self.narrowed = self.tensor_checks(body)
            for name, value in self.parameter_values(func, given).items():
                self.scope.set(name, value)
            for stmt in body:
                self.stmt(stmt)
            return _returned(self.returns)
        finally:
            self.scope, self.returns, self.narrowed = outer

    def function(self, node, method_of=None):
        """Define a function: walk its body now, its parameters valued by the rule."""
        args = node.args
        for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.use(d)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                self.use(d)
        func = UserFunction(node, self.scope, method_of, foreign=not self.record_on and self.package != "",
                            torch_code=self.torch_code)
        returned = self.walk_body(func)
        if returned is not None:
            self.learned["returns"][node] = returned
            if node not in self.learned["checked"]:  # what does it return when given no tensor?
                self.learned["checked"].add(node)
                was = self.record_on
                self.record_on = False
                try:
                    made = self.walk_body(func, given={})
                finally:
                    self.record_on = was
                if made is not None:
                    self.learned["makes"][node] = made
        return func

    def classdef(self, node: ast.ClassDef):
        for d in node.decorator_list:
            self.use(d)
        base = None
        for b in node.bases:
            v = self.use(b)
            if base is None and isinstance(v, Torch) and v.chain:
                base = v
            elif base is None and isinstance(v, UserClass) and v.base is not None:
                base = v.base
        for k in node.keywords:
            self.use(k.value)
        members = set()
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                members.add(stmt.name)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                    if isinstance(t, ast.Name):
                        members.add(t.id)
        cls = UserClass(node, base, members)
        outer = self.scope
        self.scope = Scope(outer)
        try:
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.scope.set(stmt.name, self.function(stmt, method_of=cls))
                else:
                    self.stmt(stmt)
        finally:
            self.scope = outer
        self.scope.set(node.name, cls)

    # -- imports
    def imported(self, module: str, name: str | None):
        """The value of ``from module import name`` (or of ``import module`` when name is None)."""
        if module == "torch" or module.startswith("torch."):
            return Torch(module, (name,) if name else ())
        if name and (module == "snippets" or module.startswith("snippets.")):
            return self.snippet_binding(module, name)
        return None

    def snippet_binding(self, module: str, name: str):
        """What ``from snippets.x import name`` binds, read from the module's source."""
        modules = self.shared["modules"]
        if module not in modules:
            path = ROOT / (module.replace(".", "/") + ".py")
            if not path.is_file():
                path = ROOT / module.replace(".", "/") / "__init__.py"
            modules[module] = None  # a cycle reads as unknown
            if path.is_file():
                reader = Collector(shared=self.shared, record=False, package=module)
                reader.run(path.read_text(encoding="utf-8"))
                modules[module] = reader.scope.names
        return (modules[module] or {}).get(name)

    # -- statements
    def stmt(self, node):  # noqa: C901 - one case per statement type
        if self.trace is not None:  # the statement (a compound one: its first line)
            self.line = ast.unparse(node).splitlines()[0][:120]
        if isinstance(node, ast.Expr):
            self.use(node.value)
        elif isinstance(node, ast.Assign):
            value = self.use(node.value)
            for t in node.targets:
                self.bind(t, value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.bind(node.target, self.use(node.value))
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                before = self.eval(node.target)
                value = self.use(node.value)
                self.scope.set(node.target.id, TENSOR if _is_tensor(before) or _is_tensor(value) else before)
            else:
                self.use(node.target)  # w.grad += g reads and writes w.grad
                self.use(node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.bind(node.target, _element(self.use(node.iter)))
            for s in node.body + node.orelse:
                self.stmt(s)
        elif isinstance(node, (ast.While, ast.If)):
            self.use(node.test)
            for s in node.body + node.orelse:
                self.stmt(s)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                value = self.use(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, value if isinstance(value, Result) else None)
            for s in node.body:
                self.stmt(s)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            for s in node.body:
                self.stmt(s)
            for h in node.handlers:
                self.use(h.type)
                if h.name:
                    self.scope.set(h.name, None)
                for s in h.body:
                    self.stmt(s)
            for s in node.orelse + node.finalbody:
                self.stmt(s)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.scope.set(node.name, self.function(node))
        elif isinstance(node, ast.ClassDef):
            self.classdef(node)
        elif isinstance(node, ast.Return):
            value = self.use(node.value)
            if self.returns is not None:
                self.returns.append(value)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.scope.set(a.asname, self.imported(a.name, None))
                else:
                    top = a.name.split(".")[0]
                    self.scope.set(top, self.imported(top, None))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative, inside a snippets package
                parts = self.package.split(".")[: -node.level] if self.package else []
                module = ".".join(parts + ([module] if module else []))
            for a in node.names:
                if a.name != "*":
                    self.scope.set(a.asname or a.name, self.imported(module, a.name))
        elif isinstance(node, ast.Assert):
            self.use(node.test)
            self.use(node.msg)
        elif isinstance(node, ast.Raise):
            self.use(node.exc)
            self.use(node.cause)
        elif isinstance(node, ast.Delete):
            for t in node.targets:
                if isinstance(t, ast.Attribute):
                    self.attribute(self.eval(t.value), t.attr)
        elif isinstance(node, ast.Match):
            self.use(node.subject)
            for case in node.cases:
                for s in case.body:
                    self.stmt(s)

    def run(self, code: str):
        tree = ast.parse(code)
        self.torch_code = _imports_torch(tree.body)
        self.narrowed = self.tensor_checks(tree.body)
        for stmt in tree.body:
            self.stmt(stmt)


def references_of(unit: list[str], shared=None, trace=None) -> set[str]:
    """The raw references of one unit (code strings that share a namespace). Two passes: the
    first learns what the code's own functions receive and return."""
    shared = new_shared() if shared is None else shared
    learned = new_learned()
    trees = []
    for code in unit:
        try:
            trees.append(ast.parse(code))
        except SyntaxError:  # a block that shows a syntax error calls nothing
            continue
    statements = [stmt for tree in trees for stmt in tree.body]
    for final in (False, True):
        collector = Collector(learned=learned, shared=shared, record=final)
        collector.scope = Scope(Scope())
        collector.scope.parent.names.update({k: Torch(*v) for k, v in CONVENTIONAL.items()})
        collector.trace = trace if final else None
        collector.torch_code = _imports_torch(statements)
        collector.narrowed = collector.tensor_checks(statements)
        for stmt in statements:
            collector.stmt(stmt)
    return collector.found


# ---------------------------------------------------------------------------------------------
# The book's code, page by page
# ---------------------------------------------------------------------------------------------

MAGIC = re.compile(r"^\s*[%!].*$", re.M)  # IPython magics and shell lines of a notebook cell


def code_units(path: Path) -> list[list[str]]:
    """A page's code as it runs, one list of code strings per namespace: for a Markdown page,
    its python blocks with ``--8<--`` lines expanded, a ``cont`` block joining the chain before
    it; for a notebook, its code cells, one namespace."""
    path = Path(path)
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = [MAGIC.sub("", "".join(c["source"])) for c in cells if c["cell_type"] == "code"]
        return [code] if code else []
    from bookcheck.model import expand_snippets, parse_page

    units: list[list[str]] = []
    for block in parse_page(path):
        if block.kind != "run" or block.syntax != "python":
            continue
        code = expand_snippets(block.code)
        if block.cont and units:
            units[-1].append(code)
        else:
            units.append([code])
    return units


def page_references(path: Path, shared=None) -> set[str]:
    found: set[str] = set()
    for unit in code_units(path):
        found |= references_of(unit, shared)
    return found


def book_pages(docs: Path = DOCS) -> list[Path]:
    """Every page of the book: its Markdown pages and notebooks."""
    return sorted(p for p in list(docs.rglob("*.md")) + list(docs.rglob("*.ipynb"))
                  if "assets" not in p.relative_to(docs).parts)


# ---------------------------------------------------------------------------------------------
# Resolving raw references (needs torch; python -m bookbuild.apis stores the results)
# ---------------------------------------------------------------------------------------------

RAW = re.compile(r"^(?P<module>[\w.]+):(?P<chain>[\w.]*?)(?P<call>\(\))?(?:\.(?P<member>\w+))?$")


def _returns(func):
    """What a torch function returns, as its annotation says: "tensor" (a tensor, a tuple or list
    of them, or no annotation), a torch class, or None (something else: a dict, a function)."""
    import inspect
    import typing

    import torch

    try:
        ann = typing.get_type_hints(func).get("return", inspect.Signature.empty)
    except Exception:  # noqa: BLE001 - a builtin, or an annotation that names what it cannot import
        return "tensor"
    if ann is inspect.Signature.empty or ann is typing.Any:
        return "tensor"

    def parts(t):
        yield t
        for arg in typing.get_args(t):
            yield from parts(arg)

    if any(p is torch.Tensor for p in parts(ann)):
        return "tensor"
    if inspect.isclass(ann) and ann.__module__.split(".")[0] == "torch":
        return ann
    return None


def _public(path: str) -> bool:
    return not any(part.startswith("_") for part in path.split("."))


def _walk(module: str, chain) -> object:
    """``import module`` then ``getattr`` along ``chain`` (a submodule is imported when the
    attribute is missing, as ``from module import name`` does). Raises on a missing name."""
    import importlib

    obj = importlib.import_module(module)
    path = module
    for name in chain:
        path = f"{path}.{name}"
        try:
            obj = getattr(obj, name)
        except AttributeError:
            obj = importlib.import_module(path)
    return obj


def _reach(path: str):
    """The object the dotted ``path`` names when read from ``torch`` with getattr, or a sentinel."""
    parts = path.split(".")
    if parts[0] != "torch":
        return _MISSING
    try:
        obj = _walk("torch", ())
        for name in parts[1:]:
            obj = getattr(obj, name)
        return obj
    except Exception:  # noqa: BLE001 - any failure means: not reachable this way
        return _MISSING


_MISSING = object()


def _canonical(obj, written: str) -> str | None:
    """The public path from torch that reaches ``obj`` (``written`` is one) under which PyTorch
    documents it (a row of ``torch_docs.DOCS``), else the shortest."""
    candidates = [written] if _public(written) else []
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and module.split(".")[0] == "torch":
        parts = module.split(".")
        candidates += [".".join(parts[:i] + [qualname]) for i in range(1, len(parts) + 1)]
    found = [c for c in candidates if _public(c) and _reach(c) is obj]
    if not found and candidates and candidates[0] == written:
        found = [written]  # a value (a dtype, a flag) has no name of its own
    return min(found, key=lambda c: (c not in torch_docs.DOCS, len(c.split(".")), len(c), c)) if found else None


def _class_path(cls) -> str | None:
    return _canonical(cls, f"{cls.__module__}.{cls.__qualname__}")


def _member(cls, name: str, written: str | None = None) -> str | None:
    """``Class.name`` named by the public class nearest to the class that defines ``name``
    (``written``: how the code named ``cls``)."""
    import inspect

    mro = inspect.getmro(cls)
    owner = next((i for i, c in enumerate(mro) if name in vars(c)), None)
    if owner is None:
        return None
    for c in reversed(mro[: owner + 1]):  # from the definer back towards cls
        path = _canonical(c, written) if c is cls and written else _class_path(c)
        if path is not None:
            return f"{path}.{name}"
    return None


def resolve(raw: str) -> str | None:
    """The public name of the torch API ``raw`` reaches, or None (needs torch)."""
    import inspect
    import types

    import torch

    m = RAW.match(raw)
    if not m:
        raise ValueError(f"not a raw reference: {raw!r}; expected 'module:chain', 'module:chain().name'")
    module, chain, call, member = m.group("module"), m.group("chain"), m.group("call"), m.group("member")
    chain = tuple(chain.split(".")) if chain else ()
    if member and not call:
        chain, member = chain + (member,), None
    if any(p.startswith("_") for p in chain + ((member,) if member else ())):
        return None
    try:
        obj = _walk(module, chain)
    except Exception:  # noqa: BLE001 - a name this torch lacks
        return None
    written = ".".join((module,) + chain)
    if call:  # an attribute of what calling obj returns: an instance's, or a tensor's
        if inspect.isclass(obj):
            return _member(obj, member, written)
        returns = _returns(obj)
        if inspect.isclass(returns):  # torch.manual_seed(0) is a torch.Generator
            return _member(returns, member)
        return _member(torch.Tensor, member, "torch.Tensor") if returns == "tensor" else None
    if isinstance(obj, types.ModuleType) or not chain:
        return None
    owner = _walk(module, chain[:-1])
    if inspect.isclass(owner):
        return _member(owner, chain[-1], written.rpartition(".")[0])
    if not isinstance(owner, types.ModuleType) and not callable(owner):  # torch.float32.is_floating_point:
        return _member(type(owner), chain[-1])                           # an instance's, its class's
    return _canonical(obj, written)


# ---------------------------------------------------------------------------------------------
# The stored resolutions, and the index
# ---------------------------------------------------------------------------------------------


def all_references(pages=None) -> dict[Path, set[str]]:
    """Every page's raw references (no torch needed)."""
    shared = new_shared()
    return {Path(p): page_references(p, shared) for p in (pages if pages is not None else book_pages())}


def stored_names(path: Path = NAMES_FILE) -> dict:
    """The resolutions ``python -m bookbuild.apis`` stored: raw reference -> public name or None."""
    return json.loads(path.read_text(encoding="utf-8"))["names"] if path.is_file() else {}


def names_text(refs: dict) -> str:
    """The JSON text of api_names.json for these raw references (needs torch)."""
    import torch

    raw = sorted(set().union(*refs.values()))
    data = {"torch": torch.__version__.split("+")[0], "names": {r: resolve(r) for r in raw}}
    return json.dumps(data, indent=1) + "\n"


NOT_TEACHING = ("paths/", "reference/")  # with the home page: they point to where an API is taught


def nav_pages() -> list[tuple[str, str]]:
    """(title, path under docs/) of every page in mkdocs.yml's nav, in order (bookcheck.model)."""
    from bookcheck.model import nav_pages as pages

    return pages()


def page_title(path: Path, docs: Path = DOCS, nav: dict | None = None) -> str:
    """The page's title in the nav; else its first heading."""
    rel = Path(path).relative_to(docs).as_posix()
    nav = dict((p, t) for t, p in nav_pages()) if nav is None else nav
    if rel in nav:
        return nav[rel]
    if Path(path).suffix == ".ipynb":
        cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
        lines = [line for c in cells if c["cell_type"] == "markdown" for line in "".join(c["source"]).splitlines()]
    else:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    return next((line[2:].strip() for line in lines if line.startswith("# ")), Path(path).stem)


@dataclass
class Entry:
    api: str  # its public name
    form: str  # a key of torch_docs.FORMS
    url: str  # its documentation
    pages: list = field(default_factory=list)  # Paths, the page that teaches it first, then the others in nav order


def entries(pages=None, docs: Path = DOCS, names: dict | None = None) -> tuple[list[Entry], list[tuple[Path, str]]]:
    """Every public torch API the code of ``pages`` (default: every page of the book) calls or
    reads, with its pages; and the (page, raw reference) pairs api_names.json does not know yet."""
    names = stored_names() if names is None else names
    refs = all_references(pages if pages is not None else book_pages(docs))
    nav = [p for _, p in nav_pages()]
    rank = {p: i for i, p in enumerate(nav)}

    def order(path: Path):
        rel = path.relative_to(docs).as_posix()
        return (rank.get(rel, len(rank)), rel)  # pages outside the nav (the workshop's notebooks) last

    used: dict[str, set] = {}
    unknown = []
    for path, raws in refs.items():
        for raw in sorted(raws):
            if raw not in names:
                unknown.append((path, raw))
            elif names[raw]:
                used.setdefault(names[raw], set()).add(path)
    found = []
    for api, where in used.items():
        ordered = sorted(where, key=order)
        teaching = [p for p in ordered
                    if p.relative_to(docs).as_posix() != "index.md"
                    and not p.relative_to(docs).as_posix().startswith(NOT_TEACHING)] or ordered
        form, url = torch_docs.link(api)
        found.append(Entry(api, form, url, teaching[:1] + [p for p in ordered if p != teaching[0]]))
    return sorted(found, key=lambda e: (e.api.lower(), e.api)), unknown


def _page_link(target: Path, here: Path, titles: dict) -> str:
    rel = os.path.relpath(target, Path(here).parent).replace(os.sep, "/")
    return f"[{titles[target]}]({rel})"


MARK = "†"  # after an API with no entry of its own in PyTorch's documentation
FOLD = 3  # an "Also in" list longer than this is folded
WRAP = 24  # a name longer than this may break (before a dot, after an underscore)


def api_index(page_path: Path, pages=None) -> str:
    """The index as Markdown (``<!-- api-index -->``): a count line and the table. ``pages``
    (the Markdown pages the build hook passes) is ignored: the index reads every page and
    notebook of the book."""
    import logging

    found, unknown = entries()
    for path, raw in unknown:  # the index leaves it out; tests/test_api_docs.py fails until it is stored
        logging.getLogger("mkdocs.hooks.book").info(
            "%s: the API index leaves out %r, which bookbuild/api_names.json does not hold yet; "
            "run `python -m bookbuild.apis` (it needs torch)", path.relative_to(DOCS), raw)
    nav = dict((p, t) for t, p in nav_pages())
    titles = {p: page_title(p, nav=nav) for e in found for p in e.pages}
    forms = {form: sum(e.form == form for e in found) for form in torch_docs.FORMS}
    mark = {"owner", "module"}
    out = [f"{len(found)} APIs, from the code of {len({p for e in found for p in e.pages})} pages: "
           f"{forms['page']} with a page of their own in PyTorch's documentation, "
           f"{forms['member']} with an entry on their class's page, {forms['inline']} with an entry on "
           f"their module's page; {forms['owner'] + forms['module']} marked {MARK} have no entry of their own "
           f"and link the entry that documents them ({forms['owner']}: their class, the class of their value or a "
           f"section) or their module's page ({forms['module']}).", "",
           "| API | Taught first in | Also in |", "|---|---|---|"]
    for e in found:
        also = ", ".join(_page_link(p, page_path, titles) for p in e.pages[1:]) or "-"
        if len(e.pages) - 1 > FOLD:  # a long list opens on demand: the table stays readable
            also = f"<details><summary>{len(e.pages) - 1} pages</summary>{also}</details>"
        flag = f" {MARK}" if e.form in mark else ""
        # a long name breaks before a dot or after an underscore, never inside a word
        name = html.escape(e.api)
        if len(e.api) > WRAP:
            name = re.sub(r"(?<=_)(?=[^_])", "<wbr>", name.replace(".", "<wbr>."))
        out.append(f'| <a href="{html.escape(e.url)}"><code>{name}</code></a>{flag} '
                   f"| {_page_link(e.pages[0], page_path, titles)} | {also} |")
    return "\n".join(out[:2] + ['<div class="api-index" markdown>', ""] + out[2:] + ["", "</div>"]) + "\n"


def where(api: str, pages=None) -> list[tuple[Path, str]]:
    """(page, statement) for each statement of the book's code that uses ``api``: the rule at work."""
    names = stored_names()
    shared = new_shared()
    found = []
    for path in pages if pages is not None else book_pages():
        for unit in code_units(path):
            trace: dict = {}
            references_of(unit, shared, trace=trace)
            for raw, lines in trace.items():
                if names.get(raw) == api:
                    found += [(path, line) for line in dict.fromkeys(lines)]
    return found


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m bookbuild.apis",
        description="Write bookbuild/api_names.json: what each torch name the book's code uses resolves to "
                    "on the installed torch (the API index, docs/reference/apis.md, is built from it).")
    parser.add_argument("--where", metavar="API", help="print each statement of the book's code that uses API "
                                                       "(a full name, e.g. torch.Tensor.grad_fn) instead")
    args = parser.parse_args(argv)
    if args.where:
        if not args.where.startswith("torch"):
            parser.error(f"--where takes a full name such as torch.Tensor.grad_fn, not {args.where!r}")
        for path, line in where(args.where):
            print(f"{path.relative_to(ROOT)}: {line}")
        return 0
    NAMES_FILE.write_text(names_text(all_references()), encoding="utf-8")
    print(f"wrote {NAMES_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
