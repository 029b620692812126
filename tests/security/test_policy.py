"""The deployment policy (rag_eval.llm.policy) as pure functions over settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag_eval.config import SESSION_KEY_PREFIX
from rag_eval.llm.policy import DeployPolicy, check, enforce, load_policy

SERVER = "https://api.example-llm.test/v1"
ATTACKER = "http://attacker.test:8080/v1"
ROOT = Path(__file__).resolve().parents[2]


def _policy(server_secret=True, **env):
    return load_policy(env.get, server_secret=server_secret)


def test_no_secret_means_local_freedom():
    policy = _policy(server_secret=False)
    assert not policy.locked and policy.show_paths
    values = {"base_url": ATTACKER, "api_key_env": "ANY_NAME", "model": "x", "concurrency": 64}
    assert check(policy, values) == [] and enforce(policy, values) == values


@pytest.mark.parametrize("env, locked", [
    ({}, True),
    ({"RAG_EVAL_DEPLOYMENT": "local"}, False),
    ({"RAG_EVAL_DEPLOYMENT": "public"}, True),
    ({"RAG_EVAL_DEPLOYMENT": "space"}, True),
])
def test_a_configured_secret_locks_unless_the_owner_says_local(env, locked):
    assert _policy(**env).locked is locked


def test_a_space_is_locked_even_without_a_secret():
    assert _policy(server_secret=False, SPACE_ID="owner/space").locked
    assert _policy(server_secret=False, RAG_EVAL_DEPLOYMENT="public").locked
    assert _policy(server_secret=False, RAG_EVAL_DEPLOYMENT="Space").reason == "RAG_EVAL_DEPLOYMENT=space"


def test_bad_deployment_value_is_an_error():
    with pytest.raises(ValueError, match="RAG_EVAL_DEPLOYMENT"):
        _policy(RAG_EVAL_DEPLOYMENT="open")


def test_the_server_refuses_a_bad_deployment_value_in_one_line():
    """What `streamlit run app.py` loads: a misspelt value stops it with one line naming the
    accepted values, before the warm-up, instead of a traceback."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAG_EVAL_DEPLOYMENT": "open", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", "import runpy; runpy.run_path('app.py')"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "rag-eval dashboard: RAG_EVAL_DEPLOYMENT must be 'public' (or 'space'), 'local', 'auto' or unset; got 'open'")


def test_allow_lists_come_from_the_environment():
    policy = _policy(RAG_EVAL_LLM_BASE_URL=SERVER + "/", RAG_EVAL_ALLOWED_BASE_URLS="default, http://127.0.0.1:1/v1",
                     RAG_EVAL_ALLOWED_MODELS="m1,m2", RAG_EVAL_LLM_API_KEY_ENV="GROQ_API_KEY",
                     RAG_EVAL_LLM_CONCURRENCY="8", RAG_EVAL_LLM_RPM="30")
    assert policy.base_urls == (SERVER, "", "http://127.0.0.1:1/v1")
    assert policy.models == ("m1", "m2") and policy.api_key_env == "GROQ_API_KEY"
    assert (policy.max_concurrency, policy.max_rpm) == (8, 30.0)
    assert not policy.visitor_keys and not policy.show_paths


@pytest.mark.parametrize("change, message", [
    ({"base_url": ATTACKER}, "endpoint"),
    ({"api_key_env": "HOME"}, "key variable"),
    ({"api_key_env": "QDRANT_API_KEY"}, "key variable"),
    ({"model": "gpt-expensive"}, "model must be one of"),
])
def test_visitors_cannot_redirect_the_server_key(change, message):
    policy = _policy(RAG_EVAL_LLM_BASE_URL=SERVER, RAG_EVAL_ALLOWED_MODELS="m1")
    values = {"base_url": SERVER, "api_key_env": "OPENAI_API_KEY", "model": "m1", **change}
    problems = check(policy, values)
    assert problems and message in " ".join(problems)
    fixed = enforce(policy, values)
    assert (fixed["base_url"], fixed["api_key_env"], fixed["model"]) == (SERVER, "OPENAI_API_KEY", "m1")
    assert check(policy, fixed) == []


def test_concurrency_and_rate_are_capped():
    fixed = enforce(_policy(), {"base_url": "", "concurrency": 64, "rate_limit_rpm": 100_000})
    assert fixed["concurrency"] == 4 and fixed["rate_limit_rpm"] == 60.0


def test_visitor_keys_only_when_allowed_and_only_to_visitor_endpoints():
    own = {"api_key_env": SESSION_KEY_PREFIX + "AB12", "base_url": "https://public.test/v1", "model": "any"}
    assert "does not take visitors' own keys" in check(_policy(), own)[0]
    policy = _policy(RAG_EVAL_ALLOW_VISITOR_KEYS="1", RAG_EVAL_VISITOR_BASE_URLS="https://public.test/v1")
    assert check(policy, own) == []  # any model: the visitor pays
    assert check(policy, {**own, "base_url": ATTACKER})
    assert enforce(policy, {**own, "base_url": ATTACKER})["base_url"] == "https://public.test/v1"
    # without the opt-in, a session name is replaced by the server's variable
    assert enforce(_policy(), own)["api_key_env"] == "OPENAI_API_KEY"


def test_defaults_are_unlocked():
    assert DeployPolicy().locked is False


