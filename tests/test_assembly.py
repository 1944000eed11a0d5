"""The training-task assembler (:mod:`phrasezoo.zoo.assembly`): one build path, parts in stage order, merged facts.

``FrequencyFilter`` is the example of CONTRIBUTING.md ("Adding a shared training part"), read from the page and built
here through the assembler for two toy methods with different data (words, and word pairs), as the page walks through.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from phrasezoo.core.recipes import recipe_from_dict
from phrasezoo.zoo import assembly, registry
from phrasezoo.zoo.assembly import Assembly, BenchmarkFilter, LexiconTerm, Stage, TeacherDistillation
from phrasezoo.zoo.registry import Arg, Method, benchmark_filter_arg, lexicon_args

REPO_ROOT = Path(__file__).resolve().parents[1]


def contributing_example() -> type:
    """CONTRIBUTING.md's example part, run from the page itself ("Adding a shared training part"): the walkthrough's
    code is the code tested here, so the page cannot drift from the assembler's interface."""
    section = (REPO_ROOT / "CONTRIBUTING.md").read_text().split("## Adding a shared training part", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {"dataclass": dataclass, "Callable": Callable, "Any": Any, "Counter": Counter, "Stage": Stage}
    exec(compile(code, "CONTRIBUTING.md (Adding a shared training part)", "exec"), namespace)
    return namespace["FrequencyFilter"]


FrequencyFilter = contributing_example()


def frequency_filter() -> FrequencyFilter:
    """The part as a method whose data is a list of words declares it."""
    return FrequencyFilter(Counter, lambda words, kept: [w for w in words if w in kept])


@dataclass
class ToyTask:
    words: list[str]
    scale: float
    terms: Any
    facts: dict[str, Any]


@pytest.fixture
def toy(monkeypatch):
    """A registered toy method whose data is a list of words, and the calls its builder got."""
    method = Method(
        name="toy",
        config_class=object,
        model_class=object,
        model_files=(),
        build_task=lambda recipe, model, accelerator: None,
        sample_inputs=[],
        from_config=lambda recipe, accelerator: None,
        args={
            "data": {"words": Arg([]), "min_count": Arg(None), "benchmark_filter": benchmark_filter_arg("words")},
            "task": {
                "scale": Arg(1.0),
                "distill_weight": Arg(0.0),
                "teacher": Arg("t"),
                "teacher_guard": Arg(False),
                **lexicon_args(),
            },
        },
    )
    monkeypatch.setattr(registry, "_discover", lambda: None)
    monkeypatch.setitem(registry._REGISTRY, "toy", method)
    calls: list[dict] = []

    def build(progress: bool = True, **data):
        calls.append({**data, "progress": progress})
        return list(data["words"])

    return build, calls


def recipe(data: dict, method_args: dict | None = None):
    return recipe_from_dict(
        {"name": "toy", "method": "toy", "repo_id": "x/toy", "data": data,
         "training": {"method_args": method_args or {}}}
    )  # fmt: skip


def declare(build, *parts, **extra) -> Assembly:
    return Assembly(
        method="toy",
        dataset=build,
        task=lambda words, context, facts: ToyTask(words, context.args["scale"], context.terms, facts),
        facts=lambda words, context: {"words": len(words)},
        parts=parts,
        **extra,
    )


def test_the_example_part_is_built_through_the_assembler(toy):
    build, calls = toy
    words = ["a", "b", "a", "c", "a", "b"]
    task = assembly.assemble(declare(build, frequency_filter()), recipe({"words": words, "min_count": 2}), "model")
    assert task.words == ["a", "b", "a", "a", "b"] and task.scale == 1.0
    assert task.facts == {"words": 5, "phrases seen fewer than 2 times (dropped)": 1}  # data facts first, then parts'
    assert calls == [{"words": words, "progress": True}]  # the part's key never reaches the builder


def test_the_example_part_goes_to_a_second_method_with_its_own_two_functions(toy):
    """The second method of the walkthrough: its data are (phrase, paraphrase) pairs, so it declares the same part
    with its own ``count`` and ``keep``; the part and the assembler do not change."""
    build, calls = toy
    pairs = [("a", "x"), ("b", "y"), ("a", "z"), ("c", "w")]

    def count(rows):
        return Counter(phrase for phrase, _ in rows)

    def keep(rows, kept):
        return [row for row in rows if row[0] in kept]

    def build_pairs(progress: bool = True, **data):
        calls.append({**data, "progress": progress})
        return [tuple(row) for row in data["words"]]

    part = FrequencyFilter(count, keep)
    task = assembly.assemble(declare(build_pairs, part), recipe({"words": pairs, "min_count": 2}), "model")
    assert task.words == [("a", "x"), ("a", "z")]
    assert task.facts == {"words": 2, "phrases seen fewer than 2 times (dropped)": 2}
    off = assembly.assemble(declare(build_pairs, part), recipe({"words": pairs}), "model")
    assert off.words == pairs and "phrases seen fewer than" not in str(off.facts)  # off unless the recipe says


def test_parts_run_in_stage_order_and_the_teacher_reads_the_final_data(toy, monkeypatch):
    build, _ = toy
    seen = []

    @dataclass(frozen=True)
    class AddWord:
        stage: Stage = Stage.EXTEND
        data_keys: tuple[str, ...] = ()

        def apply(self, dataset, recipe, context):
            seen.append("extend")
            return [*dataset, "added"], {"added": 1}

    class Teacher:
        teacher = "t"

        def __init__(self, strings):
            self.strings = strings

        def __len__(self):
            return len(self.strings)

    from phrasezoo.objectives import teacher

    monkeypatch.setattr(teacher, "teacher_embeddings", lambda strings, name, progress=True: Teacher(strings))
    parts = (TeacherDistillation(lambda words: words), AddWord(), frequency_filter())  # declared out of order
    task = assembly.assemble(
        declare(build, *parts), recipe({"words": ["b", "a", "b"], "min_count": 2}, {"distill_weight": 2.0}), None
    )
    assert seen == ["extend"] and task.words == ["b", "b", "added"]
    assert task.terms.distill_weight == 2.0 and task.terms.teacher.strings == ["added", "b"]  # sorted, distinct
    assert list(task.facts) == ["words", "phrases seen fewer than 2 times (dropped)", "added", "teacher"]
    assert task.facts["teacher"] == "t (2 phrases)"


def test_shared_parts_are_off_unless_the_recipe_turns_them_on(toy, monkeypatch):
    build, calls = toy
    dropped = []

    def drop(words, blocklist, mode):
        dropped.append((blocklist, mode))
        return [w for w in words if w != blocklist], {f"dropped ({mode})": 1}

    from phrasezoo.data import benchmark_filter

    monkeypatch.setattr(benchmark_filter, "load_blocklist", lambda: "b")
    declared = declare(build, BenchmarkFilter(drop), LexiconTerm())
    off = assembly.assemble(declared, recipe({"words": ["a", "b"]}), None)
    assert off.words == ["a", "b"] and off.terms.lexicon is None and dropped == []
    on = assembly.assemble(declared, recipe({"words": ["a", "b"], "benchmark_filter": "strict"}), None)
    assert on.words == ["a"] and dropped == [("b", "strict")] and on.facts["dropped (strict)"] == 1
    assert all("benchmark_filter" not in call for call in calls)


def test_a_shared_dataset_is_built_once_per_process(toy, monkeypatch):
    build, calls = toy
    monkeypatch.setattr(assembly, "_SHARED", {})
    declared = declare(build, shared=True, data_defaults=lambda context: {"words": ["x"]})
    first = assembly.build_dataset(declared, recipe({}))
    again = assembly.build_dataset(declared, recipe({}))
    assert first is again and first == ["x"] and len(calls) == 1
    assert assembly.build_dataset(declared, recipe({"words": ["y"]})) == ["y"]  # the recipe's value wins


def test_teacher_terms_refuse_a_weight_without_their_object():
    from phrasezoo.objectives.terms import TeacherTerms

    with pytest.raises(ValueError, match="teacher"):
        TeacherTerms(distill_weight=1.0)
    with pytest.raises(ValueError, match="lexicon"):
        TeacherTerms(lexicon_weight=1.0)
    assert TeacherTerms(lexicon=object()).lexicon is None  # a zero weight turns the term off


def test_the_teacher_guard_reaches_the_terms_and_needs_the_teacher_term(toy, monkeypatch):
    build, _ = toy
    from phrasezoo.objectives import teacher

    class Teacher:
        teacher = "t"

        def __len__(self):
            return 1

    monkeypatch.setattr(teacher, "teacher_embeddings", lambda strings, name, progress=True: Teacher())
    declared = declare(build, TeacherDistillation(lambda words: words))
    task = assembly.assemble(declared, recipe({"words": ["a"]}, {"distill_weight": 1.0, "teacher_guard": True}), None)
    assert task.terms.guard and "teacher guard" in task.facts
    plain = assembly.assemble(declared, recipe({"words": ["a"]}, {"distill_weight": 1.0}), None)
    assert not plain.terms.guard and "teacher guard" not in plain.facts
    with pytest.raises(ValueError, match="distill_weight > 0"):
        assembly.assemble(declared, recipe({"words": ["a"]}, {"teacher_guard": True}), None)
