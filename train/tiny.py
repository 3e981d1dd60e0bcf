"""A tiny chat model built fully offline, for tests, the demo and learning from scratch.

A byte-level BPE tokenizer trained with ``tokenizers`` on a small built-in corpus (or on the rendered
demonstrations a model will learn from: ``texts``), wrapped in a ``PreTrainedTokenizerFast`` whose chat
template is exactly trl's Qwen2.5 template (so trl recognises it, swaps in its training variant for
assistant-only loss, and parses tool calls), plus a ``Qwen2`` model with random weights (default hidden 64,
2 layers; heads derived: max(4, hidden / 64), half as many KV heads). Nothing is downloaded; the same seed
and inputs give the same files. Hidden 256 with 4 layers and a 4,096-token vocabulary is ~3.0M parameters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
EOS_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"

DEFAULT_VOCAB_SIZE = 1024

_CORPUS_LINES = [
    "You are a helpful assistant. You work with email, tickets, crm, payments, calendar and documents.",
    "Please find the open ticket from the customer and reply to them with the refund amount.",
    "I found the ticket. The customer asked for a refund of 4200 cents on charge ch_123.",
    "The refund was created. I have emailed the customer and closed the ticket.",
    "Escalate the oldest high priority ticket that has been open for more than 48 hours.",
    "Could you summarise the unread emails from this week and draft a reply to the manager?",
    "Sure. There are three unread messages: an invoice, a meeting request and a support question.",
    "tickets__list_tickets tickets__get_ticket tickets__update_ticket tickets__add_comment",
    "email__search_messages email__send_message email__get_message crm__get_contact crm__update_deal",
    "payments__list_charges payments__create_refund payments__get_customer calendar__create_event",
    '{"name": "tickets__get_ticket", "arguments": {"ticket_id": "tkt_0001"}}',
    '{"name": "payments__create_refund", "arguments": {"charge": "ch_123", "amount": 4200}}',
    '{"status": "open", "priority": "high", "subject": "Order not delivered", "requester": "ana@example.com"}',
    '{"id": "cus_42", "email": "bo@example.com", "name": "Bo Lee", "balance": 0, "currency": "usd"}',
    '{"type": "function", "function": {"name": "email__send_message", "description": "Send an email.",',
    ' "parameters": {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}}}',
    "status new open pending solved closed; priority low normal high urgent; amount in cents.",
    "Thank you! Done. Is there anything else you need? No, that is all. Goodbye.",
    "0 1 2 3 4 5 6 7 8 9 10 11 12 24 48 100 2026-03-02T09:00:00Z",
    "system user assistant tool function arguments name content result error true false null",
]


def corpus() -> list[str]:
    """The built-in training text for the tokenizer (chat words, tool names, JSON)."""
    return list(_CORPUS_LINES)


def qwen2_5_chat_template() -> str:
    """The exact Qwen2.5 chat template text that trl ships (trl matches templates by exact text)."""
    from trl.chat_template_utils import qwen2_5_chat_template as template

    return str(template)


def pretokenize_regex(digits: int = 1) -> str:
    """Qwen2's pre-tokenizer regex, with runs of up to ``digits`` digits as one piece (Qwen2: one digit a
    piece). With 2, ``tkt_5442`` is ``tkt _ 54 42``: each of the 100 pairs is trained often, and a pair recurs in a
    context far less than a lone digit does, so the token before the one to copy points at fewer places."""
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    if digits < 1:
        raise ValueError(f"digits must be 1 or more, not {digits}")
    if digits == 1:
        return str(PRETOKENIZE_REGEX)
    if r"|\p{N}|" not in PRETOKENIZE_REGEX:  # pragma: no cover - a transformers release that changed the regex
        raise RuntimeError("transformers' Qwen2 pre-tokenizer regex changed; update pretokenize_regex")
    return str(PRETOKENIZE_REGEX).replace(r"|\p{N}|", rf"|\p{{N}}{{1,{digits}}}|", 1)


def build_tokenizer(vocab_size: int = DEFAULT_VOCAB_SIZE, texts: list[str] | None = None, digits: int = 1) -> Any:
    """A byte-level BPE trained on :func:`corpus` (plus ``texts``), as a ``PreTrainedTokenizerFast`` with the
    Qwen2.5 template. The chat template's markers are whole tokens, never merged into others. An identifier is
    the same tokens where a tool result shows it and where a call writes it (``"usr_aisha_quinn"``: ``usr _a
    isha _ qu in n`` in both; numbers in pieces of up to ``digits`` digits), so copying it is copying tokens."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    # The same normaliser and pre-tokenizer as transformers' Qwen2 tokenizer, which is what ``AutoTokenizer``
    # reloads a Qwen2 model's tokenizer as: the saved tokenizer then splits text the same way after reload.
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pretokenize_regex(digits)), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_without_markers([*corpus(), *(texts or [])]), trainer=trainer)
    tok = _copyable_names(tok)
    # Like Qwen2.5: the tool markers are whole tokens but not "special" (decoding keeps them).
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in TOOL_TOKENS])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        clean_up_tokenization_spaces=False,
        model_max_length=32768,
    )
    fast.chat_template = qwen2_5_chat_template()
    return fast


