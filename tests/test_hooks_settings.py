"""tcompact's entries in an agent's settings text: merged in, found, and taken out leaving every other byte.

The settings files here already hold other hooks and settings, in the styles people write them
(two spaces, tabs, CRLF, a byte-order mark, one line, empty containers); install must add only
tcompact's matcher groups in the file's own style, a second install must change nothing, and
uninstall must give back exactly the text install started from.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcompact.errors import InputError
from tcompact.hooks.agents import agent, command_kind, hook_command, statusline_command
from tcompact.hooks.settings import EMPTY_DOCUMENT, install, installed, uninstall

CLAUDE, CODEX = agent("claude"), agent("codex")
PY = "/opt/venv/bin/python"
COMMANDS = {run: f"{PY} -m tcompact hook {run} --agent claude" for run in ("pre-compact", "session-start",
                                                                          "prompt-submit")}
CODEX_COMMANDS = {run: f"{PY} -m tcompact hook {run} --agent codex" for run in ("pre-compact", "session-start")}
USERS = """{
  "model": "opus",
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [{"type": "command", "command": "echo hello"}]
      }
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  },
  "env": {"A": "1"}
}
"""


def test_install_appends_tcompacts_groups_in_the_files_own_style():
    plan = install(USERS, CLAUDE, COMMANDS)
    assert plan.text == """{
  "model": "opus",
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [{"type": "command", "command": "echo hello"}]
      },
      {
        "matcher": "compact",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/venv/bin/python -m tcompact hook session-start --agent claude"
          }
        ]
      }
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PreCompact": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "/opt/venv/bin/python -m tcompact hook pre-compact --agent claude"
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/opt/venv/bin/python -m tcompact hook prompt-submit --agent claude"
          }
        ]
      }
    ]
  },
  "env": {"A": "1"}
}
"""
    assert plan.done == ["added PreCompact", "added SessionStart", "added UserPromptSubmit"]
    assert plan.kept_empty == {} and plan.replaced == {}
    assert installed(plan.text) == {"hooks": [
        {"event": "SessionStart", "matcher": "compact", "run": "session-start", "command": COMMANDS["session-start"]},
        {"event": "PreCompact", "matcher": "", "run": "pre-compact", "command": COMMANDS["pre-compact"]},
        {"event": "UserPromptSubmit", "matcher": None, "run": "prompt-submit", "command": COMMANDS["prompt-submit"]}],
        "other_hooks": 2, "statusline": None}


def test_a_second_install_changes_nothing_and_uninstall_gives_back_the_text():
    plan = install(USERS, CLAUDE, COMMANDS)
    again = install(plan.text, CLAUDE, COMMANDS)
    assert (again.text, again.done) == (plan.text, [])
    back, removed = uninstall(plan.text, kept_empty=plan.kept_empty)
    assert back == USERS
    assert removed == ["SessionStart", "PreCompact", "UserPromptSubmit"]


def test_another_python_updates_the_command_in_place():
    plan = install(USERS, CLAUDE, COMMANDS)
    moved = {run: command.replace("/opt/venv", "/home/me/.venv") for run, command in COMMANDS.items()}
    updated = install(plan.text, CLAUDE, moved)
    assert updated.text == plan.text.replace("/opt/venv", "/home/me/.venv")
    assert updated.done == ["updated PreCompact", "updated SessionStart", "updated UserPromptSubmit"]


@pytest.mark.parametrize("text", [
    '{\r\n\t"hooks": {\r\n\t\t"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]\r\n\t}\r\n}\r\n',
    '\ufeff{"theme":"dark","hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}',
    '{"theme": "dark"}',
    '{\n    "hooks": {},\n    "x": [ ]\n}\n',
    '{\n  "hooks": {\n    "PreCompact": [ ],\n    "SessionStart": []\n  }\n}',
    '{ }',
    EMPTY_DOCUMENT,
])
def test_every_style_comes_back_byte_for_byte(text):
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    plan = install(text.removeprefix(bom), CLAUDE, COMMANDS, statusline=statusline_command())
    assert json.loads(plan.text)["statusLine"] == {"type": "command", "command": statusline_command()}
    assert {h["run"] for h in installed(plan.text)["hooks"]} == set(COMMANDS)
    back, _ = uninstall(plan.text, kept_empty=plan.kept_empty, replaced=plan.replaced)
    assert bom + back == text


def test_the_files_style_is_kept_tabs_crlf_and_one_line():
    tabs = install('{\r\n\t"a": 1\r\n}\r\n', CODEX, CODEX_COMMANDS).text
    assert tabs.startswith('{\r\n\t"a": 1,\r\n\t"hooks": {\r\n\t\t"PreCompact": [\r\n\t\t\t{\r\n\t\t\t\t"hooks": [')
    assert "\n" not in tabs.replace("\r\n", "")
    one_line = install('{"a":1}', CODEX, CODEX_COMMANDS).text
    assert one_line == ('{"a":1,"hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"%s"}]}],'
                        '"SessionStart":[{"matcher":"compact","hooks":[{"type":"command","command":"%s"}]}]}}'
                        % (CODEX_COMMANDS["pre-compact"], CODEX_COMMANDS["session-start"]))


def test_empty_containers_of_the_user_stay_and_ones_install_made_go():
    text = '{\n  "hooks": {\n    "PreCompact": [ ]\n  }\n}\n'
    plan = install(text, CODEX, CODEX_COMMANDS)
    assert plan.kept_empty == {"hooks/PreCompact": " "}
    assert uninstall(plan.text, kept_empty=plan.kept_empty)[0] == text
    # without the record (the state folder gone) a container that only tcompact's entries filled goes
    assert uninstall(plan.text)[0] == "{}\n"


def test_a_group_of_the_users_loses_only_tcompacts_hook():
    mine = {"type": "command", "command": COMMANDS["pre-compact"]}
    text = json.dumps({"hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": "backup.sh"}, mine]}]}},
                      indent=2)
    back, removed = uninstall(text)
    assert json.loads(back) == {"hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": "backup.sh"}]}]}}
    assert removed == ["PreCompact"]
    assert install(text, CLAUDE, COMMANDS).done == ["added SessionStart", "added UserPromptSubmit"]


def test_a_statusline_of_the_users_is_replaced_only_when_forced_and_put_back():
    text = '{\n  "statusLine": {"type": "command", "command": "~/bin/line.sh", "padding": 0}\n}\n'
    with pytest.raises(InputError, match=r"statusLine is set already .*pass --force to replace it"):
        install(text, CLAUDE, COMMANDS, statusline=statusline_command())
    plan = install(text, CLAUDE, COMMANDS, statusline=statusline_command(), force=True)
    assert plan.replaced == {"statusLine": '{"type": "command", "command": "~/bin/line.sh", "padding": 0}'}
    assert json.loads(plan.text)["statusLine"]["command"] == statusline_command()
    assert uninstall(plan.text, kept_empty=plan.kept_empty, replaced=plan.replaced)[0] == text


@pytest.mark.parametrize(("text", "message"), [
    ('{\n  "hooks": {\n    "Stop": [\n  }\n}\n', r"^settings\.json:4: not valid JSON"),
    ('{"hooks": []}', r"`hooks` is not a JSON object"),
    ('{"hooks": {"PreCompact": {}}}', r"`hooks\.PreCompact` is not a JSON array"),
    ("[]", r"the settings are not a JSON object"),
])
def test_settings_it_cannot_merge_into_are_refused_with_where(text, message):
    with pytest.raises(InputError, match=message):
        install(text, CLAUDE, COMMANDS, path="settings.json")


def test_commands_are_recognised_as_tcompacts_by_what_they_run():
    assert command_kind(hook_command(CLAUDE, "session-start")) == "session-start"
    assert command_kind("'/my venv/bin/python' -m tcompact hook pre-compact --agent codex") == "pre-compact"
    assert command_kind("/usr/local/bin/tcompact statusline") == "statusline"
    for other in ("echo tcompact hook session-start", "tcompact-notify hook pre-compact", "python -m tcompactx hook x",
                  "python -m tcompact hook unknown", "'unbalanced", None, 3):
        assert command_kind(other) is None, other


_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                    max_size=3), max_leaves=8)
_HOOKS = st.dictionaries(st.sampled_from(["SessionStart", "Stop", "PreCompact", "Notification"]), st.lists(
    st.fixed_dictionaries({"matcher": st.text(max_size=4), "hooks": st.lists(st.fixed_dictionaries(
        {"type": st.just("command"), "command": st.sampled_from(["true", "echo x"])}), max_size=2)}), max_size=2))


@settings(max_examples=150, deadline=None)
@given(other=st.dictionaries(st.text(max_size=6).filter(lambda k: k not in ("hooks", "statusLine")), _VALUES,
                             max_size=4),
       hooks=st.none() | _HOOKS, indent=st.sampled_from([None, 2, 4, "\t"]), compact=st.booleans())
def test_install_then_uninstall_is_the_identity_on_any_settings(other, hooks, indent, compact):
    document = {**other, **({"hooks": hooks} if hooks is not None else {})}
    text = json.dumps(document, indent=indent, separators=(",", ":") if compact else None, ensure_ascii=False)
    plan = install(text, CLAUDE, COMMANDS, statusline=statusline_command())
    merged = json.loads(plan.text)
    for event, run in (("PreCompact", "pre-compact"), ("SessionStart", "session-start"),
                       ("UserPromptSubmit", "prompt-submit")):
        assert merged["hooks"][event][:len((hooks or {}).get(event, []))] == (hooks or {}).get(event, [])
        assert merged["hooks"][event][-1]["hooks"] == [{"type": "command", "command": COMMANDS[run]}]
    assert {k: v for k, v in merged.items() if k not in ("hooks", "statusLine")} == other
    assert install(plan.text, CLAUDE, COMMANDS, statusline=statusline_command()).text == plan.text
    assert uninstall(plan.text, kept_empty=plan.kept_empty, replaced=plan.replaced)[0] == text
