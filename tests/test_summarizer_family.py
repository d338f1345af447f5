"""The summariser family (summarizers/base.py, summarizers/__init__.py): a backend is one class with its
capabilities and a pydantic settings model, registered by one entry of ``REGISTRY``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest
from conftest import SAMPLES
from typer.testing import CliRunner

from tcompact import summarizers
from tcompact.app import app
from tcompact.compaction import CompactOptions
from tcompact.errors import UsageError
from tcompact.summarizers.base import BackendSettings, Summarizer, SummaryRequest, SummaryResponse, model_window
from tcompact.summarizers.openai_compat import OpenAISettings, OpenAISummarizer
from tcompact.summarizers.recorded import ReplaySettings

CHAT = SAMPLES / "chat_tool_session.jsonl"


class EchoSettings(BackendSettings):
    """The tiny backend has no options."""


class Echo(Summarizer):
    """A new backend as a new module would define it: it names the files the summarised messages touched."""

    name = "echo"
    description = "a test backend"
    settings_model = EchoSettings
    built: list[object] = []

    @classmethod
    def build(cls, settings, *, counter, progress=None):
        cls.built.append(settings)
        return cls()

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        return SummaryResponse(text=f"<state_snapshot>\n1. Active Task\necho of {len(request.body)} messages: export "
                               "fix in rosterkit/export.py and tests/test_export.py\n</state_snapshot>", model="echo")


@pytest.fixture
def registered(monkeypatch):
    """``Echo`` registered the way a new module is: one more entry of the registry tuple."""
    monkeypatch.setattr(summarizers, "REGISTRY", (*summarizers.REGISTRY, Echo))
    Echo.built.clear()


def test_a_new_backend_is_one_class_and_one_registry_entry(registered, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["compact", str(CHAT), "-c", "full", "--now", "--summarizer", "echo",
                                      "-o", "out.jsonl", "--dump-dir", "dumps", "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    report = orjson.loads(result.stdout)
    assert (report["status"], report["summarizer"]["name"], report["summarizer"]["calls"]) == ("compacted", "echo", 1)
    assert Echo.built == [EchoSettings()]
    (dump,) = [orjson.loads(p.read_bytes()) for p in (tmp_path / "dumps").iterdir()]
    assert (dump["request"]["summarizer"], dump["response"]["model"]) == ("echo", "echo")
    assert dump["response"]["raw_content"] == ("<state_snapshot>\n1. Active Task\necho of 32 messages: export fix in "
                                               "rosterkit/export.py and tests/test_export.py\n</state_snapshot>")
    written = (tmp_path / "out.jsonl").read_text()
    assert written.count("echo of 32 messages") == 1


def test_without_its_entry_the_backend_is_unknown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["compact", str(CHAT), "-c", "full", "--now", "--summarizer", "echo"])
    assert (result.exit_code, result.stderr) == (2, "Error: unknown summariser 'echo' — use extractive, openai or "
                                                    "replay\n")


def test_check_gives_the_chosen_backends_typed_settings():
    options = CompactOptions(summarizer="openai", model="m", base_url="http://127.0.0.1:9/v1", api_key="k",
                             run=summarizers.RunSettings(timeout=5, summarizer_window=4096, request_mode="serialized"))
    settings = summarizers.check(options, used=True)
    assert settings == OpenAISettings(model="m", request_mode="serialized", base_url="http://127.0.0.1:9/v1",
                                      summarizer_window=4096, api_key="k", timeout=5.0)
    assert "k" not in repr(settings)  # the key is never shown
    assert summarizers.check(CompactOptions(summarizer="replay", replay_dir=Path("d")), used=True) == \
        ReplaySettings(replay_dir=Path("d"))
    assert options.summarizer_settings == settings  # what the settings value holds: the one call, made when it was
    # not called by the chain: nothing is needed, and there are no settings to build from
    unused = CompactOptions(summarizer="openai", chain="truncate")
    assert (summarizers.check(unused, used=False), unused.summarizer_settings) == (None, None)


def test_check_names_another_backends_own_options_in_their_order():
    given = dict(base_url="http://x/v1", run=summarizers.RunSettings(summarizer_window=9, request_mode="serialized"))
    assert OpenAISettings.own_given(SimpleNamespace(model=None, api_key=None, **given)) == [
        "--request-mode", "--base-url", "--summarizer-window"]
    with pytest.raises(UsageError) as info:  # refused when the settings value is made
        CompactOptions(**given)
    assert (info.value.what, info.value.hint) == (
        "--request-mode is an option of the openai summariser, and the summariser is extractive",
        "add --summarizer openai, or leave --request-mode out")
    with pytest.raises(UsageError) as info:  # an empty model is no model
        CompactOptions(summarizer="openai", model="")
    assert (info.value.what, info.value.hint) == ("--summarizer openai needs --model",
                                                  "e.g. --model gpt-4o-mini or your vLLM model")


def test_the_capabilities_are_declared_by_each_backend():
    assert [(b.name, b.calls_model, b.reruns, b.reads_prompt) for b in summarizers.REGISTRY] == [
        ("extractive", False, True, False), ("openai", True, True, True), ("replay", False, False, False)]
    assert [summarizers.calls_model(n) for n in summarizers.names()] == [False, True, False]
    assert (OpenAISummarizer.narrates, OpenAISummarizer.trusted) == (True, False)


def test_build_makes_the_backend_its_settings_belong_to():
    built = summarizers.build(OpenAISettings(model="m", base_url="http://127.0.0.1:9/v1", request_mode="serialized",
                                             summarizer_window=512, timeout=3), counter=None)
    assert isinstance(built, OpenAISummarizer)
    assert (built.model, built.mode, built.timeout, built.host) == ("m", "serialized", 3, "127.0.0.1:9")
    assert built.context_window() is not None and built.context_window().tokens == 512
    built.close()


def test_a_settings_model_shared_by_two_backends_is_an_error():
    class Twin(Echo):
        name = "twin"

    with pytest.raises(RuntimeError) as info:
        summarizers.by_settings((Echo, Twin))
    assert str(info.value) == "two summarisers share a settings model"


def test_the_base_class_defaults_say_nothing_and_change_nothing():
    echo = Echo()
    request = SummaryRequest(processor="full", contract="full", prompt="p", messages=(), body=range(0),
                             target_tokens=10)
    assert (echo.context_window(), echo.prepare(request), echo.trusted, echo.narrates) == (None, request, False,
                                                                                            False)
    assert model_window(None) is None
    with pytest.raises(NotImplementedError):
        Summarizer.build.__func__(type("Bare", (Summarizer,), {"name": "bare", "summarize": None}), EchoSettings(),
                                  counter=None)
