"""Non-negative sparse coding (NNSC) of target word vectors by a text's codebook (Chang et al., AAAI 2021, eq. 1-2).

For one text with facets ``F`` (K x d) and unit-norm target word vectors ``W`` (N x d), the E-step solves

    M* = argmin_{0 <= M <= 1}  0.5 * ||M F - W||^2 + (lam / 2) * sum(M)          (M is N x K)

which is eq. 1 with lam = 0.4 written the way the official code does (half squared error plus 0.2 * L1; on the box
``M >= 0`` the L1 norm is the plain sum). The problem is convex and separates into one K-dimensional box-constrained
quadratic programme per target word, so a whole batch is solved at once:

* :func:`solve_pgd` (default): accelerated projected gradient (FISTA with adaptive restart), step ``1 / L`` with
  ``L`` the largest eigenvalue of ``F F^T``, zero start, run until the projected-gradient norm is below ``tol`` for
  every problem of the batch or ``max_iter`` is reached. Deterministic.
* :func:`solve_rmsprop`: the official loop, kept as the reference: ``M ~ N(0, 1)``, ``torch.optim.RMSprop`` (lr
  0.05, alpha 0.99, eps 1e-8) on the autograd objective, clamp to [0, 1] after each step, 60 steps in training and
  1,000 at test.

:func:`nnsc_loss` is the training objective (eq. 2) built on them. Padding: ``target_mask`` marks real targets; padded
slots get coefficient 0 and add nothing to any objective, error or gradient.

Self-contained (torch only) so that it is copied with the model code by ``save_pretrained``.
"""

from __future__ import annotations

import torch

#: lam of eq. 1 (0.4) = 2 x the official code's L1 weight 0.2 on half the squared error
DEFAULT_LAMBDA = 0.4


def _check(facets: torch.Tensor, targets: torch.Tensor, target_mask: torch.Tensor | None) -> torch.Tensor:
    if facets.dim() != 3 or targets.dim() != 3:
        raise ValueError(
            f"NNSC expects facets (B, K, d) and targets (B, N, d); got {tuple(facets.shape)} and {tuple(targets.shape)}."
        )
    if facets.shape[0] != targets.shape[0] or facets.shape[2] != targets.shape[2]:
        raise ValueError(
            f"NNSC batch or dimension mismatch: facets {tuple(facets.shape)} vs targets {tuple(targets.shape)}."
        )
    if target_mask is None:
        return torch.ones(targets.shape[:2], dtype=facets.dtype, device=facets.device)
    if target_mask.shape != targets.shape[:2]:
        raise ValueError(f"target_mask must be (B, N) = {tuple(targets.shape[:2])}, got {tuple(target_mask.shape)}.")
    return target_mask.to(device=facets.device, dtype=facets.dtype)


def nnsc_objective(
    facets: torch.Tensor,
    targets: torch.Tensor,
    coefficients: torch.Tensor,
    target_mask: torch.Tensor | None = None,
    lam: float = DEFAULT_LAMBDA,
) -> torch.Tensor:
    """``0.5 * ||M F - W||^2 + (lam / 2) * sum|M|`` per text over its real targets, shape ``(B,)``."""
    mask = _check(facets, targets, target_mask)
    residual = torch.bmm(coefficients, facets) - targets
    squared = (residual.pow(2).sum(-1) * mask).sum(-1)
    l1 = (coefficients.abs().sum(-1) * mask).sum(-1)
    return 0.5 * squared + 0.5 * lam * l1


def reconstruction_error(
    facets: torch.Tensor,
    targets: torch.Tensor,
    target_mask: torch.Tensor | None,
    coefficients: torch.Tensor,
    reduction: str = "mean",
) -> torch.Tensor:
    """Er of eq. 1 per text, ``(B,)``: ``||M_j F - w_j||^2`` summed (``reduction="sum"``) or averaged (``"mean"``,
    the default) over the text's real targets. Differentiable in ``facets`` (pass ``coefficients`` detached: the
    M-step treats them as constants). A text without targets gets 0."""
    if reduction not in ("mean", "sum"):
        raise ValueError(f"reduction must be 'mean' or 'sum', got {reduction!r}.")
    mask = _check(facets, targets, target_mask)
    residual = torch.bmm(coefficients, facets) - targets
    per_text = (residual.pow(2).sum(-1) * mask).sum(-1)
    if reduction == "mean":
        per_text = per_text / mask.sum(-1).clamp(min=1.0)
    return per_text


