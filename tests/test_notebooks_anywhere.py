"""A notebook downloaded from the book's site runs outside the repository.

End to end, as a reader does it: the site is built with SITE_URL set to the address it is then
served on (127.0.0.1, a free port), so its build puts the `snippets` wheel under downloads/ and
writes the wheel's address into each downloadable notebook. A fresh venv holds only torch, numpy
and what executing a notebook needs (ipykernel, nbclient), at the book's pinned versions. Each
notebook is downloaded over HTTP and executed with nbclient from that venv, in a temporary
folder, with no repository on the path: its set-up cell must install the wheel from the site
and every cell must pass, printing the outputs the page shows (this is these notebooks' only
execution in a run; tests/test_notebook_outputs.py executes the others). With the wheel missing
from the site, the set-up cell must stop with the message that says what to run.

The site built here has the book's mkdocs.yml, hooks and theme, and the generated notebooks as
its only pages (tests/test_site.py builds the whole book; here the reader's copy is what is
tested, and building 60 pages would add minutes). The venv is cached outside the repository,
keyed on the Python version and the pins, and each run works on a hard-linked copy of it, so
the cache is never modified.

All of this is done once, by the module's first test that needs it (the ``early`` fixture), in
the notebooks step (bookcheck.steps), which make runs beside the others.
"""

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import nbformat
import pytest

from bookbuild import notebook_gen as notebooks
from bookcheck import notebooks as stored
from bookcheck import results
from bookbuild import wheel as snippets_wheel
from bookcheck.model import plugin_config

ROOT = notebooks.ROOT
READER_PACKAGES = ["torch", "numpy", "ipykernel", "nbclient"]
WHEEL_GLOB = "autograd_book_snippets-*-py3-none-any.whl"


def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def book_pins():
    """{package: "package==version"} of the book's pinned stack (the `book` extra)."""
    pins = pyproject()["project"]["optional-dependencies"]["book"]
    return {p.split("==")[0].lower(): p for p in pins}


def clean_env(home=None):
    """The environment of a reader's process: no repository on PYTHONPATH, no venv active, and
    with ``home``, Jupyter's and IPython's user folders there (no kernel spec of this machine)."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"} and not k.startswith("JUPYTER")}
    env.update(PYTHONNOUSERSITE="1", PIP_NO_INPUT="1")
    if home is not None:
        env.update(HOME=str(home), JUPYTER_DATA_DIR=str(home / "jupyter"), JUPYTER_CONFIG_DIR=str(home / "jupyter-config"),
                   IPYTHONDIR=str(home / "ipython"))
    return env


# ------------------------------------------------------------------ the reader's venv


def cached_reader_venv():
    """A venv with only READER_PACKAGES at the book's pins, built once per (Python, pins)
    in bookcheck.results.machine_cache() (under CI=true, made in the run)."""
    pins = [book_pins()[name] for name in READER_PACKAGES]
    constraints = (ROOT / "constraints.txt").read_text(encoding="utf-8")  # the pins of their dependencies
    key = hashlib.sha256("\n".join([sys.version, *pins, constraints]).encode()).hexdigest()[:12]
    venv = results.cache_entry(f"reader-venv-{key}")
    cache = venv.parent
    if not (venv / "complete").is_file():
        work = Path(tempfile.mkdtemp(dir=cache, prefix="building-"))
        try:
            subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True, timeout=300)
            subprocess.run([str(work / "venv" / "bin" / "python"), "-m", "pip", "install", "--quiet",
                            "-c", str(ROOT / "constraints.txt"), *pins],
                           check=True, timeout=1200, env=clean_env(), cwd=work)
            (work / "venv" / "complete").write_text("\n".join(pins) + "\n", encoding="utf-8")
            with contextlib.suppress(OSError):  # another run may have finished first
                (work / "venv").rename(venv)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return venv


def reader_copy(work: Path, stack: contextlib.ExitStack) -> tuple[Path, Path]:
    """(python, home): a fresh copy of the cached venv (hard links: a few seconds; made beside
    the cache, on its file system, and removed when ``stack`` closes) and an empty home folder
    under ``work``."""
    template = cached_reader_venv()
    copy = Path(tempfile.mkdtemp(dir=template.parent, prefix="run-"))
    stack.callback(shutil.rmtree, copy, True)
    subprocess.run(["cp", "-al", str(template), str(copy / "venv")], check=True, timeout=300)
    home = work / "reader-home"
    home.mkdir()
    python = copy / "venv" / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import torch, sys; print(torch.__version__, sys.prefix)"],
                           capture_output=True, text=True, env=clean_env(home), cwd=home, timeout=300)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split()[1] == str(copy / "venv")
    return python, home


def installed(python, home):
    """Where the reader's venv imports `snippets` from, or None."""
    out = subprocess.run([str(python), "-c", "import snippets; print(snippets.__file__)"],
                         capture_output=True, text=True, env=clean_env(home), cwd=home, timeout=120)
    return out.stdout.strip() if out.returncode == 0 else None


