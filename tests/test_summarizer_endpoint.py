"""summarizers/endpoint.py on its own: which hosts are OpenAI's own (they get no placeholder key and take
``max_completion_tokens``), and an endpoint's address as it may be shown."""

from __future__ import annotations

from tcompact.summarizers.endpoint import host_of, hostname, is_official, safe_url


def test_only_openais_own_hosts_are_official():
    hosts = ("openai.com", "api.openai.com", "eu.api.openai.com", "notopenai.com", "api.openai.com.example.net")
    assert [is_official(h) for h in hosts] == [True, True, True, False, False]


def test_an_address_is_shown_with_its_host_and_port_never_its_user_info():
    assert host_of("http://me:hunter2@127.0.0.1:8080/v1") == "127.0.0.1:8080"
    assert host_of("https://api.openai.com/v1") == "api.openai.com"
    assert safe_url("https://me:hunter2@proxy.example:8443/v1") == "https://proxy.example:8443/v1"
    assert safe_url("me:hunter2@localhost/v1") == "localhost/v1"  # no scheme: still cut at the last @
    assert hostname("https://me:hunter2@Proxy.Example:8443/v1") == "proxy.example"