# ---- issue 41: a link or a configuration file never routes a key the server holds
def test_a_link_proposes_but_does_not_route_the_server_key_unlocked():
    from rag_eval.llm.policy import held_by_link, url_settings

    policy = _policy(server_secret=False, RAG_EVAL_DEPLOYMENT="local")
    base = {"provider": "openai", "model": "m1", "base_url": SERVER, "api_key_env": "OPENAI_API_KEY", "concurrency": 4}
    link = {"base_url": ATTACKER, "api_key_env": "HOME", "model": "m2", "concurrency": 8}
    # where the key goes and what it is spent on are held; the rest applies
    assert url_settings(policy, base, link, server_key=True) == {"concurrency": 8}
    assert held_by_link(policy, base, link, server_key=True) == {"base_url": ATTACKER, "model": "m2"}
    # nothing of the server's goes anywhere: the link applies, but never its key variable
    assert url_settings(policy, base, link, server_key=False) == {"base_url": ATTACKER, "model": "m2", "concurrency": 8}
    assert held_by_link(policy, base, link, server_key=False) == {}
    # the link repeating what the environment configures proposes nothing
    same = {"base_url": SERVER + "/", "model": "m1", "provider": "openai"}
    assert url_settings(policy, base, same, server_key=True) == same and held_by_link(policy, base, same, True) == {}


def test_a_link_on_a_locked_deployment_proposes_nothing_and_names_no_key_variable():
    from rag_eval.llm.policy import held_by_link, url_settings

    policy = _policy(RAG_EVAL_LLM_BASE_URL=SERVER, RAG_EVAL_ALLOWED_MODELS="m1,m2")
    base = {"base_url": SERVER, "api_key_env": "OPENAI_API_KEY", "model": "m1"}
    # an allowed model applies, an endpoint outside the owner's list is dropped (not even proposed)
    assert url_settings(policy, base, {"base_url": ATTACKER, "model": "m2"}, server_key=True) == {"model": "m2"}
    assert url_settings(policy, base, {"api_key_env": "OPENAI_API_KEY"}, server_key=True) == {}
    assert held_by_link(policy, base, {"base_url": ATTACKER, "model": "m2"}, server_key=True) == {}


@pytest.mark.parametrize("configured, named, held", [
    (SERVER, {"judge.base_url": SERVER + "/", "generator.base_url": None}, {}),
    (SERVER, {"judge.base_url": ATTACKER}, {"judge.base_url": ATTACKER}),
    (None, {"judge.base_url": "https://api.openai.com/v1", "embedder.base_url": "default"}, {}),  # the provider's own
    (None, {"generator.base_url": ATTACKER + "/"}, {"generator.base_url": ATTACKER}),
    (SERVER, {"judge.base_url": "https://api.openai.com/v1"}, {"judge.base_url": "https://api.openai.com/v1"}),
])
def test_a_configuration_files_endpoint_other_than_the_environments_gets_no_key(configured, named, held):
    from rag_eval.llm.policy import file_endpoints

    assert file_endpoints(named, configured) == held


def test_the_key_is_read_for_an_endpoint_and_withheld_from_a_files(monkeypatch):
    from rag_eval.config import key_for, withhold_keys_from

    monkeypatch.setenv("POLICY_TEST_KEY", "test-key-not-real-policy-1234")
    url = "http://127.0.0.1:9/v1/policy-test"
    assert key_for("POLICY_TEST_KEY", url) == "test-key-not-real-policy-1234"
    try:
        withhold_keys_from(url + "/")
        assert key_for("POLICY_TEST_KEY", url) is None and key_for("POLICY_TEST_KEY", SERVER) is not None
    finally:
        withhold_keys_from(url, withhold=False)
    assert key_for("POLICY_TEST_KEY", url) == "test-key-not-real-policy-1234"


def test_only_this_servers_own_address_bar_is_a_reload():
    """A reload keeps the user's endpoint and model: the dashboard signs what it writes into
    the address bar; a crafted link (no signature, another's, or edited values) stays a proposal."""
    from rag_eval.ui.persist import SIGNATURE_PARAM, settings_from_params, settings_signature, signed_by_this_server

    written = {"base_url": SERVER, "model": "my-model"}
    params = {"base_url": SERVER, "model": "my-model", SIGNATURE_PARAM: settings_signature(written)}
    assert signed_by_this_server(params, settings_from_params(params))
    assert not signed_by_this_server({**params, SIGNATURE_PARAM: ""}, settings_from_params(params))
    forged = {**params, "base_url": ATTACKER}
    assert not signed_by_this_server(forged, settings_from_params(forged))
    assert not signed_by_this_server({**params, SIGNATURE_PARAM: "0" * 32}, settings_from_params(params))


def test_a_configuration_file_cannot_pick_another_secret_as_the_llm_key(monkeypatch, tmp_path):
    """A file that keeps the owner's endpoint but names another of the environment's secrets
    as the key variable (``PHOENIX_API_KEY``) gets no key from it; trusted on purpose, it does."""
    from rag_eval.config import key_for
    from rag_eval.rag.config import RagConfig, default_config

    monkeypatch.setenv("OPENAI_API_KEY", "owner-llm")
    monkeypatch.setenv("PHOENIX_API_KEY", "owner-phoenix")
    monkeypatch.setenv("RAG_EVAL_LLM_BASE_URL", SERVER)
    path = tmp_path / "pr.yaml"
    default_config("pr").with_changes(**{"judge.kind": "llm", "judge.base_url": SERVER,
                                         "judge.api_key_env": "PHOENIX_API_KEY"}).to_yaml(path)
    RagConfig.from_yaml(path)
    assert key_for("PHOENIX_API_KEY", SERVER) is None
    assert key_for("OPENAI_API_KEY", SERVER) == "owner-llm"  # the environment's own key still goes home
    RagConfig.from_yaml(path, trust_endpoints=True)
    assert key_for("PHOENIX_API_KEY", SERVER) == "owner-phoenix"