def uninstall(python, home):
    subprocess.run([str(python), "-m", "pip", "uninstall", "--yes", "--quiet", "autograd-book-snippets"],
                   capture_output=True, env=clean_env(home), cwd=home, timeout=120)
    assert installed(python, home) is None


# ------------------------------------------------------------------ the built and served site


def jupyter_options():
    """The book's mkdocs-jupyter options (notebooks are not executed), without its cache."""
    return plugin_config("mkdocs-jupyter") | {"execute": False, "cache": False}


def built_site(work: Path, stack: contextlib.ExitStack) -> tuple[str, Path]:
    """(base URL, site folder): the notebook site, built for and served on 127.0.0.1:<free port>
    (the book's one loopback server, site_check.serve: it binds its port first, and serves
    the folder the build then fills), served until ``stack`` closes."""
    from bookcheck import site_check

    out = work / "site"
    out.mkdir()
    base = stack.enter_context(site_check.serve(out))
    project = work / "project"
    (project / "docs" / "notebooks").mkdir(parents=True)
    for name in notebooks.BUILDERS:
        shutil.copyfile(notebooks.NOTEBOOKS / f"{name}.ipynb", project / "docs" / "notebooks" / f"{name}.ipynb")
    (project / "docs" / "assets").symlink_to(ROOT / "docs" / "assets")
    (project / "docs" / "downloads").symlink_to(snippets_wheel.ensure().parent)  # as `make build` makes it
    (project / "overrides").symlink_to(ROOT / "overrides")
    config = {"INHERIT": str(ROOT / "mkdocs.yml"), "site_name": "notebooks",
              "nav": [f"notebooks/{name}.ipynb" for name in notebooks.BUILDERS],
              "plugins": [{"mkdocs-jupyter": jupyter_options()}],
              "watch": []}  # the book watches snippets/ when served; this project has none
    (project / "mkdocs.yml").write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML
    proc = subprocess.run([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "-d", str(out)],
                          cwd=project, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, SITE_URL=base, NO_MKDOCS_2_WARNING="1"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return base, out


def wheel_of(site_dir):
    [wheel] = (site_dir / "downloads").glob(WHEEL_GLOB)
    return wheel


DRIVER = '''\
import sys, urllib.request
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from traitlets.config import Config

url, out = sys.argv[1], sys.argv[2]
nb = nbformat.reads(urllib.request.urlopen(url, timeout=60).read().decode("utf-8"), as_version=4)
for cell in nb.cells:  # the stored outputs cleared first, as "Clear all outputs" then "Run all"
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
# The kernel listens on Unix sockets in this run's own folder, not on TCP ports: notebooks run
# side by side here, and a TCP port picked free can be taken by another kernel before its own
# binds it ("Address already in use").
config = Config()
config.KernelManager.transport = "ipc"
try:
    NotebookClient(nb, timeout=600, kernel_name="python3", config=config).execute()
    failed = ""
except CellExecutionError as error:
    failed = str(error)
nbformat.write(nb, out)
print(failed, file=sys.stderr)
sys.exit(1 if failed else 0)
'''


def start_downloaded(name, base, python, home, folder):
    """Start downloading notebook ``name`` from the site and executing it in ``folder`` with the
    reader's venv; finish_downloaded(the returned run) waits for it."""
    folder.mkdir(parents=True)
    (folder / "run_notebook.py").write_text(DRIVER, encoding="utf-8")
    out = folder / f"{name}.executed.ipynb"
    errors = open(folder / "stderr.txt", "w+", encoding="utf-8")  # noqa: SIM115 - closed by finish_downloaded
    proc = subprocess.Popen([str(python), "run_notebook.py", f"{base}notebooks/{name}/{name}.ipynb", str(out)],
                            cwd=folder, stdout=subprocess.DEVNULL, stderr=errors, text=True, env=clean_env(home))
    return proc, errors, out


def finish_downloaded(run):
    """(returncode, the executed notebook, nbclient's error text) of a start_downloaded run."""
    proc, errors, out = run
    try:
        proc.wait(timeout=1800)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    errors.seek(0)
    text = errors.read()
    errors.close()
    assert out.is_file(), text[-3000:]
    return proc.returncode, nbformat.read(out, as_version=4), text


def run_downloaded(name, base, python, home, folder):
    """Download notebook ``name`` from the site and execute it in ``folder`` with the reader's
    venv; (returncode, the executed notebook, nbclient's error text)."""
    return finish_downloaded(start_downloaded(name, base, python, home, folder))


def test_the_folders_are_outside_the_repository(site, reader, tmp_path):
    for path in (site[1], reader[0], reader[1], tmp_path):
        assert ROOT not in Path(path).resolve().parents


# ------------------------------------------------------------------ the wheel


def test_the_site_ships_the_wheel_of_the_snippets_package_and_only_it(site):
    wheel = wheel_of(site[1])
    version = pyproject()["project"]["version"]
    assert wheel.name == f"autograd_book_snippets-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(f"autograd_book_snippets-{version}.dist-info/METADATA").decode("utf-8")
    # every file of the package, its data included (the error index `snippets.explain` reads)
    sources = {str(p.relative_to(ROOT)) for p in snippets_wheel.sources()[1:]}
    assert "snippets/error_index.json" in sources
    assert {n for n in names if not n.startswith("autograd_book_snippets-")} == sources
    requires = [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    # what a reader installs: torch and numpy, any version; the book's stack only with [book]
    assert sorted(r for r in requires if "extra ==" not in r) == ["numpy", "torch"]
    assert all('extra == "book"' in r for r in requires if r.split(";")[0].strip() not in {"numpy", "torch"})


def test_the_run_anywhere_page_names_the_wheel_the_build_makes(site):
    page = (ROOT / "docs" / "notebooks" / "anywhere.md").read_text(encoding="utf-8")
    assert f"downloads/{wheel_of(site[1]).name}" in page


def test_each_downloadable_notebook_is_the_generated_one_with_the_wheels_address(site):
    base, out = site
    address = f"{base}downloads/{wheel_of(out).name}"
    for name in notebooks.BUILDERS:
        served = json.loads(urllib.request.urlopen(f"{base}notebooks/{name}/{name}.ipynb", timeout=60).read())
        committed = json.loads((notebooks.NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))
        setup = "".join(served["cells"][1]["source"])
        assert f'\nWHEEL = "{address}"  # ' in setup, name
        served["cells"][1]["source"] = setup.replace(f'WHEEL = "{address}"', "WHEEL = None")
        committed["cells"][1]["source"] = "".join(committed["cells"][1]["source"])
        assert served == committed, name


# ------------------------------------------------------------------ the notebooks, run as a reader runs them


def run_without_wheel(site, reader, work: Path):
    """The first notebook run with the package not installed and the wheel hidden from the site:
    (returncode, executed notebook, error text, the wheel's name, where `snippets` imports from after)."""
    base, out = site
    python, home = reader
    uninstall(python, home)
    wheel = wheel_of(out)
    hidden = wheel.rename(wheel.with_name(wheel.name + ".hidden"))
    try:
        code, nb, error = run_downloaded("01-hand-trace", base, python, home, work)
    finally:
        hidden.rename(wheel)
    return code, nb, error, wheel.name, installed(python, home)


def run_all(site, reader, work: Path):
    """({name: (returncode, executed notebook, error text)} of every downloaded notebook, where
    the first one's set-up cell installed `snippets`). The first runs with the package not
    installed, so its set-up cell must install the wheel from the site; the others then run two
    at a time. Their set-up cell is the same code (test_every_notebook_has_the_same_setup_cell),
    so one install proves it for all."""
    base, _ = site
    python, home = reader
    uninstall(python, home)
    first, *rest = sorted(notebooks.BUILDERS)
    done = {first: run_downloaded(first, base, python, home, work / first)}
    assert done[first][0] == 0, done[first][2][-3000:]
    where = installed(python, home)
    for i in range(0, len(rest), 2):  # two at a time: two processes, waited for in turn
        started = {name: start_downloaded(name, base, python, home, work / name) for name in rest[i:i + 2]}
        done |= {name: finish_downloaded(run) for name, run in started.items()}
    return done, where


@pytest.fixture(scope="module")
def early():
    """The notebook site built and served, the reader's venv (on a new machine, a minute of
    installing torch) copied, the run without the wheel, then every notebook's run; the site is
    served until the module's tests are done."""
    with contextlib.ExitStack() as stack:
        folder = Path(tempfile.mkdtemp(prefix="notebooks-anywhere-"))
        stack.callback(shutil.rmtree, folder, True)
        found = {"site": built_site(folder, stack)}
        found["reader"] = reader_copy(folder, stack)
        found["without"] = run_without_wheel(found["site"], found["reader"], folder / "without")
        found["runs"] = run_all(found["site"], found["reader"], folder / "runs")
        yield found


@pytest.fixture(scope="module")
def site(early):
    return early["site"]


@pytest.fixture(scope="module")
def reader(early):
    return early["reader"]


@pytest.fixture(scope="module")
def runs(early):
    return early["runs"]


def test_without_the_wheel_on_the_site_the_setup_cell_says_what_to_run(site, reader, early):
    base, _ = site
    python, _ = reader
    code, nb, error, wheel, after = early["without"]
    assert code == 1
    executed = [c for c in nb.cells if c.cell_type == "code" and c.execution_count]
    assert len(executed) == 1, "the set-up cell should have stopped the notebook"
    [error] = [o for o in executed[0].outputs if o["output_type"] == "error"]
    message = f"{error['ename']}: {error['evalue']}"
    print(message)  # what the reader sees (pytest -s shows it)
    start = "ImportError: the book's `snippets` package is not installed and could not be installed ("
    command = f"{python} -m pip install {base}downloads/{wheel}"
    assert message.startswith(start) and message.endswith(f"). Run this, then restart the kernel:\n    {command}")
    assert "404" in message  # pip's own reason: the site answered 404 Not Found
    assert after is None


def test_every_notebook_has_the_same_setup_cell():
    cells = {"".join(nbformat.read(notebooks.NOTEBOOKS / f"{name}.ipynb", as_version=4).cells[1].source)
             for name in notebooks.BUILDERS}
    assert len(cells) == 1 and "WHEEL = None  # " in cells.pop()


def test_the_first_notebook_installs_the_wheel_from_the_site(runs, reader):
    done, where = runs
    python, _ = reader
    _, nb, _ = done[min(done)]
    setup_output = "".join(o.get("text", "") for o in nb.cells[1].outputs)
    assert setup_output.startswith("torch 2.13.0")
    assert where is not None, "the set-up cell did not install the snippets package"
    assert python.parent.parent in Path(where).parents and ROOT not in Path(where).parents


# ------------------------------------------------------------------ the package's commands, from the wheel

# Every `python -m snippets...` command, with arguments that exercise it, the exit status and a
# part of what it must print. A module of the package that runs as a command (an
# `if __name__ == "__main__":` or a __main__.py) and is missing here fails the test below.
COMMANDS = {
    "snippets.explain": [
        (["RuntimeError: Trying to backward through the graph a second time"], 0,
         "shown in The graph"),
        (["ZeroDivisionError: this message is in no page"], 1, "No error of the book's list matches this one"),
    ],
    "snippets.bench_engine": [(["--sizes", "4", "3", "--repeats", "1", "--batch", "2"], 0, "")],
    "snippets.func_transforms": [(["--n", "3"], 0, "")],
    "snippets.exercises.hand_trace": [([], 0, "")],
    "snippets.exercises.gradient_check": [([], 0, "check(solution): PASS")],
    "snippets.exercises.broken_graph": [(["--steps", "3"], 0, "")],
    "snippets.exercises.accumulation": [([], 0, "")],
    "snippets.workshop": [(["list"], 0, "linear"),
                          (["check", "linear"], 0, "all checks passed"),
                          (["check", "linear", "--starter"], 1, "a check failed")],
}


def commands_of_the_package(root: Path) -> set[str]:
    """The modules under ``root`` (a folder holding the package ``snippets``) that run as commands."""
    found = set()
    for path in (root / "snippets").rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__main__":
            found.add(".".join(parts[:-1]))
        elif '__name__ == "__main__"' in path.read_text(encoding="utf-8") and not parts[-1].startswith("_"):
            # a private module (_cli, the workshop's _reader server) is started by a command, not a reader
            found.add(".".join(parts))
    return found


def test_every_command_of_the_package_is_run_from_the_wheel():
    assert commands_of_the_package(ROOT) == set(COMMANDS)


def test_each_command_runs_from_the_installed_wheel_outside_the_repository(runs, reader, tmp_path):
    """After the notebooks' runs, the reader's venv holds the package as the set-up cell installed
    it from the site's wheel; each command runs there, in a folder outside the repository, with no
    repository on the path, and reads only what the wheel installed (its data files included)."""
    python, home = reader
    done, where = runs
    site_packages = Path(where).parent.parent
    assert commands_of_the_package(site_packages) == set(COMMANDS)
    failures = []
    for module, cases in COMMANDS.items():
        for args, status, part in cases:
            proc = subprocess.run([str(python), "-m", module, *args], cwd=tmp_path, capture_output=True,
                                  text=True, timeout=300, env=clean_env(home))
            if proc.returncode != status or part not in proc.stdout:
                failures.append(f"python -m {module} {' '.join(args)}: exit {proc.returncode} (want {status}), "
                                f"want {part!r} in its output:\n{proc.stdout[-1500:]}{proc.stderr[-1500:]}")
    assert failures == [], "\n\n".join(failures)


@pytest.mark.parametrize("name", sorted(notebooks.BUILDERS))
def test_a_downloaded_notebook_runs(runs, name):
    code, nb, error = runs[0][name]
    assert code == 0, error[-3000:]
    cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in cells), "a cell did not run"
    assert not [o for c in cells for o in c.outputs if o["output_type"] == "error"]
    setup_output = "".join(o.get("text", "") for o in cells[0].outputs)
    assert setup_output.startswith("torch 2.13.0")
    assert "verified on torch" not in setup_output  # the venv has the book's torch: no warning


@pytest.mark.parametrize("name", sorted(notebooks.BUILDERS))
def test_a_downloaded_notebook_prints_the_outputs_the_page_shows(runs, name):
    """The one execution per run of a generated notebook is this one: the outputs stored in
    docs/notebooks/ (what the site shows) must be what it printed."""
    _, nb, _ = runs[0][name]
    committed = nbformat.read(notebooks.NOTEBOOKS / f"{name}.ipynb", as_version=4)
    problems = stored.differences(committed, nb)
    assert problems == [], f"{name}.ipynb: stored outputs are not current (run make notebooks):\n" + "\n".join(problems)


def test_a_stored_output_that_differs_from_the_readers_run_is_reported(runs):
    name = min(runs[0])
    _, nb, _ = runs[0][name]
    committed = nbformat.read(notebooks.NOTEBOOKS / f"{name}.ipynb", as_version=4)
    code = [c for c in committed.cells if c.cell_type == "code"]
    code[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="not what it prints\n")]
    [problem] = stored.differences(committed, nb)
    assert problem.startswith(f"code cell {len(code)} (") and "not what it prints" in problem


