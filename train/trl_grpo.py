"""trl's GRPOTrainer on our environments, with group reject-and-retry and GiGPO's step-level credit.

Where reject/retry lives: in :meth:`CoworkGRPOTrainer._generate`, right after trl's own generation and tool loop
and before rewards and advantages. Not in a ``rollout_func`` (that would replace trl's multi-turn tool loop, the
part that brings vLLM, its tool-result masks and its truncation rules with it), and not in a pre-pass (the
rollouts happen inside the trainer). A rollout is *incomplete* when its last turn was cut (no end-of-turn token:
``max_completion_length``) or still asked for tools (``max_tool_calling_iterations``), and *infra_error* when a
tool call crashed outside the kit's answers (a dead MCP server). A group holding one is played again, whole,
with fresh environments, up to ``max_group_retries`` times; a group still bad after that is rejected: its
rewards are None, so trl gives it advantage 0 and leaves it out of every baseline. With ``at_limit="grade"`` an
incomplete rollout is graded instead, at the state it reached (as the harness grades an episode that hit its
turn limit): a policy that loops until the budget runs out then scores low rather than going unseen. With
several processes, every process regenerates its whole local batch when any process has a bad group (generation
involves collective operations, so all processes must generate the same number of times); only the bad groups'
new rollouts are kept.

The user's turns: trl's tool loop ends a rollout at the first reply without tool calls. Here a rollout goes on
as a harness episode does: :meth:`CoworkGRPOTrainer._tool_call_loop` asks the rollout's environment for the user's
answer to that reply (:meth:`~coworkenv.train.trl_env.TaskEnvironment._user_reply`), appends it as a user message
(its tokens masked out of the loss, as tool results are), generates the next turn and runs trl's tool loop on it,
until the user ends the conversation, ``max_user_turns`` answers were given, or the completion budget is spent; a
rollout the user still had something to say to is *incomplete*. So a family that asks the user a question is
rewarded for what the model does with the answer.

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
from coworkenv.train.trl_env import INCOMPLETE, OK, TaskEnvironment

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
        max_user_turns: int = 30,
        at_limit: str = "reject",
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.max_user_turns = max_user_turns
        self.at_limit = at_limit
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

    # ------------------------------------------------------------------ the user's turns
    def _get_user_suffix_ids(self, message: dict[str, Any]) -> list[int]:
        """The tokens between a finished assistant turn (its end-of-turn token included) and the next assistant
        turn's first token: the user's message and the generation prompt, from the chat template (as trl's
        ``_get_tool_suffix_ids`` does for tool results)."""
        history = [{"role": "user", "content": "dummy"}, {"role": "assistant", "content": "dummy"}]
        render = self.processing_class.apply_chat_template
        kwargs = {"tokenize": True, "chat_template": self.chat_template, "return_dict": False}
        prefix = list(render(history, add_generation_prompt=False, **kwargs, **self.chat_template_kwargs))
        full = list(render([*history, message], add_generation_prompt=True, **kwargs, **self.chat_template_kwargs))
        ends = [i for i, t in enumerate(prefix) if t == self._tokenizer.eos_token_id]
        if ends:
            prefix = prefix[: ends[-1] + 1]
        if full[: len(prefix)] != prefix:
            raise ValueError("the chat template renders a user message after an assistant turn as no plain suffix")
        return full[len(prefix) :]

    def _finished(self, i: int, completion_ids: list[list[int]], completions: list[Any]) -> str | None:
        """The text of rollout ``i``'s last turn when it is a finished reply (no tool calls, ended by the model)."""
        ids, last = completion_ids[i], completions[i][-1] if completions[i] else None
        if not ids or ids[-1] not in [*self.eos_token_ids, self._tokenizer.pad_token_id]:
            return None
        if not isinstance(last, dict) or last.get("role") != "assistant" or last.get("tool_calls"):
            return None
        return str(last.get("content") or "")

    def _tool_call_loop(
        self,
        prompts: list[Any],
        prompt_ids: list[list[int]],
        completion_ids: list[list[int]],
        completions: list[Any],
        logprobs: Any,
        images: Any,
        multimodal_fields: dict[str, Any],
    ) -> tuple[Any, ...]:
        out = super()._tool_call_loop(
            prompts, prompt_ids, completion_ids, completions, logprobs, images, multimodal_fields
        )
        if not self.environments or images is not None or multimodal_fields:
            return out
        tool_mask, completions, completion_ids, logprobs, calls, failures, tool_images = out
        answered = [0] * len(completions)
        while True:
            waiting: list[tuple[int, dict[str, Any], list[int]]] = []
            for i, env in enumerate(self.environments):
                text = self._finished(i, completion_ids, completions)
                if text is None or env.ended:
                    continue
                reply = env._user_reply(text)
                if reply is None:
                    continue
                if answered[i] >= self.max_user_turns:
                    env.status = INCOMPLETE  # the user had more to say than the run allows
                    continue
                answered[i] += 1
                message = {"role": "user", "content": reply}
                suffix = self._get_user_suffix_ids(message)
                if len(completion_ids[i]) + len(suffix) >= self.max_completion_length:
                    env.status = INCOMPLETE  # no room left for the answer and a turn after it
                    continue
                waiting.append((i, message, suffix))
            if not waiting:
                return tool_mask, completions, completion_ids, logprobs, calls, failures, tool_images
            calls, failures = self._next_turns(
                waiting, prompts, prompt_ids, completion_ids, completions, logprobs, tool_mask, calls, failures
            )

    def _next_turns(
        self,
        waiting: list[tuple[int, dict[str, Any], list[int]]],
        prompts: list[Any],
        prompt_ids: list[list[int]],
        completion_ids: list[list[int]],
        completions: list[Any],
        logprobs: Any,
        tool_mask: list[list[int]],
        calls: int,
        failures: int,
    ) -> tuple[int, int]:
        """Each waiting rollout's next turn after the user's message, then trl's tool loop on those turns (run on
        the subset: the per-rollout tables trl indexes are narrowed to it meanwhile); merged back in place."""
        from trl.chat_template_utils import parse_response

        rows = [i for i, _, _ in waiting]
        heads = [completion_ids[i] + suffix for i, _, suffix in waiting]
        new_ids, new_lps = self._generate_single_turn(
            [prompt_ids[i] + head for i, head in zip(rows, heads, strict=True)], None, {}, num_generations=1
        )
        sub_ids, sub_lps, sub_turns, sub_prompts = [], [], [], []
        for k, (i, message, suffix) in enumerate(waiting):
            ids = list(new_ids[k])[: self.max_completion_length - len(heads[k])]
            tools = self._env_tools[self._batch_environments[i]] if self.environment_factories else self.tools
            turn = parse_response(self._tokenizer, ids, prefix=prompt_ids[i] + heads[k], tools=tools) if ids else {}
            sub_ids.append(heads[k] + ids)
            if logprobs is not None:
                lps = list(new_lps[k])[: len(ids)] if new_lps is not None else [0.0] * len(ids)
                sub_lps.append(logprobs[i] + [0.0] * len(suffix) + lps)
            sub_turns.append([turn])  # {} when nothing was generated: no tool calls, nothing said
            sub_prompts.append([*prompts[i], *completions[i], message])
        narrowed = ("_sync_tool_dicts", "_async_tool_dicts", "_batch_environments")
        kept = {name: self.__dict__.get(name) for name in narrowed}
        for name, table in kept.items():
            if table is not None:
                self.__dict__[name] = [table[i] for i in rows]
        try:
            sub_mask, sub_turns, sub_ids, sub_lps_out, more_calls, more_failures, _ = super()._tool_call_loop(
                sub_prompts,
                [prompt_ids[i] for i in rows],
                sub_ids,
                sub_turns,
                sub_lps if logprobs is not None else None,
                None,
                {},
            )
        finally:
            for name, table in kept.items():
                if table is not None:
                    self.__dict__[name] = table
        for k, (i, message, suffix) in enumerate(waiting):
            head = len(completion_ids[i])
            tool_mask[i] = tool_mask[i] + [0] * len(suffix) + sub_mask[k][head + len(suffix) :]
            completions[i] = [*completions[i], message, *(turn for turn in sub_turns[k] if turn)]
            completion_ids[i] = sub_ids[k]
            if logprobs is not None:
                logprobs[i] = sub_lps_out[k]
        return calls + more_calls, failures + more_failures

    # ------------------------------------------------------------------ reject and retry
    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        self._rows = list(inputs)
        output: dict[str, Any] = super()._generate_and_score_completions(inputs)
        if self.algo == "gigpo" and self.environments:
            output["advantages"] = self._gigpo_token_advantages(output)
        return output

    def _status(self, i: int, completion_ids: list[list[int]], completions: list[Any]) -> str:
        env = self.environments[i]
        if env.status != OK:
            return str(env.status)
        ids = completion_ids[i]
        cut = not ids or ids[-1] not in [*self.eos_token_ids, self._tokenizer.pad_token_id]
        last = completions[i][-1] if completions[i] else {}
        if cut or (isinstance(last, dict) and last.get("role") == "assistant" and last.get("tool_calls")):
            return INCOMPLETE
        return OK

    def _bad_groups(self, out: tuple[Any, ...]) -> list[int]:
        size = self.num_generations if self.model.training else self.num_generations_eval
        statuses = [self._status(i, out[1], out[3]) for i in range(len(out[1]))]
        for i, (env, status) in enumerate(zip(self.environments, statuses, strict=True)):
            if status == INCOMPLETE and self.at_limit == "grade":
                env.status = statuses[i] = OK  # the policy's own outcome: graded at the state it reached
                self.group_stats["graded_at_limit"] += 1
            elif status != OK:
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
