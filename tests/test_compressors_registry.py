"""The compressors' registry and their settings: names declared once, chains, config files and --set
aimed at one compressor or all, every setting's bounds with the error a user sees, describe()."""

from __future__ import annotations

from dataclasses import replace

import orjson
import pytest
from conftest import SAMPLES
from pydantic import ValidationError
from typer.testing import CliRunner

from tcompact import compressors
from tcompact.app import app
from tcompact.compressors import REGISTRY, CompressionResult, Compressor, Settings, chain_settings, describe, get, names, parse_chain, parse_sets
from tcompact.errors import InputError, UsageError

NAMES = ["truncate", "offload", "micro", "mask", "current-round", "dialogue", "round-level", "full", "working-set"]


def test_names_are_the_registry_in_order_and_each_gives_its_compressor():
    assert names() == NAMES
    assert [cls.name for cls in REGISTRY] == NAMES
    for cls in REGISTRY:
        assert type(get(cls.name)) is cls
    assert [n for n in NAMES if get(n).uses_summarizer] == ["current-round", "dialogue", "round-level", "full",
                                                            "working-set"]


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(UsageError) as info:
        get("summary")
    assert str(info.value) == ("unknown compressor 'summary' — use one of: truncate, offload, micro, mask, "
                               "current-round, dialogue, round-level, full, working-set")
    assert info.value.exit_code == 2


@pytest.mark.parametrize(("spec", "chain"), [
    ("full", ["full"]), ("truncate,dialogue", ["truncate", "dialogue"]), (" micro , full ", ["micro", "full"]),
    ("truncate,truncate", ["truncate", "truncate"]),
])
def test_a_chain_is_its_compressors_in_order(spec, chain):
    assert [c.name for c in parse_chain(spec)] == chain


@pytest.mark.parametrize("spec", ["", "  ", "truncate,", ",full", "truncate,,full"])
def test_a_chain_with_an_empty_name_is_refused(spec):
    with pytest.raises(UsageError) as info:
        parse_chain(spec)
    assert str(info.value) == f"bad compressor chain {spec!r} — name one or more compressors: -c truncate,dialogue"


def test_a_chain_naming_an_unknown_compressor_is_refused():
    with pytest.raises(UsageError, match=r"^unknown compressor 'dialog' — use one of: truncate,"):
        parse_chain("truncate,dialog")


# ---- settings of a chain ------------------------------------------------------------------------


def test_defaults_when_nothing_is_set():
    truncate, full = chain_settings(parse_chain("truncate,full"))
    assert (truncate.max_chars, truncate.max_lines, truncate.max_tokens, truncate.head_ratio) == (10240, 256, None, 0.4)
    assert (full.trigger_context_ratio, full.min_target_context_ratio, full.user_messages_max_tokens) == (0.8, 0.1,
                                                                                                         20000)


def test_an_undotted_set_reaches_every_compressor_that_has_the_setting():
    current, dialogue, truncate = chain_settings(parse_chain("current-round,dialogue,truncate"),
                                                 overrides=parse_sets(["trigger_context_ratio=0.7", "head_ratio=0.25"]))
    assert (current.trigger_context_ratio, dialogue.trigger_context_ratio, truncate.head_ratio) == (0.7, 0.7, 0.25)


def test_a_dotted_set_reaches_only_its_compressor_and_the_last_set_wins():
    dialogue, full = chain_settings(parse_chain("dialogue,full"),
                                    overrides=parse_sets(["summary_max_tokens=900", "full.summary_max_tokens=1200",
                                                          "dialogue.summary_ratio=0.2"]))
    assert (dialogue.summary_max_tokens, full.summary_max_tokens) == (900, 1200)
    assert (dialogue.summary_ratio, full.summary_ratio) == (0.2, 0.13)


@pytest.mark.parametrize(("raw", "value"), [
    ("tools=[]", []), ('tools=["grep","Bash"]', ["grep", "Bash"]), ("tools=grep", None),
    ("max_tokens=null", None), ("max_tokens=4096", 4096),
])
def test_set_values_are_json_or_else_text(raw, value):
    if raw == "tools=grep":  # not JSON: the text itself, which a list setting refuses
        with pytest.raises(UsageError, match=r"^truncate setting tools must be a list, not 'grep'"):
            chain_settings(parse_chain("truncate"), overrides=parse_sets([raw]))
        return
    (settings,) = chain_settings(parse_chain("truncate"), overrides=parse_sets([raw]))
    assert getattr(settings, raw.split("=")[0]) == value


