"""Teacher rows that travel with a pack: the machine has no teacher encoder and no network, so a task's lazy teacher
(:class:`phrasezoo.objectives.teacher.TeacherEmbeddings`, rows embedded on demand) is replaced, before the task
state is written, by one that holds the rows the planned run draws as plain tensors (every string stays in its index,
so batches are drawn as before).

Which rows a run draws follows from its schedule: :func:`pack_teacher_rows` replays it with
:func:`phrasezoo.gpu_job.pack.scan_rows` (the real loop's indices, generators and ``prefetch``) while the
teachers note every row asked of them, then embeds those rows (cached by content, as any CPU run embeds them).
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from phrasezoo.objectives.teacher import TeacherEmbeddings

AttrPath = tuple[str, ...]  # attribute names from the task to a teacher


def lazy_teacher_paths(task) -> list[AttrPath]:
    """Attribute paths (``("teacher",)``, ``("term", "teacher")``) of the task's teachers whose rows an encoder
    embeds on demand; found through the attributes of the task and of the phrasezoo objects it holds."""
    found: list[AttrPath] = []
    seen: set[int] = set()

    def walk(obj, path: AttrPath) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        for name, value in vars(obj).items():
            if isinstance(value, TeacherEmbeddings):
                if value.lazy:
                    found.append((*path, name))
            elif (
                hasattr(value, "__dict__")
                and not isinstance(value, (type, torch.nn.Module))
                and type(value).__module__.startswith("phrasezoo.")
            ):
                walk(value, (*path, name))

    walk(task, ())
    return found


def _owner(task, path: AttrPath):
    obj = task
    for name in path[:-1]:
        obj = getattr(obj, name)
    return obj


def pack_teacher_rows(built, scan) -> tuple[set[int] | None, list[dict[str, Any]]]:
    """Replace the lazy teachers of every built task (``[(seed, model, task)]``) by ones holding the rows the
    planned run draws. ``scan(task)`` replays the run's batches over ``task`` and returns the token ids they read.

    Returns ``(token ids of the scan, or None when no teacher needed one, facts per teacher)``.
    """
    task = built[0][2]
    paths = lazy_teacher_paths(task)
    if not paths:
        return None, []
    teachers = [getattr(_owner(task, path), path[-1]) for path in paths]
    with contextlib.ExitStack() as stack:
        drawn = [stack.enter_context(teacher.recording()) for teacher in teachers]
        token_ids = scan(task)
    facts = []
    for path, teacher, ids in zip(paths, teachers, drawn, strict=True):
        packed = teacher.packed(ids)
        for _, _, other in built:
            setattr(_owner(other, path), path[-1], packed)
        facts.append(
            {
                "attribute": ".".join(path),
                "teacher": teacher.teacher,
                "rows": len(ids),
                "of": len(teacher),
                "note": f"{len(ids):,} of {len(teacher):,} teacher rows travel: those the planned run draws",
            }
        )
        print(f">> {facts[-1]['note']} ({'.'.join(path)}, {teacher.teacher})", flush=True)
    return token_ids, facts