def solve_pgd(
    facets: torch.Tensor,
    targets: torch.Tensor,
    target_mask: torch.Tensor | None = None,
    lam: float = DEFAULT_LAMBDA,
    max_iter: int = 200,
    tol: float = 1e-4,
    check_every: int = 10,
) -> torch.Tensor:
    """Optimal coefficients ``M`` ``(B, N, K)`` of the box-constrained NNSC problems of a batch, by FISTA.

    ``facets`` and ``targets`` are used as constants (no gradient flows into ``M``). Convergence is checked every
    ``check_every`` iterations with the infinity norm of the projected-gradient step ``M - clamp(M - grad / L)``
    scaled by ``L``; the loop stops when every problem is below ``tol``.
    """
    mask = _check(facets, targets, target_mask)
    with torch.no_grad():
        dtype = torch.promote_types(facets.dtype, torch.float32)
        f = facets.detach().to(dtype)
        gram = torch.bmm(f, f.transpose(1, 2))  # (B, K, K)
        linear = torch.bmm(targets.detach().to(dtype), f.transpose(1, 2)) - 0.5 * lam  # (B, N, K): W F^T - lam/2
        linear = linear * mask.unsqueeze(-1).to(dtype)
        lipschitz = torch.linalg.eigvalsh(gram)[:, -1].clamp(min=1e-6).view(-1, 1, 1)
        step = 1.0 / lipschitz
        keep = mask.unsqueeze(-1).to(dtype)
        m = torch.zeros_like(linear)
        y = m
        t = torch.ones(gram.shape[0], 1, 1, dtype=dtype, device=gram.device)
        for it in range(1, max_iter + 1):
            grad = torch.bmm(y, gram) - linear
            m_next = (y - step * grad).clamp_(0.0, 1.0) * keep
            # adaptive restart (O'Donoghue & Candes): drop momentum where it points uphill
            uphill = ((y - m_next) * (m_next - m)).sum(dim=(1, 2), keepdim=True) > 0
            t_next = (1.0 + torch.sqrt(1.0 + 4.0 * t * t)) / 2.0
            t_next = torch.where(uphill, torch.ones_like(t_next), t_next)
            momentum = torch.where(uphill, torch.zeros_like(t), (t - 1.0) / t_next)
            y = m_next + momentum * (m_next - m)
            m, t = m_next, t_next
            if it % check_every == 0 or it == max_iter:
                g = torch.bmm(m, gram) - linear
                projected = (m - (m - g).clamp(0.0, 1.0)) * keep
                if projected.abs().amax() < tol:
                    break
        return m.to(facets.dtype)


