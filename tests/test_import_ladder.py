"""The package's import ladder (CONTRIBUTING.md): each level imports only from the levels below it.

1 entry (cli, train, pipeline, the GPU job ``gpu_job/``, ``__main__`` modules) > 2 workflows (training, evaluation, hub, applications; no imports
between them; a method's plug-ins into a workflow, ``methods/<name>/tasks`` and ``/report``, stand with it) > 3 the
zoo (methods, each on its own, over ``zoo/``: the registry and the training-task assembler) > 4 shared pieces, in sublevels: objectives > data | encoders >
resources (with its corpora and splits) > the core (``core/``: files, errors, progress, machine, recipes) > 5 models.
Every import counts, function-level ones included; there is no import loop between modules either.

``match`` (beside the ladder, see ``SIDE_ENTRIES``) has a ladder of its own rooms: its front (``__init__``, ``api``,
``commands``, ``__main__``) > ``spark`` > ``engine`` > ``scoring`` > ``model`` > ``features`` | ``io``; a room
imports only the rooms below it (``features`` and ``io`` stand side by side and never import each other).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "src" / "phrasezoo"
WORKFLOWS = ("training", "evaluation", "hub", "applications")
#: the entry points (top-level modules or packages of phrasezoo): the ``phrasezoo`` command, train -> export
#: (``phrasezoo train``, ``train.py``), the main job (``phrasezoo pipeline``) and the GPU job (``phrasezoo device``)
ENTRIES = ("cli", "train", "pipeline", "gpu_job", "__main__")
#: Packages outside the ladder that sit on top of it like an entry point: they may import every level below, and
#: nothing in the ladder imports them. Integrations adapt zoo models and the matcher to other libraries
#: (sentence-transformers, spaCy, splink); ``match`` is an application-like API over any encoder. So integrations may
#: import match (the default matcher's score as a splink comparison), never the other way.
SIDE_ENTRIES = {"integrations": 1, "match": 1.2}
#: the rooms of ``match`` below its front (the public API and the command line), from the top: Spark over the engine
#: (matcher, blocking, result tables, dedupe) over the scorers (hybrid, encoders' cosine, TF-IDF, rapidfuzz, faiss)
#: over the learned model (combinations and their data files) over the pair features; input/output stands beside
#: the features (the engine reads columns through it). Levels between ``match`` (1.2) and the workflows (2).
MATCH_ROOMS = {"spark": 1.21, "engine": 1.22, "scoring": 1.23, "model": 1.24, "features": 1.25, "io": 1.25}
#: the modules of ``match``'s front, at its top (besides its ``__init__``)
MATCH_FRONT = ("api", "commands", "__main__")
#: modules of a method's home that plug into a workflow (``methods/<name>/<part>``, a module or a package): they stand
#: on that workflow's level, in its group, so they may use its pieces (the task base, the results file) and their
#: own method's modules below; the workflow finds them through the registry (``method_parts``), never by name.
PLUGINS = {"tasks": "evaluation", "report": "evaluation"}
#: the shared level's sublevels (top-level module or package of phrasezoo -> (level, group)), from the top:
#: the training objectives (losses, teacher, lexicon term, weight averaging) over the data pieces and the encoders,
#: over the named offline resources with their corpora and stable splits, over the core.
SHARED = {
    "objectives": (4.1, "objectives"),
    "data": (4.2, "data"),
    "encoders": (4.2, "encoders"),
    "resources": (4.3, "resources"),
    "core": (4.4, "core"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def level(module: str) -> tuple[float, str]:
    """(level, group): lower levels may be imported by higher ones; groups on one level may not import each other."""
    parts = module.split(".")[1:]
    head = parts[0] if parts else ""
    if head == "match":
        return match_room(parts)
    if head in SIDE_ENTRIES:
        return SIDE_ENTRIES[head], head
    if not parts or head in ENTRIES or parts[-1] == "__main__":
        return 1, "entry"
    if head in WORKFLOWS:
        return 2, head
    if head == "zoo":
        # methods declare themselves with registry.Method (the registry finds them by scanning) and their training
        # task with assembly.Assembly (the assembler builds it from the shared parts below)
        return 3.5, "registry"
    if head == "methods" and len(parts) > 2 and parts[2] in PLUGINS:
        return 2, PLUGINS[parts[2]]
    if head == "methods":
        return 3, ".".join(parts[:2])  # each method its own group: methods/<a> never imports methods/<b>
    if head == "models":
        return 5, ".".join(parts[:2])
    if head not in SHARED:
        raise KeyError(f"{module} has no place on the ladder: add its sublevel to SHARED (and CONTRIBUTING.md).")
    return SHARED[head]


def match_room(parts: list[str]) -> tuple[float, str]:
    """(level, group) of a module of ``match``: its front, or the room it lives in (see ``MATCH_ROOMS``)."""
    room = parts[1] if len(parts) > 1 else ""
    if not room or room in MATCH_FRONT:
        return SIDE_ENTRIES["match"], "match"
    if room not in MATCH_ROOMS:
        raise KeyError(f"phrasezoo.match.{room} is in no room of match: add it to MATCH_ROOMS (or MATCH_FRONT).")
    return MATCH_ROOMS[room], f"match.{room}"


def imports_of(module: str) -> list[tuple[int, str]]:
    """(line, imported phrasezoo module) for every import in the module, wherever it is (functions included)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from pkg import submodule` imports the submodule
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.append((node.lineno, candidate if candidate in MODULES else target))
    return [(line, name) for line, name in found if name == "phrasezoo" or name.startswith("phrasezoo.")]


def resolve(name: str) -> str:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def method_of(module: str) -> str | None:
    """``uctopic`` for any module under ``phrasezoo.methods.uctopic``."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "methods" else None


def allowed(importer: str, imported: str) -> bool:
    if method_of(importer) and method_of(imported) and method_of(importer) != method_of(imported):
        return False  # one method's home never imports another's
    if imported == importer or importer.startswith(imported + ".") and MODULES[imported].name == "__init__.py":
        return True  # a module and its own package's __init__
    (li, gi), (lj, gj) = level(importer), level(imported)
    if gi == gj:
        return True  # inside one package / group
    return lj > li and not (li == 1 and lj == 1)


def test_no_upward_or_sideways_import():
    bad = []
    for module, path in MODULES.items():
        for line, name in imports_of(module):
            target = resolve(name)
            if target in MODULES and not allowed(module, target):
                bad.append(
                    f"{path.relative_to(PACKAGE_DIR.parent)}:{line}: {module} {level(module)} imports {target} {level(target)}"
                )
    assert not bad, "imports against the ladder:\n" + "\n".join(bad)


def test_no_import_loops():
    graph = {m: {resolve(n) for _, n in imports_of(m)} & set(MODULES) - {m} for m in MODULES}
    # a package's __init__ re-exporting its own modules is not a loop worth failing on
    for m in graph:
        graph[m] = {n for n in graph[m] if not (MODULES[m].name == "__init__.py" and n.startswith(m + "."))}
        graph[m] = {n for n in graph[m] if not (MODULES[n].name == "__init__.py" and m.startswith(n + "."))}
    state: dict[str, int] = {}
    stack: list[str] = []
    loops: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                loops.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not loops, "import loops:\n" + "\n".join(loops)


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("phrasezoo.cli", 1),
        ("phrasezoo.gpu_job.on_device", 1),
        ("phrasezoo.training.one_run", 2),
        ("phrasezoo.methods.some_method.tasks", 2),  # a method's plug-in into the evaluation workflow
        ("phrasezoo.methods.some_method.tasks.part", 2),
        ("phrasezoo.methods.some_method.data", 3),
        ("phrasezoo.zoo.registry", 3.5),
        ("phrasezoo.zoo.assembly", 3.5),
        ("phrasezoo.objectives.losses", 4.1),
        ("phrasezoo.data.cache", 4.2),
        ("phrasezoo.resources.corpora", 4.3),
        ("phrasezoo.core.recipes", 4.4),
        ("phrasezoo.models.some_method.modeling_some_method", 5),
        ("phrasezoo.match", 1.2),
        ("phrasezoo.match.api", 1.2),
        ("phrasezoo.match.__main__", 1.2),
        ("phrasezoo.match.spark.join", 1.21),
        ("phrasezoo.match.engine.matcher", 1.22),
        ("phrasezoo.match.scoring.hybrid", 1.23),
        ("phrasezoo.match.model.learned", 1.24),
        ("phrasezoo.match.features.pairs", 1.25),
        ("phrasezoo.match.io.inputs", 1.25),
    ],
)
def test_levels(module, expected):
    assert level(module)[0] == expected


def test_only_the_cli_imports_the_gpu_job():
    """The GPU job is an entry point of its own (``phrasezoo device``, ``python -m phrasezoo.gpu_job``): the
    ``phrasezoo`` command registers it, and nothing else outside it imports it."""
    importers = {
        module
        for module in MODULES
        if not module.startswith("phrasezoo.gpu_job")
        for _, name in imports_of(module)
        if resolve(name).startswith("phrasezoo.gpu_job")
    }
    assert importers == {"phrasezoo.cli"}, importers


def test_every_module_has_a_place():
    assert all(level(module) for module in MODULES)  # a new shared module needs its sublevel in SHARED


def test_a_match_module_outside_the_rooms_has_no_place():
    with pytest.raises(KeyError, match="MATCH_ROOMS"):
        level("phrasezoo.match.somewhere.new")


@pytest.mark.parametrize(
    ("importer", "imported", "ok"),
    [
        ("phrasezoo.objectives.teacher", "phrasezoo.encoders", True),
        ("phrasezoo.resources.corpora", "phrasezoo.data.cache", False),  # resources stand below data
        ("phrasezoo.data.cache", "phrasezoo.encoders", False),  # data and encoders: one sublevel, no sideways
        (
            "phrasezoo.methods.some_method.task",
            "phrasezoo.methods.other_method.data",
            False,
        ),  # one method never imports another
        ("phrasezoo.methods.some_method.tasks", "phrasezoo.evaluation.tasks.base", True),
        ("phrasezoo.methods.some_method.task", "phrasezoo.evaluation.tasks.base", False),
        # match's rooms: each imports only the rooms below it
        ("phrasezoo.match.api", "phrasezoo.match.engine.matcher", True),
        ("phrasezoo.match.spark.join", "phrasezoo.match.engine.matcher", True),
        ("phrasezoo.match.engine.matcher", "phrasezoo.match.scoring.hybrid", True),
        ("phrasezoo.match.engine.results", "phrasezoo.match.io.inputs", True),
        ("phrasezoo.match.scoring.hybrid", "phrasezoo.match.model.combinations", True),
        ("phrasezoo.match.model.combinations", "phrasezoo.match.features.pairs", True),
        ("phrasezoo.match.engine.matcher", "phrasezoo.match.spark.join", False),
        ("phrasezoo.match.engine.dedupe", "phrasezoo.match.api", False),
        ("phrasezoo.match.model.learned", "phrasezoo.match.scoring.scorers", False),
        ("phrasezoo.match.features.pairs", "phrasezoo.match.model.combinations", False),
        ("phrasezoo.match.features.lexical", "phrasezoo.match.io.inputs", False),  # side by side: no sideways
        ("phrasezoo.match.io.streaming", "phrasezoo.match.features.lexical", False),
        ("phrasezoo.match.model.learned", "phrasezoo.zoo.registry", True),  # match stands over the ladder
        ("phrasezoo.match.features.lexical", "phrasezoo.core.machine", True),
        ("phrasezoo.match.scoring.scorers", "phrasezoo.integrations.splink", False),
        ("phrasezoo.integrations.splink_matcher", "phrasezoo.match.spark.join", True),
    ],
)
def test_rules(importer, imported, ok):
    assert allowed(importer, imported) is ok


#: Modules that may import a module whose name they compute (``importlib.import_module`` / ``__import__`` with a
#: name that is not a constant string), which the ladder cannot see: the registry (a method's modules, through
#: ``Method.load`` and its discovery), ``data/__init__`` (lazy exports of its own modules), ``resources.packages``
#: (``require_module``: optional third-party libraries) and the GPU job's codec (rebuilding a task from its state).
#: Everything else imports by name, or goes through the registry (``get_method(name).load("module")``).
COMPUTED_IMPORTS = (
    "phrasezoo.zoo.registry",
    "phrasezoo.data",
    "phrasezoo.resources.packages",
    "phrasezoo.gpu_job.codec",
)


def computed_imports(module: str) -> list[int]:
    """Lines of ``module`` that import a module by a computed name."""
    lines = []
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("import_module", "__import__") and not isinstance(node.args[0], ast.Constant):
            lines.append(node.lineno)
    return lines


def test_no_computed_imports_outside_the_registry():
    found = [
        f"{MODULES[module].relative_to(PACKAGE_DIR.parent)}:{line}"
        for module in MODULES
        if module not in COMPUTED_IMPORTS
        for line in computed_imports(module)
    ]
    assert not found, (
        "imports of computed module names, which the ladder cannot check (use the registry: "
        f"get_method(name).load('module')): {found}"
    )
