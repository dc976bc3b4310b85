"""The tail both trainers share (train/fit.py's EAGLE head, train/medusa.py's heads).

A run resumes from its checkpoint (weights, optimiser state and its ``state`` dict: step,
seconds trained, positions seen, log), then takes steps until its step limit, its time
budget, or a file named ``stop`` in the work folder; every step sets the schedule's learning
rate, every fifth prints a line, and a checkpoint is written every ``save_every`` steps and
at the end, so a rerun continues where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import torch

from train import paths

#: One step: (loss, top-1 agreement with the target per depth or head, positions it trained on).
Step = Callable[[int], tuple[torch.Tensor, list[float], int]]


def save(
    path: Path, key: str, model: torch.nn.Module, opt: torch.optim.Optimizer, state: dict, vocab
) -> None:
    """Write the checkpoint: `model`'s weights under `key`, the optimiser, `state` and the vocabulary."""
    paths.ensure(path.parent)
    tmp = path.with_suffix(".tmp")
    torch.save({key: model.state_dict(), "opt": opt.state_dict(), "state": state, "vocab": vocab}, tmp)
    tmp.replace(path)  # a run killed mid-write leaves the previous checkpoint whole


def resume(path: Path, key: str, model: torch.nn.Module, opt: torch.optim.Optimizer) -> dict:
    """Load the checkpoint at `path` into `model` and `opt`; returns its ``state``."""
    saved = torch.load(path, weights_only=False)
    model.load_state_dict(saved[key])
    opt.load_state_dict(saved["opt"])
    state = saved["state"]
    print(f"resuming at step {state['step']} ({state['seconds'] / 60:.1f} min trained)", flush=True)
    return state


def train(
    model: torch.nn.Module,
    opt: torch.optim.Optimizer,
    state: dict,
    checkpoint: tuple[Path, str, object],
    *,
    step: Step,
    rate: Callable[[int], float],
    minutes: float,
    until: int | None,
    save_every: int,
    label: Callable[[int], str] = str,
    per: str = "depth",
    clip: float | None = None,
) -> None:
    """Take steps from ``state["step"]`` until step `until` (None: no limit), `minutes`, or a stop file.

    `checkpoint` is (path, the weights' key, vocabulary); `rate(n)` is step n's learning rate;
    `label(n)` names step n in the progress line, which gives the agreement by `per`; `clip`
    caps the gradient norm when given.
    """
    path, key, vocab = checkpoint
    started = last = time.perf_counter()
    while until is None or state["step"] < until:
        if time.perf_counter() - started > 60 * minutes or (paths.WORK / "stop").exists():
            break
        n = state["step"]
        lr = rate(n)
        for group in opt.param_groups:
            group["lr"] = lr
        loss, agree, positions = step(n)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        now = time.perf_counter()
        state["seconds"] += now - last
        last = now
        state["step"] = n + 1
        state["positions"] += positions
        value = loss.item()  # a plain number: the log and the line need no graph
        state["log"].append((n + 1, round(value, 4), [round(a, 3) for a in agree]))
        if (n + 1) % 5 == 0:
            print(
                f"step {label(n)}: loss {value:.3f}, top-1 agreement by {per} "
                f"{' '.join(f'{a:.2f}' for a in agree)}, lr {lr:.2e}, {state['seconds'] / 60:.1f} min",
                flush=True,
            )
        if (n + 1) % save_every == 0:
            save(path, key, model, opt, state, vocab)
    save(path, key, model, opt, state, vocab)
    print(f"stopped at step {state['step']} after {state['seconds'] / 60:.1f} min of training", flush=True)
