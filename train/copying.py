"""A copy curriculum: a model trained from scratch first learns to copy values from its context.

A tool-using agent copies most of what it writes from its context (names from the request, ids from tool
results). A small model trained from scratch on the demonstrations with the usual loss (every assistant token
alike) learns the format first: its attention turns sharp on the format's positions within a few dozen steps,
a name in the request then gets no attention and so no gradient, and the model settles on the names' prior
(measured: a 3M model writes the same first name for every task after 2,400 steps, and attends ~0.001 to the
name it should copy). Warm-ups run on a saved model before SFT, each saving it in place:

- :func:`train_copying_values`: the demonstrations' conversations without their system prompt, cut after each
  assistant turn (up to ``max_tokens``), with the loss **only** on the tokens of tool-call argument values
  that appear earlier in the conversation (the name the request gives, an id a tool returned). While attention
  is still broad, copying is all there is to learn (measured: the first call's name copied in 30 of 30
  held-out tasks after 150 steps of 16, from 1 in 30). The demonstrations themselves are not changed.
  Conversations longer than ``max_tokens`` are left out: what a tool returns comes later than the request,
  so this teaches the request's names only.
- The same on windows (``window``; ``train tiny --window-steps``): a conversation longer than ``max_tokens`` cut
  to its last tokens, the loss only on the values the window still holds, so that the tool results the ids
  come from are inside short examples (320 tokens hold every assign call's user search). Measured from the
  random model (1,050 steps of 16, ~40 min on one thread): whole ticket ids 0 -> 40 % of held-out values,
  slowly, with no sudden jump; by token, the first digit is the hard one (52 %; the fourth, 95 %). No user id:
  the first name is written from the request's name (swapping it in the tool result changes nothing: 30/30
  the request's), the last name is guessed. The request's name, copied after the short warm-up, is not learnt
  here; run after the short warm-up, the windows undo it within 100 steps; run before, the short warm-up no
  longer teaches it (150 steps) and the ids are lost.
- :func:`train_copying`: synthetic text, random tokens then the same tokens again, the loss on the repeat,
  which forms induction heads (attend to the token after an earlier occurrence of the current one). Alone it
  did not make the name copied (1 in 30 after SFT); 400 steps of it before the windows made them slower.

SFT afterwards, with every assistant token alike, undoes the value warm-up within 50 steps while it learns the
format (name copied 30/30 -> 0/30, still 0/30 at 150 steps). :func:`copy_weights` gives SFT the weights that
keep it (``train sft --copy-weight``): with the copied values' tokens at 20, the name stayed copied (24/30 at
50 steps, 30/30 at 250) while the format was learnt. ``train sft --value-batch`` trains the value objective jointly
instead (each SFT step adds a batch of value examples): measured in the learning bench (value warm-up 250 steps
at 700 tokens, then 900 joint steps with 8 value examples a step), whole ticket ids went 25 % -> 52 % teacher-forced
across SFT (kept, not undone), user ids stayed at 0 %, and the tool-call JSON was still broken after 900 steps.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.synth.contract.validation.adversary_pools import strings_in

SUMMARY = "coworkenv_copying.json"
_NO_LOSS = -100


@dataclass
class CopyingResult:
    steps: int
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def induction_batch(
    rng: random.Random, vocab: range, batch: int, length: int
) -> tuple[list[list[int]], list[list[bool]]]:
    """``batch`` sequences of ``length`` tokens: ``length // 2`` random tokens drawn from ``vocab``, then spans of
    2-6 of them copied from random places in that half; and for each token whether it is a predictable copy (a
    span's tokens after its first). No fixed offset predicts the copies (a repeat at one offset is learnt as "look
    back N tokens", which copies nothing from a tool result): the model must find the token it just read earlier
    and copy what came next there."""
    if length < 4:
        raise ValueError(f"copy sequences need at least 4 tokens, not {length}")
    half = length // 2
    rows: list[list[int]] = []
    masks: list[list[bool]] = []
    for _ in range(batch):
        first = [rng.choice(vocab) for _ in range(half)]
        row, mask = list(first), [False] * half
        while len(row) < length:
            size = min(rng.randint(2, 6), length - len(row), half)
            start = rng.randrange(half - size + 1)
            row += first[start : start + size]
            mask += [False] + [True] * (size - 1)
        rows.append(row)
        masks.append(mask)
    return rows, masks


def labelled_loss(model: Any, batch: dict[str, Any]) -> Any:
    """The causal LM loss of ``batch`` (input ids, labels with -100 where there is no loss, an optional
    attention mask), the same as the model's own, but with the output layer run only where a label is: the
    warm-ups label a few tokens of each sequence, and on a small vocabulary's model the output layer and its
    softmax over every position are a large share of a step. Models without a separate decoder and output
    layer (``model.model``, ``model.lm_head``) get their own loss."""
    import torch

    decoder, head = getattr(model, "model", None), getattr(model, "lm_head", None)
    if decoder is None or head is None:
        return model(**batch).loss
    hidden = decoder(input_ids=batch["input_ids"], attention_mask=batch.get("attention_mask")).last_hidden_state
    targets = batch["labels"][:, 1:]
    kept = targets != _NO_LOSS
    logits = head(hidden[:, :-1][kept])
    return torch.nn.functional.cross_entropy(logits.float(), targets[kept])


def _train(
    model: Any, batches: Callable[[], dict[str, Any]], steps: int, lr: float, seed: int
) -> tuple[list[float], float]:
    """``steps`` AdamW steps on ``batches()`` (the model's keyword arguments: input ids, labels with -100 where
    there is no loss, an attention mask where padded), ``lr`` after a 10 % warmup, decaying linearly to a
    tenth. Returns the losses and the seconds taken."""
    import torch

    torch.manual_seed(seed)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warmup if s < warmup else 1.0 - 0.9 * (s - warmup) / max(1, steps - warmup)
    )
    losses: list[float] = []
    start = time.perf_counter()
    for _ in range(steps):
        loss = labelled_loss(model, batches())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
    return losses, round(time.perf_counter() - start, 1)


def _check_steps(steps: int) -> None:
    if steps < 1:
        raise ValueError(f"copy steps must be at least 1, not {steps}")


def _save(model: Any, folder: Path, name: str, settings: dict[str, Any], result: CopyingResult) -> None:
    model.save_pretrained(folder)
    path = folder / SUMMARY
    summary = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    summary[name] = {**settings, **asdict(result)}
    write_atomic(path, json.dumps(summary, indent=2))


def train_copying(
    folder: str | Path, steps: int, batch: int = 16, length: int = 128, lr: float = 1e-3, seed: int = 0
) -> CopyingResult:
    """Train the model saved in ``folder`` on :func:`induction_batch` sequences for ``steps`` steps (loss on
    the repeated half) and save it back, with its losses under ``induction`` in ``coworkenv_copying.json``.
    The tokens are drawn from the whole vocabulary but the chat markers, so what is learnt is copying."""
    import torch
    from transformers import AutoModelForCausalLM

    from coworkenv.harness.agents.hf_agent import load_tokenizer

    _check_steps(steps)
    folder = Path(folder)
    tokenizer = load_tokenizer(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    first = max(set(tokenizer.all_special_ids) | set(tokenizer.get_added_vocab().values())) + 1
    vocab = range(first, len(tokenizer)) if first < len(tokenizer) else range(len(tokenizer))
    rng = random.Random(seed)

    def batches() -> dict[str, Any]:
        rows, masks = induction_batch(rng, vocab, batch, length)
        ids = torch.tensor(rows)
        labels = ids.masked_fill(~torch.tensor(masks), _NO_LOSS)  # only the copies that can be predicted
        return {"input_ids": ids, "labels": labels}

    losses, seconds = _train(model, batches, steps, lr, seed)
    result = CopyingResult(steps=steps, losses=losses, seconds=seconds)
    _save(model, folder, "induction", {"batch": batch, "length": length, "lr": lr, "seed": seed}, result)
    return result


def copied_values(messages: list[dict[str, Any]]) -> list[set[str]]:
    """For each message, the string values of its tool calls' arguments that appear in an earlier user or tool
    message and not in the system message (which lists the enums: those are format, not copying)."""

    system = "\n".join(m.get("content") or "" for m in messages if m["role"] == "system")
    seen = ""
    out: list[set[str]] = []
    for m in messages:
        found: set[str] = set()
        for call in m.get("tool_calls") or []:
            arguments = call.get("function", call).get("arguments") or {}
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            for value in strings_in(arguments):
                if value and value in seen and value not in system:
                    found.add(value)
        out.append(found)
        if m["role"] in ("user", "tool"):
            seen += "\n" + (m.get("content") or "")
    return out


def value_examples(
    records: list[dict[str, Any]], tokenizer: Any, max_tokens: int = 256, window: bool = False
) -> list[tuple[list[int], list[int]]]:
    """(token ids, labels) for each assistant turn of each record that writes a copied value (see
    :func:`copied_values`): the conversation without its system message up to that turn, rendered by the
    model's chat template, labels -100 but on the tokens of the copied values in that turn. Examples longer
    than ``max_tokens`` are left out (short contexts are what makes this fast); with ``window`` they are cut
    to their last ``max_tokens`` tokens instead (a window that ends with the turn), with the loss only on the
    values that the window still holds before the turn — so an id a tool returned a few hundred tokens back
    is inside a short example, not only the name in the request."""
    examples = []
    for record in records:
        kept = list(zip(record["messages"], copied_values(record["messages"]), strict=True))
        messages = [m for m, _ in kept if m["role"] != "system"]
        for k, values in enumerate(values for m, values in kept if m["role"] != "system"):
            if not values or messages[k]["role"] != "assistant":
                continue
            head = str(tokenizer.apply_chat_template(messages[:k], add_generation_prompt=True, tokenize=False))
            text = str(tokenizer.apply_chat_template(messages[: k + 1], tokenize=False))
            if not text.startswith(head):
                raise ValueError("the chat template renders a turn differently once the next one is added")
            encoded = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
            ids, offsets = list(encoded["input_ids"]), list(encoded["offset_mapping"])
            first = max(0, len(ids) - max_tokens)
            if first and not window:
                continue
            context = text[offsets[first][0] : len(head)]
            spans = [
                (m.start() + 1, m.end() - 1)
                for value in values
                if value in context
                for m in re.finditer(re.escape(json.dumps(value)), text[len(head) :])
            ]
            labels = [
                token if any(s < end - len(head) and start - len(head) < e for s, e in spans) else _NO_LOSS
                for token, (start, end) in zip(ids[first:], offsets[first:], strict=True)
            ]
            if any(label != _NO_LOSS for label in labels):
                examples.append((ids[first:], labels))
    return examples


def value_batch(
    examples: list[tuple[list[int], list[int]]], rng: random.Random, batch: int, pad: int
) -> dict[str, Any]:
    """``batch`` of :func:`value_examples` drawn at random, padded: the model's keyword arguments (input ids,
    labels, attention mask) for :func:`labelled_loss`."""
    import torch

    picked = [rng.choice(examples) for _ in range(batch)]
    width = max(len(ids) for ids, _ in picked)
    return {
        "input_ids": torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in picked]),
        "labels": torch.tensor([labels + [_NO_LOSS] * (width - len(labels)) for _, labels in picked]),
        "attention_mask": torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in picked]),
    }


def train_copying_values(
    folder: str | Path,
    data: str | Path,
    steps: int,
    batch: int = 16,
    lr: float = 1e-3,
    max_tokens: int = 256,
    seed: int = 0,
    window: bool = False,
) -> CopyingResult:
    """Train the model saved in ``folder`` for ``steps`` steps on :func:`value_examples` of the chat JSONL
    ``data`` (up to ``max_tokens`` each, longer ones cut to a ``window`` or left out; ``batch`` drawn at
    random each step) and save it back, with its losses under ``values`` (``windows`` with ``window``) in
    ``coworkenv_copying.json``."""
    from transformers import AutoModelForCausalLM

    from coworkenv.harness.agents.hf_agent import load_tokenizer
    from coworkenv.train.data import read_chat_jsonl

    _check_steps(steps)
    folder = Path(folder)
    tokenizer = load_tokenizer(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    examples = value_examples(read_chat_jsonl(data), tokenizer, max_tokens, window)
    if not examples:
        raise ValueError(
            f"no demonstration of {data} copies a value into a tool call within {max_tokens} tokens: "
            "raise max_tokens, or skip the value warm-up"
        )
    rng = random.Random(seed)
    pad = tokenizer.pad_token_id
    losses, seconds = _train(model, lambda: value_batch(examples, rng, batch, pad), steps, lr, seed)
    result = CopyingResult(steps=steps, losses=losses, seconds=seconds)
    settings = {"data": str(data), "examples": len(examples), "batch": batch, "lr": lr, "max_tokens": max_tokens}
    settings["window"] = window
    _save(model, folder, "windows" if window else "values", {**settings, "seed": seed}, result)
    return result


_TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
SYSTEM_TURN = re.compile(r"<\|im_start\|>system\n.*?<\|im_end\|>", re.DOTALL)


def copy_weights(tokenizer: Any, ids: list[int], labels: list[int], weight: float) -> list[float]:
    """Per-token loss weights for one tokenised training example: 0 where there is no loss (``labels`` -100),
    ``weight`` on the tokens of a tool call's argument value that appears earlier outside the assistant's turns
    and outside the system turn (see :func:`copied_values`), 1 elsewhere. Read from the text the tokens
    decode to (Qwen-style ``<tool_call>`` JSON); where that text does not tokenise back to ``ids``, every
    trained token weighs 1."""
    plain = [0.0 if label == _NO_LOSS else 1.0 for label in labels]
    text = tokenizer.decode(ids, skip_special_tokens=False)
    encoded = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    if list(encoded["input_ids"]) != list(ids):
        return plain
    offsets = encoded["offset_mapping"]
    trained = [False] * len(text)
    for (start, end), w in zip(offsets, plain, strict=True):
        if w:
            trained[start:end] = [True] * (end - start)
    system = "".join(m.group(0) for m in SYSTEM_TURN.finditer(text))
    marked = [False] * len(text)
    for call in _TOOL_CALL.finditer(text):
        if not trained[call.start(1)]:
            continue
        context = "".join(c for c, t in zip(text[: call.start()], trained, strict=False) if not t)
        context = SYSTEM_TURN.sub("", context)
        try:
            arguments = json.loads(call.group(1)).get("arguments") or {}
        except (json.JSONDecodeError, AttributeError):
            continue
        for value in strings_in(arguments):
            needle = json.dumps(value)
            if not value or value not in context or value in system:
                continue
            for m in re.finditer(re.escape(needle), call.group(1)):
                start = call.start(1) + m.start() + 1
                marked[start : start + len(needle) - 2] = [True] * (len(needle) - 2)
    return [weight if w and any(marked[start:end]) else w for (start, end), w in zip(offsets, plain, strict=True)]