def _prose_only_merge(pair: list[str] | str) -> bool:
    """Whether a BPE merge glues the space before a word to a capitalised word (``Ġ`` + ``J…``)."""
    left, right = pair if isinstance(pair, list) else pair.split(" ", 1)
    joined = left + right
    return joined.startswith("\u0120") and len(joined) > 1 and joined[1].isupper()


def _copyable_names(tok: Any) -> Any:
    """The tokenizer without merges that join a space to a capitalised word, so a name is the same tokens in
    prose (``is Jonas``: ``Ġ`` + ``Jonas``) as inside JSON (``"Jonas"``, where the pre-tokenizer gives it no
    space). Otherwise copying a name from a request into a tool call's arguments means learning, name by name,
    which tokens spell it there — a model learning from scratch guesses a frequent name instead. The vocabulary
    (and its ids) stays as trained; the merges' results simply never form."""
    import json

    from tokenizers import Tokenizer

    state = json.loads(tok.to_str())
    state["model"]["merges"] = [m for m in state["model"]["merges"] if not _prose_only_merge(m)]
    return Tokenizer.from_str(json.dumps(state))


def _without_markers(texts: list[str]) -> list[str]:
    """Texts with the chat markers cut out, so BPE learns no merge across them (they are added whole)."""
    out = []
    for text in texts:
        for marker in (*SPECIAL_TOKENS, *TOOL_TOKENS):
            text = text.replace(marker, "\n")
        out.append(text)
    return out


def heads(hidden_size: int) -> tuple[int, int]:
    """(attention heads, KV heads) for a hidden size: max(4, hidden / 64) heads, half as many KV heads."""
    n = max(4, hidden_size // 64)
    if hidden_size % n:
        raise ValueError(f"hidden size {hidden_size} must be a multiple of {n} (its attention heads)")
    return n, max(1, n // 2)


def render_demonstrations(path: str | Path) -> list[str]:
    """Each record of an exported chat JSONL file as the chat template renders it (the tokenizer's corpus)."""
    import json

    from coworkenv.train.data import read_chat_jsonl

    bootstrap = build_tokenizer()
    return [
        str(
            bootstrap.apply_chat_template(
                r["messages"], tools=json.loads(r["tools"]) if r["tools"] else None, tokenize=False
            )
        )
        for r in read_chat_jsonl(path)
    ]


def build_model(tokenizer: Any, seed: int = 0, hidden_size: int = 64, layers: int = 2) -> Any:
    """A ``Qwen2ForCausalLM`` with random weights (seeded), sized to ``tokenizer``."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    attention_heads, kv_heads = heads(hidden_size)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=attention_heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=32768,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None
    )
    return model


def build_tiny(
    out: str | Path,
    seed: int = 0,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    layers: int = 2,
    hidden_size: int = 64,
    tokenizer_from: str | Path | None = None,
    digits: int = 1,
) -> Path:
    """Build the tiny model and tokenizer (trained on ``tokenizer_from``'s rendered demonstrations when given)
    and save both to ``out``; returns the directory."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    texts = render_demonstrations(tokenizer_from) if tokenizer_from else None
    tokenizer = build_tokenizer(vocab_size, texts, digits)
    model = build_model(tokenizer, seed=seed, hidden_size=hidden_size, layers=layers)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def parameter_count(folder: str | Path) -> int:
    """Parameters of a saved model (tied embeddings counted once), read from its safetensors header."""
    from safetensors import safe_open

    total = 0
    for path in sorted(Path(folder).glob("*.safetensors")):
        with safe_open(str(path), framework="pt") as f:
            for name in f.keys():  # noqa: SIM118 - safe_open has keys(), not iteration
                size = 1
                for dim in f.get_slice(name).get_shape():
                    size *= dim
                total += size
    return total