@pytest.mark.parametrize(("sets", "message"), [
    (["max_chars"], "bad --set 'max_chars' — write --set key=value or --set compressor.key=value"),
    (["=3"], "bad --set '=3' — write --set key=value or --set compressor.key=value"),
    (["colour=red"], "no compressor in the chain has a setting 'colour' — run `tcompact compressors` to see every "
                     "setting"),
    (["full.max_chars=300"], "--set 'full.max_chars=300' names 'full', which is not in the chain — the chain is: "
                             "truncate, micro"),
    (["truncate.colour=red"], "truncate setting colour is not known — settings of truncate: "
                              "max_chars, max_lines, max_tokens, head_ratio, keep_recent, tools"),
    (["keep_recent_per_tool=-1"], "micro setting keep_recent_per_tool must be 0 or more, not -1 — "
                                  "settings of micro: keep_recent_per_tool, tools, min_tokens, trigger_threshold"),
])
def test_bad_sets_are_one_clear_error(sets, message):
    with pytest.raises(UsageError) as info:
        chain_settings(parse_chain("truncate,micro"), overrides=parse_sets(sets))
    assert str(info.value) == message


def test_a_toml_config_has_a_table_per_compressor_and_sets_override_it(tmp_path):
    config = tmp_path / "tcompact.toml"
    config.write_text("[truncate]\nmax_lines = 64\nhead_ratio = 0.5\n\n[dialogue]\ntrigger_context_ratio = 0.6\n")
    truncate, dialogue = chain_settings(parse_chain("truncate,dialogue"), overrides=parse_sets(["truncate.max_lines=32"]),
                                        config=config)
    assert (truncate.max_lines, truncate.head_ratio, dialogue.trigger_context_ratio) == (32, 0.5, 0.6)


def test_a_json_config_is_read_as_json(tmp_path):
    config = tmp_path / "settings.json"
    config.write_text('{"micro": {"keep_recent_per_tool": 1, "tools": ["Grep"]}}')
    (micro,) = chain_settings(parse_chain("micro"), config=config)
    assert (micro.keep_recent_per_tool, micro.tools) == (1, ["Grep"])


@pytest.mark.parametrize(("name", "text", "message"), [
    ("c.toml", "[micro]\nkeep_recent_per_tool = 1\n",
     "{path}: the config has settings for 'micro', which is not in the chain — the chain is: truncate"),
    ("c.toml", "[truncate\n", "{path}: the config is not valid TOML: Expected ']' at the end of a table declaration "
                              "(at line 1, column 10) — fix the file"),
    ("c.json", "{nope", "{path}: the config is not valid JSON: unexpected character, expected a string key: line 1 "
                       "column 2 (char 1) — fix the file"),
    ("c.toml", "max_lines = 3\n", "{path}: the config must hold one table of settings per compressor — e.g. "
                                  "[dialogue]\\ntrigger_context_ratio = 0.7"),
    ("c.json", "[1, 2]", "{path}: the config must hold one table of settings per compressor — e.g. "
                         "[dialogue]\\ntrigger_context_ratio = 0.7"),
])
def test_bad_config_files_are_one_clear_error(tmp_path, name, text, message):
    config = tmp_path / name
    config.write_text(text)
    with pytest.raises((InputError, UsageError)) as info:
        chain_settings(parse_chain("truncate"), config=config)
    assert str(info.value) == message.format(path=config)
    assert info.value.path == str(config)


def test_a_missing_config_file_says_it_cannot_be_read(tmp_path):
    with pytest.raises(InputError) as info:
        chain_settings(parse_chain("truncate"), config=tmp_path / "none.toml")
    assert str(info.value) == f"{tmp_path / 'none.toml'}: cannot read the config: No such file or directory — check " \
                              "the path"


# ---- every setting's bounds ----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "values", "message"), [
    ("truncate", {"max_chars": 255}, "Input should be greater than or equal to 256"),
    ("truncate", {"max_lines": 7}, "Input should be greater than or equal to 8"),
    ("truncate", {"max_tokens": 63}, "Input should be greater than or equal to 64"),
    ("truncate", {"head_ratio": 0}, "Input should be greater than 0"),
    ("truncate", {"head_ratio": 1}, "Input should be less than 1"),
    ("offload", {"large_message_tokens": 0}, "Input should be greater than or equal to 1"),
    ("offload", {"preview_chars": 100_001}, "Input should be less than or equal to 100000"),
    ("offload", {"roles": ["robot", "tool", "x"]}, "Value error, unknown role(s) ['robot', 'x']; use user, "
                                                   "assistant or tool"),
    ("micro", {"min_tokens": -1}, "Input should be greater than or equal to 0"),
    ("dialogue", {"trigger_context_ratio": 1}, "Input should be less than 1"),
    ("dialogue", {"min_target_context_ratio": -0.1}, "Input should be greater than or equal to 0"),
    ("current-round", {"summary_max_tokens": 31}, "Input should be greater than or equal to 32"),
    ("full", {"summary_ratio": 0}, "Input should be greater than 0"),
    ("full", {"summary_ratio": 1.5}, "Input should be less than or equal to 1"),
    ("full", {"user_messages_max_tokens": -1}, "Input should be greater than or equal to 0"),
    ("round-level", {"truncated_marker": ""}, "String should have at least 1 character"),
    ("round-level", {"truncate_head_ratio": 1.0}, "Input should be less than 1"),
    ("round-level", {"trigger_context_ratio": 1.01}, "Input should be less than or equal to 1"),
    ("round-level", {"target_total_tokens": 230_000}, "Value error, target_total_tokens (230000) must be below "
                                                      "trigger_total_tokens (230000)"),
    ("round-level", {"colour": "red"}, "Extra inputs are not permitted"),
])
def test_settings_bounds(name, values, message):
    with pytest.raises(ValidationError) as info:
        get(name).settings_model(**values)
    assert info.value.errors()[0]["msg"] == message


