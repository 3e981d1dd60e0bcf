"""A local transformers model, prompted with its own chat template's tool-call format (``hf:PATH``).

Options follow the path as a query: ``hf:PATH?template=compact&max_new_tokens=96&temperature=0``.
``template=full`` (the default) hands the tools' JSON schemas to the chat template; ``template=compact`` lists
them in the system message instead, one line a tool (name, arguments and their types, first sentence of the
description): ~4-6x fewer tokens, for small models. :func:`prompt_messages` renders both, and the exporter
(``coworkenv export --template``) calls the same function, so a student trains on the text it is prompted with.
``tools=a,b,c`` lists only those of the task's tools (:func:`only_tools`; ``export --tool-names`` the same), a
shorter prompt for a model that learns one family.

The conversation and the tools go through ``apply_chat_template(messages, tools=..., add_generation_prompt=True)``;
the model generates; ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks in its output
(Qwen/Hermes style) become tool calls and the rest is its text. torch and transformers are imported only
when the model is first used (the ``train`` extra). The parser, :func:`parse_tool_calls`, is a pure
function: the OpenAI-compatible backend also uses it when a server returns tool calls as plain text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import count
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.messages import AgentTurn, Message, ToolCall, ToolView, Usage
from coworkenv.synth.providers import INVALID_ARGUMENTS_KEY, arguments_or_invalid

TEMPLATES = ("full", "compact")
COMPACT_HEADER = "# Tools"
TOOL_CALL_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')


# ---------------------------------------------------------------------------------------------- the parser
def _call_from_body(body: str, call_id: str) -> ToolCall | None:
    body = body.strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        name = _NAME.search(body)
        if name is None:
            return None
        error = f"the tool call is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        return ToolCall(
            id=call_id, name=name.group(1), arguments={INVALID_ARGUMENTS_KEY: {"raw": body, "error": error}}
        )
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    raw = data.get("arguments", data.get("parameters"))
    return ToolCall(id=call_id, name=data["name"], arguments=arguments_or_invalid(raw))


def parse_tool_calls(text: str, id_prefix: str = "call", start: int = 0) -> tuple[str, list[ToolCall]]:
    """(the text outside the tool-call blocks, the calls), ids ``{id_prefix}_{n}`` counting from ``start``.

    An unclosed last block still counts (generation may stop at the closing tag). Malformed JSON with a
    recognisable name becomes a call carrying the error; a block without a name stays in the text."""
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    ids = count(start)
    for match in TOOL_CALL_BLOCK.finditer(text):
        kept.append(text[position : match.start()])
        call = _call_from_body(match.group(1), f"{id_prefix}_{next(ids)}")
        if call is None:
            kept.append(match.group(0))
        else:
            calls.append(call)
        position = match.end()
    kept.append(text[position:])
    return "".join(kept).strip(), calls


# ---------------------------------------------------------------------------------------------- conversion
def tool_content(m: Message) -> str:
    """A tool result as the model reads it (errors say so); the exporter writes the same text."""
    return f"Error: {m.content}" if m.is_error and not m.content.startswith("Error") else m.content


def _type_text(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    enum = schema.get("enum")
    if isinstance(enum, list) and 0 < len(enum) <= 8:
        return "|".join(json.dumps(v) if not isinstance(v, str) else v for v in enum)
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind if k != "null") or "any"
    if kind == "array":
        return f"array[{_type_text(schema.get('items'))}]"
    if kind is None and isinstance(schema.get("anyOf"), list):
        return "|".join(_type_text(o) for o in schema["anyOf"] if o.get("type") != "null") or "any"
    return str(kind or "any")


def compact_tool_line(tool: dict[str, Any]) -> str:
    """``- name(arg: type, opt?: type): first sentence of the description`` for one OpenAI function schema."""
    function = tool.get("function", tool)
    params = function.get("parameters") or {}
    required = set(params.get("required") or [])
    args = ", ".join(
        f"{name}{'' if name in required else '?'}: {_type_text(spec)}"
        for name, spec in (params.get("properties") or {}).items()
    )
    description = " ".join((function.get("description") or "").split())
    summary = re.split(r"(?<=[.!?])\s", description, maxsplit=1)[0]  # its first sentence
    return f"- {function['name']}({args})" + (f": {summary}" if summary else "")


def compact_tool_list(tools: list[dict[str, Any]]) -> str:
    """The compact tool list (the system message's tail under ``template=compact``)."""
    lines = [
        COMPACT_HEADER,
        "Call a tool with <tool_call>",
        '{"name": "<tool>", "arguments": {...}}',
        "</tool_call>; optional arguments end with ?.",
        *(compact_tool_line(t) for t in tools),
    ]
    return "\n".join(lines)


def load_tokenizer(path: str | Path) -> Any:
    """``AutoTokenizer.from_pretrained(path)``, except for a local folder whose ``tokenizer_config.json`` names
    ``TokenizersBackend`` (what ``train tiny`` saves): that loads as exactly its ``tokenizer.json``. For a
    ``qwen2`` model transformers otherwise rebuilds the tokenizer from code with Qwen2's own pre-tokenizer,
    silently dropping one saved with it (``train tiny --split-ids``), so training and prompting would split
    text differently from the tokenizer that was trained."""
    from transformers import AutoTokenizer

    if saves_its_own_tokenizer(path):
        from transformers.tokenization_utils_tokenizers import TokenizersBackend

        return TokenizersBackend.from_pretrained(str(path))
    return AutoTokenizer.from_pretrained(str(path))


def saves_its_own_tokenizer(path: str | Path) -> bool:
    """Whether ``path`` is a local folder with a ``tokenizer.json`` that its ``tokenizer_config.json`` says to
    load as it is (``TokenizersBackend``), as :func:`load_tokenizer` then does."""
    try:
        config = json.loads((Path(path) / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return config.get("tokenizer_class") == "TokenizersBackend" and (Path(path) / "tokenizer.json").is_file()


def only_tools(schemas: list[dict[str, Any]], names: Sequence[str] | None) -> list[dict[str, Any]]:
    """The schemas of the tools named in ``names`` (all of them when None), in their own order: the tool list a
    prompt shows when the export and the ``hf:`` agent are both given ``tools``. An unknown name is ignored
    (the task's services simply have no such tool)."""
    if names is None:
        return schemas
    wanted = set(names)
    return [s for s in schemas if s.get("function", s).get("name") in wanted]


def tool_names_option(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``a,b,c`` (or a sequence) as a tuple of tool names; None or empty: no restriction."""
    if value is None:
        return None
    names = tuple(n.strip() for n in (value.split(",") if isinstance(value, str) else value) if n.strip())
    return names or None


def template_of(messages: list[dict[str, Any]]) -> str:
    """``compact`` when the conversation's system message carries the compact tool list, else ``full``."""
    first = messages[0] if messages else {}
    compact = first.get("role") == "system" and f"{COMPACT_HEADER}\nCall a tool with" in str(first.get("content"))
    return "compact" if compact else "full"


def recorded_template(path: str) -> str | None:
    """The template a model folder was trained on, as ``train sft`` records it in ``coworkenv_sft.json``."""
    summary = Path(path) / "coworkenv_sft.json"
    try:
        template = json.loads(summary.read_text(encoding="utf-8")).get("template")
    except (OSError, ValueError):
        return None
    return template if template in TEMPLATES else None


def prompt_messages(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, template: str = "full"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """(messages, tools) to hand to ``apply_chat_template`` under a template: ``full`` passes the schemas on,
    ``compact`` appends :func:`compact_tool_list` to the system message (adding one if there is none)."""
    if template not in TEMPLATES:
        raise ValueError(f"template must be one of {', '.join(TEMPLATES)}, not {template!r}")
    if template == "full" or not tools:
        return messages, tools or None
    listing = compact_tool_list(tools)
    if messages and messages[0]["role"] == "system":
        head = {**messages[0], "content": f"{messages[0]['content']}\n\n{listing}"}
        return [head, *messages[1:]], None
    return [{"role": "system", "content": listing}, *messages], None


def to_chat(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages as chat-template dicts (OpenAI-like, arguments as objects, as HF templates expect)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": m.content}
            if m.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in m.tool_calls
                ]
            out.append(entry)
        elif m.role == "tool":
            out.append({"role": "tool", "content": tool_content(m), "tool_call_id": m.tool_call_id, "name": m.name})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def tool_schemas(tools: list[ToolView]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in tools
    ]


class HFAgent:
    """``hf:PATH``: a local model directory (or hub id, when online). ``model``/``tokenizer`` may be given
    directly (already loaded objects); generation is greedy unless ``temperature`` > 0. ``template`` defaults
    to the one the folder was trained on (``coworkenv_sft.json``), else ``full``."""

    def __init__(
        self,
        path: str,
        *,
        model: Any = None,
        tokenizer: Any = None,
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        device: str | None = None,
        template: str | None = None,
        tools: str | Sequence[str] | None = None,
    ) -> None:
        template = template or recorded_template(path) or "full"
        if template not in TEMPLATES:
            raise ValueError(f"hf: template must be one of {', '.join(TEMPLATES)}, not {template!r}")
        self.path = path
        self.name = f"hf:{path}" + (f"?template={template}" if template != "full" else "")
        self.template = template
        self.tool_names = tool_names_option(tools)
        if self.tool_names:
            self.name += ("&" if "?" in self.name else "?") + f"tools={','.join(self.tool_names)}"
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.device = device
        self._model = model
        self._tokenizer = tokenizer
        self._lock = anyio.Lock()
        self._calls = count()

    def check_ready(self) -> None:
        """Load the model now, so that a path with no model in it is one clear error before a run starts
        (rather than an agent error in every episode)."""
        from coworkenv.harness.agents.registry import AgentSpecError

        try:
            self.load()
        except (OSError, ValueError, ImportError) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise AgentSpecError(
                f"hf:{self.path}: no model could be loaded from it ({first[:300]}); give the folder of a saved "
                "model, e.g. the --out of `coworkenv train sft` or `coworkenv train tiny`"
            ) from exc

    def load(self) -> tuple[Any, Any]:
        """The (tokenizer, model), loading them from ``path`` on first use."""
        if self._tokenizer is None or self._model is None:
            try:
                from transformers import AutoModelForCausalLM
            except ImportError as exc:  # pragma: no cover - depends on the installed extras
                raise ImportError("the hf backend needs `pip install 'coworkenv[train]'`") from exc
            if self._tokenizer is None:
                self._tokenizer = load_tokenizer(self.path)
            if self._model is None:
                self._model = AutoModelForCausalLM.from_pretrained(self.path)
                if self.device:
                    self._model.to(self.device)
                self._model.eval()
        return self._tokenizer, self._model

    def prompt(self, messages: list[Message], tools: list[ToolView]) -> str:
        tokenizer, _ = self.load()
        listed = only_tools(tool_schemas(tools), self.tool_names)
        chat, schemas = prompt_messages(to_chat(messages), listed, self.template)
        return str(tokenizer.apply_chat_template(chat, tools=schemas, add_generation_prompt=True, tokenize=False))

    def _decode(self, tokenizer: Any, ids: list[int]) -> str:
        text = str(tokenizer.decode(ids, skip_special_tokens=False))
        for special in getattr(tokenizer, "all_special_tokens", []):
            if "tool_call" not in special:
                text = text.replace(special, "")
        return text

    def _generate(self, prompt: str) -> tuple[str, int, int]:
        import torch

        tokenizer, model = self.load()
        encoded = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
        device = getattr(model, "device", None)
        if device is not None:
            encoded = {k: v.to(device) for k, v in encoded.items()}
        prompt_len = int(encoded["input_ids"].shape[-1])
        sampling: dict[str, Any] = {"do_sample": False}
        if self.temperature > 0:
            sampling = {"do_sample": True, "temperature": self.temperature}
        with torch.no_grad():
            output = model.generate(
                **encoded,
                max_new_tokens=self.max_new_tokens,
                pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
                **sampling,
            )
        new_ids = [int(i) for i in output[0][prompt_len:]]
        return self._decode(tokenizer, new_ids), prompt_len, len(new_ids)

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        prompt = self.prompt(messages, tools)
        async with self._lock:  # one generation at a time on the one local model
            raw, prompt_tokens, new_tokens = await anyio.to_thread.run_sync(self._generate, prompt)
        text, calls = parse_tool_calls(raw, id_prefix=f"call_{next(self._calls)}")
        return AgentTurn(
            text=text,
            tool_calls=calls,
            usage=Usage(input_tokens=prompt_tokens, output_tokens=new_tokens),
            stop_reason="tool_use" if calls else "end_turn",
        )


_OPTIONS = {"template": str, "max_new_tokens": int, "temperature": float, "device": str, "tools": str}


def from_spec(arg: str) -> HFAgent:
    """``PATH`` or ``PATH?template=compact&max_new_tokens=96`` (options: template, max_new_tokens, temperature,
    device, tools: ``a,b,c`` lists only those of the task's tools, as ``export --tool-names`` does)."""
    from coworkenv.harness.agents.registry import AgentSpecError

    path, _, query = arg.partition("?")
    options: dict[str, Any] = {}
    for part in filter(None, query.split("&")):
        key, sep, value = part.partition("=")
        key = key.strip().replace("-", "_")
        if key not in _OPTIONS or not sep:
            raise AgentSpecError(f"hf: unknown option {part!r}; use {', '.join(f'{k}=...' for k in _OPTIONS)}")
        try:
            options[key] = _OPTIONS[key](value.strip())
        except ValueError as exc:
            raise AgentSpecError(f"hf: option {key}={value!r} is not a valid {_OPTIONS[key].__name__}") from exc
    try:
        return HFAgent(path, **options)
    except ValueError as exc:
        raise AgentSpecError(str(exc)) from exc
