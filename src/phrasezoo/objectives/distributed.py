"""Losses over the global batch when several processes train data-parallel (``accelerate launch``, DDP).

On N processes each one holds B/N examples of a global batch of B. A loss that compares the examples of a batch
with each other (InfoNCE's in-batch negatives, the teacher's similarity matrix) would see only B/N of them and
depart from the papers' batch sizes. So such a loss is computed over the **gathered** global batch:

* :func:`gather_rows` concatenates a tensor's rows from every process, in rank order (rank r's rows are the
  global batch's r-th slice, see ``phrasezoo.training.loop``). The process's own rows are the local tensor itself,
  so its gradient flows; the other processes' rows are detached copies. This is the "all_gather, then put the local
  slice back" trick of SimCSE and open_clip (``gather_with_grad=False``): no communication in the backward pass,
  and it works on gloo (CPU), where a differentiable all-gather would need a reduce-scatter gloo lacks. The rows
  may differ in number between processes (PEARL's hard negatives): sizes are exchanged first and rows padded.
* Every process then computes the **same** global loss ``L`` (its value is the one-process loss with batch B), but
  differentiates it only through its own rows, so its parameter gradient is its examples' share of ``dL/dθ``; the
  shares sum to ``dL/dθ``. DDP *averages* the gradients over the N processes, which would give ``dL/dθ / N``, so
  the local rows' gradient is multiplied by N on its way back through the gather (forward: identity). The averaged
  gradient is then exactly one process's with batch B. Terms that are means over local rows (triplet, MLM, a
  lexicon batch each process draws for itself) do not go through the gather and are not scaled: DDP's average of
  equal-sized local means is already the global mean.

With one process (no process group) :func:`gather_rows` returns its input itself, so a single-process run is bit
for bit the run without it.

Tasks also reach into submodules (``model.backbone``) for extra terms; under DDP the loop passes the wrapped model,
which has no such attribute: :func:`unwrap_parallel` strips the wrappers (forward hooks are not needed there: the
gradients of the submodule's parameters are still averaged by DDP's hooks in the backward pass).
"""

from __future__ import annotations

import torch
import torch.distributed as dist


def world_size() -> int:
    """Number of processes in the default process group (1 without one)."""
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def gather_rows(tensor: torch.Tensor) -> torch.Tensor:
    """The rows of ``tensor`` from every process, concatenated in rank order; this process's rows keep their
    gradient, the others' are detached. The first dimension may differ between processes. One process: ``tensor``
    itself."""
    size = world_size()
    if size == 1:
        return tensor
    rank = dist.get_rank()
    count = torch.tensor([tensor.shape[0]], dtype=torch.long, device=tensor.device)
    counts = [torch.zeros_like(count) for _ in range(size)]
    dist.all_gather(counts, count)
    rows = [int(c) for c in counts]
    wire = tensor.detach()
    if wire.dtype == torch.bool:  # gloo gathers no bools
        wire = wire.to(torch.uint8)
    elif wire.dtype in (torch.bfloat16, torch.float16) and dist.get_backend() == "gloo":
        wire = wire.float()  # exact round trip
    if wire.shape[0] < max(rows):
        padding = wire.new_zeros((max(rows) - wire.shape[0], *wire.shape[1:]))
        wire = torch.cat([wire, padding])
    gathered = [torch.empty_like(wire) for _ in range(size)]
    dist.all_gather(gathered, wire.contiguous())
    parts = [part[:n].to(tensor.dtype) for part, n in zip(gathered, rows)]
    parts[rank] = _ScaleGradient.apply(tensor, float(size)) if tensor.requires_grad else tensor
    return torch.cat(parts)


class _ScaleGradient(torch.autograd.Function):
    """Identity forward; the gradient times ``factor`` backward (undoes DDP's average for a global loss)."""

    @staticmethod
    def forward(ctx, tensor: torch.Tensor, factor: float) -> torch.Tensor:
        ctx.factor = factor
        return tensor.view_as(tensor)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return grad * ctx.factor, None


def unwrap_parallel(model):
    """``model`` without its DDP / DataParallel (``.module``) and ``torch.compile`` (``._orig_mod``) wrappers, as
    ``accelerator.unwrap_model`` does; LoRA's ``PeftModel`` is kept (it forwards attribute access itself)."""
    while True:
        if isinstance(model, (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)):
            model = model.module
        elif hasattr(model, "_orig_mod"):
            model = model._orig_mod
        else:
            return model
