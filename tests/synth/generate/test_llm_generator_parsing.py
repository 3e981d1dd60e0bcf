"""What the LLM generator reads from text: model specs (provider, model, endpoint), a reply's JSON object
whatever surrounds it, and a reviewer's verdict and notes."""

from __future__ import annotations

import pytest

from coworkenv.synth.generate.llm_clients import AnthropicChat, OpenAIChat, parse_model
from coworkenv.synth.generate.llm_generator import LLMGenerator, extract_json
from coworkenv.synth.generate.llm_review import ReviewNote, parse_review
from coworkenv.synth.providers import ProviderConfigError


def test_a_model_spec_names_the_provider_the_model_and_the_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert (parse_model("claude-sonnet-4-6").provider, parse_model("claude-sonnet-4-6").model) == (
        "anthropic",
        "claude-sonnet-4-6",
    )
    assert parse_model("anthropic:claude-haiku-4-5").model == "claude-haiku-4-5"
    spec = parse_model("openai:Qwen/Qwen3-8B", "http://127.0.0.1:8000/v1")
    assert (spec.provider, spec.model, spec.base_url) == ("openai", "Qwen/Qwen3-8B", "http://127.0.0.1:8000/v1")
    spec = parse_model("openai:qwen@http://gpu-box:8000/v1")
    assert (spec.model, spec.base_url) == ("qwen", "http://gpu-box:8000/v1")
    assert parse_model("openai:qwen@http://a/v1", "http://b/v1").base_url == "http://b/v1"  # --base-url wins
    assert parse_model("openai:gpt-4o").base_url is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9000/v1")
    assert parse_model("openai:qwen").base_url == "http://127.0.0.1:9000/v1"
    assert parse_model("claude-sonnet-4-6").base_url is None  # OPENAI_BASE_URL is for openai: only
    assert parse_model("openai:q@http://user:sk-secret-123@host/v1").label == "openai:q@http://[REDACTED]@host/v1"
    with pytest.raises(ProviderConfigError, match="no model named"):
        parse_model("openai:")


def test_the_generator_picks_its_client_and_catalog_by_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    local = LLMGenerator("openai:qwen", base_url="http://127.0.0.1:8000/v1")
    assert isinstance(local.chat, OpenAIChat) and local.catalog == "cell"
    assert local.chat.client.api_key == "EMPTY" and local.chat.client.max_retries == 0  # a local server needs no key
    claude = LLMGenerator("claude-sonnet-4-6")
    assert isinstance(claude.chat, AnthropicChat) and claude.catalog == "all"
    remote = LLMGenerator("openai:gpt-4o")
    assert isinstance(remote.chat, OpenAIChat)
    with pytest.raises(ProviderConfigError, match="set OPENAI_API_KEY, or point at a local server with --base-url"):
        _ = remote.chat.client
    from coworkenv.synth.generate.generator import make_generator

    made = make_generator("llm", model="openai:qwen", base_url="http://127.0.0.1:8000/v1", workers=2)
    assert isinstance(made, LLMGenerator) and made.spec.base_url == "http://127.0.0.1:8000/v1"


def test_json_is_found_whatever_surrounds_it() -> None:
    assert extract_json('x ```json\n{"a": 1}\n``` y') == {"a": 1}
    assert extract_json('```JSON\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Here:\n```\n{"a": 1}\n```\nDone.') == {"a": 1}
    assert extract_json('text {"a": [1, 2]} more') == {"a": [1, 2]}
    assert extract_json('<think>maybe {"a": 0}? no.</think>\n```json\n{"a": 2}\n```') == {"a": 2}
    assert extract_json('let me think {"x": 1}</think>{"a": 3}') == {"a": 3}  # the template opened <think>
    assert extract_json('```json\n{"a": [1, 2,],}\n```') == {"a": [1, 2]}  # trailing commas
    assert extract_json('The task {"b": {"c": 1}, "d": 2} uses {"$ref": "s1.id"} refs.') == {"b": {"c": 1}, "d": 2}
    assert extract_json('```json\n{"a": 1}\n```\nI also considered {"a": 0}.') == {"a": 1}
    assert extract_json('```json\n{"a": 1}\n(note: ids are made up)\n```') == {"a": 1}
    assert extract_json('```python\nx = {"no": 1}\n```\n```json\n{"a": 4}\n```') == {"a": 4}
    assert extract_json("no json here") == "the reply holds no JSON object"
    problem = extract_json('```json\n{"a": }\n```')
    assert isinstance(problem, str) and problem.startswith("the JSON does not parse")
    assert extract_json("```json\n[1, 2]\n```") == "the JSON is not an object"


def test_a_review_reply_gives_a_verdict_and_notes() -> None:
    accept = parse_review('```json\n{"verdict": "accept", "notes": []}\n```')
    assert accept == ("accept", [])
    verdict, notes = parse_review(
        '{"verdict": "Revise", "notes": [{"part": "Checks", "note": "Add wrong_values."}, "Vary the names.", {}]}'
    )
    assert verdict == "revise"
    assert notes == [ReviewNote("checks", "Add wrong_values."), ReviewNote("other", "Vary the names.")]
    assert notes[0].grading and not notes[1].grading
    assert parse_review('{"notes": ["Shorter request."]}')[0] == "revise"  # notes without a verdict ask for a change
    assert parse_review("Looks good.") == ("unreadable", [])
    assert parse_review('{"verdict": "maybe"}') == ("unreadable", [])
    many = '{"verdict": "revise", "notes": [' + ", ".join(f'"n{i}"' for i in range(20)) + "]}"
    assert len(parse_review(many)[1]) == 8
