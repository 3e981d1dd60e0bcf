"""trl's GRPOTrainer on our environments, with group reject-and-retry and GiGPO's step-level credit.

Where reject/retry lives: in :meth:`CoworkGRPOTrainer._generate`, right after trl's own generation and tool loop
and before rewards and advantages. Not in a ``rollout_func`` (that would replace trl's multi-turn tool loop, the
part that brings vLLM, its tool-result masks and its truncation rules with it), and not in a pre-pass (the
rollouts happen inside the trainer). A rollout is *incomplete* when its last turn was cut (no end-of-turn token:
``max_completion_length``) or still asked for tools (``max_tool_calling_iterations``), and *infra_error* when a
tool call crashed outside the kit's answers (a dead MCP server). A group holding one is played again, whole,
with fresh environments, up to ``max_group_retries`` times; a group still bad after that is rejected: its
rewards are None, so trl gives it advantage 0 and leaves it out of every baseline. With several processes, every
process regenerates its whole local batch when any process has a bad group (generation involves collective
operations, so all processes must generate the same number of times); only the bad groups' new rollouts are kept.

GiGPO (``algo="gigpo"``) replaces trl's per-sequence advantages by per-token ones of shape (B, T), which trl's
loss accepts: each model turn gets :func:`coworkenv.train.advantages.gigpo_advantages` of its rollout and turn,
where a turn's anchor is the environment's state hash before the turn's first tool call (the final state for a
turn without calls). Groups are taken from each process's local batch, so GiGPO needs whole groups per process.

This subclasses trl's private ``_generate`` and ``_generate_and_score_completions``: trl is pinned (1.16.0) in
the ``train`` extra, and tests run both paths.
"""

from __future__ import annotations

import importlib
import inspect
from collections import Counter
from typing import Any

import torch

from coworkenv.train.advantages import Step, gigpo_advantages
from coworkenv.train.trl_env import INCOMPLETE, INFRA_ERROR, OK, TaskEnvironment

_trl: Any = importlib.import_module("trl")  # the subclass reads trl's private attributes, which trl leaves untyped
_LIST_FIELDS = (
    0,
    1,
    2,
    3,
    4,
    6,
    7,
)  # prompt_ids, completion_ids, tool_mask, completions, logprobs, images, tool_images