def solve_rmsprop(
    facets: torch.Tensor,
    targets: torch.Tensor,
    target_mask: torch.Tensor | None = None,
    lam: float = DEFAULT_LAMBDA,
    steps: int = 60,
    lr: float = 0.05,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The official E-step: RMSprop on the autograd NNSC objective from ``N(0, 1)``, clamped to [0, 1] each step.

    60 steps is the official training setting, 1,000 its test setting. Stochastic through the start; pass a seeded
    ``generator`` for repeatable results.
    """
    mask = _check(facets, targets, target_mask)
    f = facets.detach()
    w = targets.detach()
    shape = (w.shape[0], w.shape[1], f.shape[1])
    start = torch.randn(shape, generator=generator, dtype=f.dtype)  # on the CPU: one stream whatever the device
    m = start.to(f.device).mul_(mask.unsqueeze(-1)).requires_grad_(True)
    optimizer = torch.optim.RMSprop([m], lr=lr, alpha=0.99, eps=1e-8)
    with torch.enable_grad():
        for _ in range(steps):
            optimizer.zero_grad(set_to_none=True)
            nnsc_objective(f, w, m, mask, lam).sum().backward()
            optimizer.step()
            with torch.no_grad():
                m.clamp_(0.0, 1.0).mul_(mask.unsqueeze(-1))
    return m.detach()


def solve(
    facets: torch.Tensor,
    targets: torch.Tensor,
    target_mask: torch.Tensor | None = None,
    lam: float = DEFAULT_LAMBDA,
    solver: str = "pgd",
    **options,
) -> torch.Tensor:
    """Dispatch to :func:`solve_pgd` (``solver="pgd"``) or :func:`solve_rmsprop` (``"rmsprop"``)."""
    if solver == "pgd":
        return solve_pgd(facets, targets, target_mask, lam, **options)
    if solver == "rmsprop":
        return solve_rmsprop(facets, targets, target_mask, lam, **options)
    raise ValueError(f"Unknown NNSC solver {solver!r}; use 'pgd' (default) or 'rmsprop' (the official reference).")


def nnsc_loss(
    facets: torch.Tensor,
    targets: torch.Tensor,
    target_mask: torch.Tensor,
    negative_targets: torch.Tensor | None = None,
    negative_mask: torch.Tensor | None = None,
    lam: float = DEFAULT_LAMBDA,
    solver: str = "pgd",
    shift: int | None = None,
    generator: torch.Generator | None = None,
    guard: bool = True,
    **solver_options,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The training loss of eq. 2 and its two parts: ``(loss, er_pos, er_neg)``, each a scalar.

    ``L_t = Er(F_t, W(N_t)) - Er(F_t, W(N_r))``: the error of reconstructing the text's own co-occurring words minus
    that of a random other text's. Negatives default to the batch's target sets rotated by ``shift`` (a random
    value in 1..B-1 drawn from ``generator`` when not given), as in the official code. Coefficients come from the
    E-step solver with the facets detached; the errors are differentiable in ``facets``.

    Decisions (documented, spec section 6.3): Er is the mean over a text's *real* targets (the official code also
    divides by padded slots); texts without targets are left out of the mean. ``guard=True`` keeps the official
    code's safeguard: where a text's negative error exceeds 1 (the error of M = 0 for unit targets, which an exact
    E-step never exceeds, but the 60-step RMSprop loop can) the term is ``+Er_neg`` instead of ``-Er_neg``, so the
    model is never rewarded for an unsolved E-step. The guard is applied per text.
    """
    batch = facets.shape[0]
    if negative_targets is None:
        if batch < 2:
            raise ValueError("nnsc_loss needs at least 2 texts per batch to draw negatives from the other texts.")
        if shift is None:
            shift = int(torch.randint(1, batch, (1,), generator=generator).item())
        if not 1 <= shift < batch:
            raise ValueError(f"shift must be in 1..{batch - 1}, got {shift}.")
        negative_targets = torch.roll(targets, shifts=shift, dims=0)
        negative_mask = torch.roll(target_mask, shifts=shift, dims=0)
    elif negative_mask is None:
        negative_mask = torch.ones(negative_targets.shape[:2], dtype=torch.bool, device=negative_targets.device)
    pos_m = solve(facets, targets, target_mask, lam, solver, **solver_options)
    neg_m = solve(facets, negative_targets, negative_mask, lam, solver, **solver_options)
    er_pos = reconstruction_error(facets, targets, target_mask, pos_m)
    er_neg = reconstruction_error(facets, negative_targets, negative_mask, neg_m)
    neg_term = torch.where(er_neg > 1.0, er_neg, -er_neg) if guard else -er_neg
    valid = (target_mask.sum(-1) > 0) & (negative_mask.sum(-1) > 0)
    if not bool(valid.any()):
        raise ValueError("nnsc_loss: no text in the batch has both real targets and real negative targets.")
    weight = valid.to(facets.dtype)
    total = weight.sum()
    loss = ((er_pos + neg_term) * weight).sum() / total
    return loss, (er_pos.detach() * weight).sum() / total, (er_neg.detach() * weight).sum() / total
