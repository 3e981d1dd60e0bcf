"""The JSON object of a model's reply, whatever is around it.

Models wrap their JSON in fences (```json, ```JSON, bare ```), put prose before and after it, think aloud
first (``<think>…</think>``, as Qwen3 and other open reasoning models do when the server has no reasoning
parser), and open models now and then leave a trailing comma. :func:`extract_json` finds the object in all
of these, or says in one line what is wrong.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_DECODER = json.JSONDecoder()


def _without_thinking(text: str) -> str:
    text = _THINK.sub("", text)
    closing = text.lower().rfind("</think>")  # an opening tag the server's template already sent
    return text[closing + len("</think>") :] if closing >= 0 else text


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        repaired = _TRAILING_COMMA.sub(r"\1", text)
        if repaired == text:
            raise
        return json.loads(repaired)


def _objects(text: str) -> list[tuple[int, dict[str, Any]]]:
    """Every JSON object that starts at a ``{`` of ``text`` and is not inside an earlier one, with its length."""
    found: list[tuple[int, dict[str, Any]]] = []
    i = text.find("{")
    while i >= 0:
        try:
            value, end = _DECODER.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            found.append((end - i, value))
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)
    return found


def extract_json(text: str) -> dict[str, Any] | str:
    """The JSON object of a reply (the last fenced block that holds one, else the largest object in the text),
    or a one-line description of what went wrong."""
    text = _without_thinking(text)
    problem = ""
    for language, body in reversed(_FENCE.findall(text)):
        if language.lower() not in ("", "json", "jsonc", "json5") or (not language and "{" not in body):
            continue
        try:
            value = _loads(body.strip())
        except json.JSONDecodeError as exc:
            inside = _objects(body)  # an object followed by a remark inside the fence
            if inside:
                return max(inside, key=lambda pair: pair[0])[1]
            problem = problem or f"the JSON does not parse: {exc.msg} at line {exc.lineno} column {exc.colno}"
            continue
        if isinstance(value, dict):
            return value
        problem = problem or "the JSON is not an object"
    if problem:  # a fenced block was meant to be the answer: say what is wrong with it
        return problem
    objects = _objects(text)
    if objects:
        return max(objects, key=lambda pair: pair[0])[1]
    if "{" not in text:
        return "the reply holds no JSON object"
    outer = text[text.index("{") : text.rindex("}") + 1] if "}" in text else text[text.index("{") :]
    try:
        value = _loads(outer)
    except json.JSONDecodeError as exc:
        return f"the JSON does not parse: {exc.msg} at line {exc.lineno} column {exc.colno}"
    return value if isinstance(value, dict) else "the JSON is not an object"