class CoworkGRPOTrainer(_trl.GRPOTrainer):
    """GRPOTrainer with group reject/retry for our environments, and GiGPO when ``algo="gigpo"``."""

    def __init__(
        self,
        *args: Any,
        algo: str = "grpo",
        max_group_retries: int = 2,
        gigpo_omega: float = 1.0,
        gigpo_gamma: float = 0.95,
        template: str = "full",
        generation_batch: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.template = template
        self.generation_batch = generation_batch
        self.algo = algo
        self.max_group_retries = max_group_retries
        self.gigpo_omega, self.gigpo_gamma = gigpo_omega, gigpo_gamma
        self.group_stats: Counter[str] = Counter()
        self._rows: list[dict[str, Any]] = []
        self._completions: list[Any] = []
        if algo == "gigpo" and self.accelerator.num_processes > 1:
            raise ValueError("gigpo takes its groups from one process's batch: run it on one process")

    # ------------------------------------------------------------------ the prompt's tool list
    def _tokenize_prompts(self, prompts: list[Any]) -> Any:
        """Under ``template="compact"`` the rows' system message already lists the tools (as the ``hf:`` agent's
        does), so the chat template gets no schemas; the tools themselves stay bound for the tool loop and for
        parsing the model's calls."""
        if self.template != "compact" or self.environment_factories is None:
            return super()._tokenize_prompts(prompts)
        kept: dict[Any, list[Any]] = self.__dict__["_env_tools"]
        self.__dict__["_env_tools"] = {name: [] for name in kept}
        try:
            return super()._tokenize_prompts(prompts)
        finally:
            self.__dict__["_env_tools"] = kept

    # ------------------------------------------------------------------ generation in chunks
    def _generate_single_turn(
        self, prompt_ids: list[Any], images: Any, multimodal_fields: dict[str, Any], *args: Any, **kwargs: Any
    ) -> tuple[Any, Any]:
        """trl generates every prompt of the batch at once; without vLLM, text only, it goes ``generation_batch``
        prompts at a time here, so the prefill of long prompts fits (``train rl`` sizes the chunk)."""
        chunk = self.generation_batch
        if not chunk or self.use_vllm or len(prompt_ids) <= chunk or images is not None or multimodal_fields:
            return super()._generate_single_turn(prompt_ids, images, multimodal_fields, *args, **kwargs)
        completions: list[Any] = []
        logprobs: list[Any] | None = []
        for start in range(0, len(prompt_ids), chunk):
            ids, lps = super()._generate_single_turn(prompt_ids[start : start + chunk], None, {}, *args, **kwargs)
            completions += list(ids)
            logprobs = None if lps is None or logprobs is None else logprobs + list(lps)
        return completions, logprobs

    # ------------------------------------------------------------------ reject and retry
    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        self._rows = list(inputs)
        output: dict[str, Any] = super()._generate_and_score_completions(inputs)
        if self.algo == "gigpo" and self.environments:
            output["advantages"] = self._gigpo_token_advantages(output)
        return output

    def _status(self, i: int, completion_ids: list[list[int]], completions: list[Any]) -> str:
        env = self.environments[i]
        if env.status == INFRA_ERROR:
            return INFRA_ERROR
        ids = completion_ids[i]
        cut = not ids or ids[-1] not in [*self.eos_token_ids, self._tokenizer.pad_token_id]
        last = completions[i][-1] if completions[i] else {}
        if cut or (isinstance(last, dict) and last.get("role") == "assistant" and last.get("tool_calls")):
            return INCOMPLETE
        return OK

    def _bad_groups(self, out: tuple[Any, ...]) -> list[int]:
        size = self.num_generations if self.model.training else self.num_generations_eval
        statuses = [self._status(i, out[1], out[3]) for i in range(len(out[1]))]
        for env, status in zip(self.environments, statuses, strict=True):
            if status != OK:
                env.status = status
                self.group_stats[status] += 1
        return sorted({i // size for i, s in enumerate(statuses) if s != OK})

    def _use(self, environments: list[TaskEnvironment]) -> None:
        self.environments = environments
        self._sync_tool_dicts, self._async_tool_dicts = [], []
        for env in environments:
            methods = [
                getattr(env, name)
                for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
                if name not in ("reset", "get_reward") and not name.startswith("_")
            ]
            tools = self._standalone_tools + methods
            self._sync_tool_dicts.append({t.__name__: t for t in tools if not inspect.iscoroutinefunction(t)})
            self._async_tool_dicts.append({t.__name__: t for t in tools if inspect.iscoroutinefunction(t)})

    def _fresh(self, i: int) -> TaskEnvironment:
        name = self._batch_environments[i]
        env: TaskEnvironment = self.environment_factories[name]()
        row = self._rows[i]
        env.reset(**({k: v for k, v in row.items() if k != "environment"} if self._multi_environment else row))
        return env

    def _generate(self, prompts: list[Any]) -> tuple[Any, ...]:
        out = super()._generate(prompts)
        if not self.environments:
            return out
        size = self.num_generations if self.model.training else self.num_generations_eval
        bad = self._bad_groups(out)
        for _ in range(self.max_group_retries):
            count = torch.tensor([len(bad)], device=self.accelerator.device)
            if int(self.accelerator.gather(count).sum()) == 0:
                break
            self.group_stats["retried"] += len(bad)
            kept = list(self.environments)
            trial = [self._fresh(i) for i in range(len(kept))]
            self._use(trial)
            new = super()._generate(prompts)
            again = set(self._bad_groups(new))
            merged: list[Any] = [list(f) if isinstance(f, list | tuple) else f for f in out]
            if isinstance(out[5], dict):  # extra_fields: {name: a value per sample}, copied so ``out`` is kept
                merged[5] = {key: list(values) for key, values in out[5].items()}
            for group in bad:
                for i in range(group * size, (group + 1) * size):
                    pool = self._environment_pool[self._batch_environments[i]]
                    pool[pool.index(kept[i])] = trial[i]
                    kept[i] = trial[i]
                    for k in _LIST_FIELDS:
                        if merged[k] is not None and new[k] is not None:
                            merged[k][i] = new[k][i]
                    for key, values in (merged[5] or {}).items():
                        values[i] = new[5][key][i]
            self._use(kept)
            out = tuple(merged)
            bad = [g for g in bad if g in again]
        for group in bad:
            self.group_stats["rejected"] += 1
            for env in self.environments[group * size : (group + 1) * size]:
                env.rejected = True
        self._completions = list(out[3])
        return out

    # ------------------------------------------------------------------ GiGPO
    def _turn_anchors(self, env: TaskEnvironment, completion: list[dict[str, Any]], turns: int) -> list[str]:
        calls = [len(m.get("tool_calls") or []) for m in completion if m.get("role") == "assistant"]
        anchors, seen = [], 0
        for turn in range(turns):
            anchors.append(env.anchors[seen] if seen < len(env.anchors) else env._final_anchor())
            seen += calls[turn] if turn < len(calls) else 0
        return anchors

    def _gigpo_token_advantages(self, output: dict[str, Any]) -> torch.Tensor:
        mask = output["completion_mask"]
        if "tool_mask" in output:
            mask = mask * output["tool_mask"]
        runs: list[list[tuple[int, int]]] = []  # per sample: (start, end) of each model turn's tokens
        for row in mask.tolist():
            spans, start = [], None
            for t, m in enumerate([*row, 0]):
                if m and start is None:
                    start = t
                elif not m and start is not None:
                    spans.append((start, t))
                    start = None
            runs.append(spans)
        size = self.num_generations if self.model.training else self.num_generations_eval
        advantages = torch.zeros_like(mask, dtype=torch.float32)
        for g in range(0, len(runs), size):
            members = list(range(g, min(g + size, len(runs))))
            graded = [self.environments[i]._graded() for i in members]
            scored = [i for i, grade in zip(members, graded, strict=True) if grade is not None]
            if not scored:
                continue
            returns = [float(self.environments[i]._graded().score) for i in scored]  # type: ignore[union-attr]
            steps = []
            for i, ret in zip(scored, returns, strict=True):
                turns = max(len(runs[i]), 1)
                anchors = self._turn_anchors(self.environments[i], self._completions[i], turns)
                steps.append([Step(a, ret if t == turns - 1 else 0.0) for t, a in enumerate(anchors)])
            per_turn = gigpo_advantages(steps, returns, omega=self.gigpo_omega, gamma=self.gigpo_gamma)
            for i, values in zip(scored, per_turn, strict=True):
                for (start, end), value in zip(runs[i], values, strict=False):
                    advantages[i, start:end] = value
        return advantages.to(mask.device)