# ------------------------------------------------------------------ the build hook, on its own


def test_the_hook_writes_the_address_only_when_the_site_has_one(tmp_path):
    import importlib.util

    snippets_wheel.ensure()

    spec = importlib.util.spec_from_file_location("book_hooks", ROOT / "overrides" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    committed = (notebooks.NOTEBOOKS / "01-hand-trace.ipynb").read_text(encoding="utf-8")
    for site_url in ["", "https://example.org/book/"]:
        site = tmp_path / (site_url and "published" or "local")
        (site / "notebooks" / "01-hand-trace").mkdir(parents=True)
        copy = site / "notebooks" / "01-hand-trace" / "01-hand-trace.ipynb"
        copy.write_text(committed, encoding="utf-8")
        hooks.on_post_build({"site_dir": str(site), "site_url": site_url})
        wheel = snippets_wheel.current()
        setup = "".join(json.loads(copy.read_text(encoding="utf-8"))["cells"][1]["source"])
        if site_url:
            assert f'\nWHEEL = "https://example.org/book/downloads/{wheel.name}"  # ' in setup
        else:  # no address to write: the copy is left as committed
            assert copy.read_text(encoding="utf-8") == committed and "\nWHEEL = None  # " in setup


def test_the_hook_warns_when_the_wheel_is_missing(tmp_path, caplog):
    import importlib.util

    spec = importlib.util.spec_from_file_location("book_hooks", ROOT / "overrides" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    docs, site = tmp_path / "docs", tmp_path / "site"
    (docs / "downloads").mkdir(parents=True)
    site.mkdir()
    hooks.on_post_build({"site_dir": str(site), "site_url": "https://example.org/", "docs_dir": str(docs)})
    [warning] = [r for r in caplog.records if r.levelname == "WARNING"]
    assert warning.name.startswith("mkdocs.") and "python -m bookbuild.wheel" in warning.getMessage()


def test_the_build_makes_the_wheel_before_it_collects_the_files(tmp_path, caplog):
    """A plain `mkdocs build --strict` on a fresh clone (no docs/downloads/): the hook that runs
    before the build collects docs/ makes the wheel there, without a warning."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("book_hooks", ROOT / "overrides" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    docs = tmp_path / "docs"
    docs.mkdir()
    hooks.on_pre_build({"docs_dir": str(docs)})
    assert snippets_wheel.current(docs / "downloads") is not None
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_a_wheel_is_current_only_for_the_sources_it_was_made_from(tmp_path):
    root, downloads = tmp_path / "project", tmp_path / "downloads"
    for p in snippets_wheel.sources():
        (root / p.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, root / p.relative_to(ROOT))
    assert snippets_wheel.current(downloads, root) is None  # nothing made yet
    made = snippets_wheel.ensure(downloads, root)
    assert snippets_wheel.current(downloads, root) == made
    with zipfile.ZipFile(made) as z:
        assert z.read("snippets/views.py") == (root / "snippets" / "views.py").read_bytes()
    (root / "snippets" / "views.py").write_text("# changed\n", encoding="utf-8")
    assert snippets_wheel.current(downloads, root) is None  # stale: the hook warns
    remade = snippets_wheel.ensure(downloads, root)
    with zipfile.ZipFile(remade) as z:
        assert z.read("snippets/views.py") == b"# changed\n"
    assert sorted(p.name for p in downloads.iterdir()) == sorted(
        [remade.name, snippets_wheel.KEY_FILE, snippets_wheel.LOCK_FILE])
    # the package's data is a source too: a changed error index makes the wheel stale
    (root / "snippets" / "error_index.json").write_text("[]\n", encoding="utf-8")
    assert snippets_wheel.current(downloads, root) is None
    with zipfile.ZipFile(snippets_wheel.ensure(downloads, root)) as z:
        assert z.read("snippets/error_index.json") == b"[]\n"