def test_settings_are_frozen():
    settings = get("truncate").settings_model()
    with pytest.raises(ValidationError, match="Instance is frozen"):
        settings.max_chars = 300


# ---- describe and the span preview -------------------------------------------------------------


def test_describe_lists_every_setting_with_type_default_and_description():
    described = describe()
    assert [d["name"] for d in described] == NAMES
    truncate = described[0]
    assert truncate["uses_summarizer"] is False
    assert [(s["name"], s["type"], s["default"]) for s in truncate["settings"]] == [
        ("max_chars", "int", 10240), ("max_lines", "int", 256), ("max_tokens", "int | None", None),
        ("head_ratio", "float", 0.4), ("keep_recent", "int", 0), ("tools", "list", [])]
    assert truncate["settings"][0]["description"] == "Characters kept at most (10 KiB)."
    assert all(s["description"] for d in described for s in d["settings"])  # every setting says what it is
    round_level = {s["name"]: s["default"] for s in described[6]["settings"]}
    assert (round_level["trigger_total_tokens"], round_level["target_total_tokens"],
            round_level["compression_marker"]) == (230_000, 160_000, "[ROUND_LEVEL_MEMORY_BLOCK]")


@pytest.mark.parametrize(("name", "setting"), [("current-round", "keep_recent_messages"),
                                                ("round-level", "keep_recent_messages"),
                                                ("full", "keep_recent_messages"), ("dialogue", None),
                                                ("truncate", None), ("offload", None), ("micro", None)])
def test_the_preview_keeps_the_raw_tail_its_compressor_names(name, setting):
    compressor = get(name)
    assert compressor.keep_recent_setting == setting
    assert compressor.preview_settings() == compressor.settings_model()
    if setting is None:
        with pytest.raises(UsageError) as info:
            compressor.preview_settings(3)
        assert str(info.value) == (f"--keep-recent does not apply to {name}, whose span keeps no number of recent "
                                   "messages — leave --keep-recent out")
    else:
        assert getattr(compressor.preview_settings(3), setting) == 3


class _BlankSettings(Settings):
    """The tiny compressor's settings: how many of the newest tool outputs stay."""

    keep: int = 1


class Blank(Compressor):
    """A new compressor as a new module would define it: every tool output but the newest ``keep`` blanked."""

    name = "blank"
    description = "blank every tool output but the newest"
    settings_model = _BlankSettings

    def compress(self, messages, settings, ctx):
        outputs = [i for i, m in enumerate(messages) if m.role == "tool"]
        blanked = set(outputs[:len(outputs) - settings.keep])
        out = tuple(replace(m, content="[blank]") if i in blanked else m for i, m in enumerate(messages))
        return CompressionResult(processor=self.name, messages=out, applied=bool(blanked),
                                 reason=f"{len(blanked)} outputs blanked", tokens_before=ctx.counter.total(messages),
                                 tokens_after=ctx.counter.total(out))


def test_a_new_compressor_is_one_class_and_one_registry_entry(monkeypatch, tmp_path):
    monkeypatch.setattr(compressors, "REGISTRY", (*compressors.REGISTRY, Blank))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["compact", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "blank", "--set",
                                      "keep=2", "--now", "-o", str(out), "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    report = orjson.loads(result.stdout)
    assert (report["status"], [s["processor"] for s in report["stages"]]) == ("compacted", ["blank"])
    written = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    tools = [m["content"] for m in written if m["role"] == "tool"]
    assert tools[:-2] == ["[blank]"] * (len(tools) - 2) and "[blank]" not in tools[-2:] and len(tools) > 2
    listed = CliRunner().invoke(app, ["compressors"])
    assert "blank" in listed.stdout and "blank every tool output but the newest" in listed.stdout
    monkeypatch.setattr(compressors, "REGISTRY", compressors.REGISTRY[:-1])
    gone = CliRunner().invoke(app, ["compact", str(SAMPLES / "chat_tool_session.jsonl"), "-c", "blank", "--now"])
    assert gone.exit_code == 2 and "unknown compressor 'blank'" in gone.stderr
