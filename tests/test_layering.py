"""The import graph of the installed package, function-level imports included: layering is one way
(servers ← synth ← harness ← train; inside synth, contract ← generate; the kit under every service) and there is
no circle anywhere. Imports under ``if TYPE_CHECKING:`` are for the type checker: they do not count for layering
or for circles at run time, but the graph with them (:data:`ANNOTATED`) has no circle either."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest

LAYERS = ["servers", "synth", "harness", "train"]


def package_modules() -> dict[str, Path]:
    """Every module of the installed coworkenv packages, by dotted name."""
    out: dict[str, Path] = {}
    for layer in LAYERS:
        root = Path(str(files(f"coworkenv.{layer}")))
        for path in root.rglob("*.py"):
            parts = ["coworkenv", layer, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = package_modules()


def _nodes(node: ast.AST, annotations: bool = False) -> Iterator[ast.AST]:
    """Every node under ``node``; those under ``if TYPE_CHECKING:`` only with ``annotations``."""
    for child in ast.iter_child_nodes(node):
        if not annotations and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            continue
        yield child
        yield from _nodes(child, annotations)


def imports_of(name: str, path: Path, annotations: bool = False) -> set[str]:
    """The coworkenv modules ``name`` imports, wherever in the file the import statement is (with
    ``annotations``, those under ``if TYPE_CHECKING:`` too)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in _nodes(ast.parse(path.read_text(encoding="utf-8"), str(path)), annotations):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in MODULES}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in MODULES:
                    found.add(target)
                elif base in MODULES:
                    found.add(base)
    found.discard(name)
    return found


GRAPH = {name: imports_of(name, path) for name, path in MODULES.items()}
ANNOTATED = {name: imports_of(name, path, annotations=True) for name, path in MODULES.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_covers_every_layer_and_sees_imports_inside_functions() -> None:
    assert {name.split(".")[1] for name in MODULES} == set(LAYERS)
    inside_functions = {
        name
        for name, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for inner in ast.walk(node)
        if isinstance(inner, ast.ImportFrom) and (inner.module or "").startswith("coworkenv.")
    }
    assert inside_functions, "the package has lazy imports: the graph must include them"
    assert all(GRAPH[name] or name.endswith("__init__") for name in inside_functions if name in GRAPH)


def test_no_module_is_part_of_an_import_circle_lazy_imports_included() -> None:
    assert circles(GRAPH) == []


def test_no_module_is_part_of_an_import_circle_annotation_imports_included() -> None:
    assert circles(ANNOTATED) == []


def test_the_graph_with_annotations_sees_the_imports_made_for_the_type_checker_only(tmp_path: Path) -> None:
    module = tmp_path / "context.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "from coworkenv.servers.kit.store import TableStore\n"
        "if TYPE_CHECKING:\n"
        "    from coworkenv.servers.kit.state import ServiceState\n"
    )
    name = "coworkenv.servers.kit.context"
    assert imports_of(name, module) == {"coworkenv.servers.kit.store"}
    assert imports_of(name, module, annotations=True) == {"coworkenv.servers.kit.store", "coworkenv.servers.kit.state"}


def test_the_circle_finder_finds_a_circle_through_a_lazy_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def _offenders(source: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, targets in GRAPH.items():
        if name != source and not name.startswith(source + "."):
            continue
        if name.startswith(allowed):
            continue
        bad = sorted(t for t in targets if t.startswith(forbidden))
        if bad:
            out[name] = bad
    return out


@pytest.mark.parametrize("layer", LAYERS[:-1])
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    above = tuple(f"coworkenv.{upper}" for upper in LAYERS[LAYERS.index(layer) + 1 :])
    assert _offenders(f"coworkenv.{layer}", above) == {}


def test_the_task_contract_imports_no_generator_and_no_command_line() -> None:
    assert _offenders("coworkenv.synth.contract", ("coworkenv.synth.generate", "coworkenv.synth.cli")) == {}


def test_the_harness_and_training_read_the_contract_not_the_generators() -> None:
    generators = ("coworkenv.synth.generate",)
    assert _offenders("coworkenv.harness", generators) == {}
    # the one command line (train/cli.py) assembles every layer's commands, the synthesizer's included
    assert _offenders("coworkenv.train", generators, allowed=("coworkenv.train.cli",)) == {}


def test_the_kit_imports_no_service_and_no_registry() -> None:
    outside = {
        name: sorted(t for t in targets if not t.startswith("coworkenv.servers.kit"))
        for name, targets in GRAPH.items()
        if name.startswith("coworkenv.servers.kit")
    }
    assert {name: bad for name, bad in outside.items() if bad} == {}


def test_the_agents_read_only_the_message_vocabulary_of_the_harness() -> None:
    """Agents sit under the episode: what they raise (``LimitReached`` among it) lives with them, so no agent
    imports the session, the episode, the run or the harness's wings (annotation imports included)."""
    allowed = ("coworkenv.harness.agents", "coworkenv.harness.messages")
    outside = {
        name: sorted(t for t in targets if t.startswith("coworkenv.harness.") and not t.startswith(allowed))
        for name, targets in ANNOTATED.items()
        if name.startswith("coworkenv.harness.agents")
    }
    assert {name: bad for name, bad in outside.items() if bad} == {}


def test_the_harness_wings_import_no_command_line_and_no_run() -> None:
    """``report`` and ``export`` are wings the command line calls, never the other way round."""
    upper = ("coworkenv.harness.cli", "coworkenv.harness.run")
    assert _offenders("coworkenv.harness.report", upper) == {}
    assert _offenders("coworkenv.harness.export", upper) == {}


def test_what_a_model_call_gives_back_is_a_floor_both_wings_import_without_the_provider_plumbing() -> None:
    """``Usage``, ``InfrastructureError`` and ``ProviderConfigError`` live in ``coworkenv.synth.model_io``, which
    imports nothing of ours; the harness's message vocabulary, agent base and tool plumbing take them from there,
    not from ``coworkenv.synth.providers`` (retries, scrubbing, prices)."""
    assert ANNOTATED["coworkenv.synth.model_io"] == set()
    for name in ("coworkenv.harness.messages", "coworkenv.harness.agents.base", "coworkenv.harness.tools"):
        assert "coworkenv.synth.model_io" in GRAPH[name]
        assert "coworkenv.synth.providers" not in ANNOTATED[name], name
    from coworkenv.harness.agents.base import InfrastructureError
    from coworkenv.harness.messages import Usage
    from coworkenv.synth import model_io, providers

    assert InfrastructureError is model_io.InfrastructureError is providers.InfrastructureError
    assert Usage is model_io.Usage is providers.Usage
    assert issubclass(providers.ProviderConfigError, InfrastructureError)
