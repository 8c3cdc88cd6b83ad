"""MultiStepConfig: defaults, validation, YAML (flat or nested), overrides, packaged copy."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kg_agent.exceptions import InvalidArgumentError
from kg_agent.multistep.config import DEFAULT_CONFIG_PATH, MultiStepConfig, load_config

ROOT = Path(__file__).resolve().parents[3]
CHECKOUT_CONFIG = ROOT / "configs" / "run_multistep.yaml"


def test_defaults() -> None:
    cfg = MultiStepConfig()
    assert (cfg.max_steps, cfg.top_k_each_step, cfg.top_k_final) == (3, 10, 10)
    assert (cfg.novelty_threshold, cfg.stop_no_new_steps) == (0.8, 1)
    assert (cfg.max_latency_s, cfg.max_cost_usd) == (10.0, 0.05)
    assert cfg.bridge_quality_gate == 0.55
    assert (cfg.bridge_top_evidence, cfg.bridge_max_queries) == (5, 4)
    assert (cfg.bridge_entity_boost, cfg.bridge_linked_boost) == (0.4, 0.5)
    assert (cfg.n_rewrites, cfg.rerank_top_k, cfg.relevance_threshold) == (3, 10, 0.2)


def test_packaged_copy_is_byte_identical_to_the_checkout_copy() -> None:
    assert DEFAULT_CONFIG_PATH.read_bytes() == CHECKOUT_CONFIG.read_bytes(), (
        "cp configs/run_multistep.yaml kg_agent/data/configs/run_multistep.yaml"
    )


def test_shipped_yaml_holds_every_key_at_its_default() -> None:
    assert MultiStepConfig.from_yaml(CHECKOUT_CONFIG) == MultiStepConfig()
    data = yaml.safe_load(CHECKOUT_CONFIG.read_text(encoding="utf-8"))
    assert set(data["multistep"]) == set(MultiStepConfig().to_dict())


def test_every_key_in_the_shipped_yaml_has_a_comment_above_it() -> None:
    lines = CHECKOUT_CONFIG.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        key = line.strip().split(":", 1)[0]
        if line.startswith("  ") and not line.strip().startswith("#") and ":" in line:
            assert lines[i - 1].strip().startswith("#"), f"{key} has no comment"


def test_load_config_without_path_reads_the_packaged_defaults() -> None:
    assert load_config() == MultiStepConfig()


def test_load_config_applies_overrides_and_skips_none(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("max_steps: 4\n", encoding="utf-8")
    cfg = load_config(str(path), top_k_final=7, novelty_threshold=None)
    assert (cfg.max_steps, cfg.top_k_final, cfg.novelty_threshold) == (4, 7, 0.8)


def test_flat_and_nested_yaml_read_the_same(tmp_path: Path) -> None:
    flat, nested = tmp_path / "flat.yaml", tmp_path / "nested.yaml"
    flat.write_text("max_steps: 5\nnovelty_threshold: 0.9\n", encoding="utf-8")
    nested.write_text("multistep:\n  max_steps: 5\n  novelty_threshold: 0.9\n", encoding="utf-8")
    assert MultiStepConfig.from_yaml(flat) == MultiStepConfig.from_yaml(nested)
    assert MultiStepConfig.from_yaml(flat).max_steps == 5


def test_empty_yaml_and_empty_section_give_defaults(tmp_path: Path) -> None:
    empty, section = tmp_path / "empty.yaml", tmp_path / "section.yaml"
    empty.write_text("# nothing\n", encoding="utf-8")
    section.write_text("multistep:\n", encoding="utf-8")
    assert MultiStepConfig.from_yaml(empty) == MultiStepConfig()
    assert MultiStepConfig.from_yaml(section) == MultiStepConfig()


def test_unknown_key_is_named(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("multistep:\n  max_step: 4\n", encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match=r"typo\.yaml.*unknown key 'max_step'"):
        MultiStepConfig.from_yaml(path)
    with pytest.raises(InvalidArgumentError, match="unknown key 'top_k'"):
        MultiStepConfig.from_mapping({"top_k": 3})
    with pytest.raises(InvalidArgumentError, match="unknown top-level key 'retrieval'"):
        MultiStepConfig.from_mapping({"multistep": {}, "retrieval": {}})


@pytest.mark.parametrize(
    "text",
    ["- 1\n- 2\n", "multistep: [1, 2]\n", "max_steps: [\n"],
    ids=["list", "section-not-mapping", "broken-yaml"],
)
def test_malformed_yaml_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match=r"bad\.yaml"):
        MultiStepConfig.from_yaml(path)


def test_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="cannot read config"):
        MultiStepConfig.from_yaml(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_steps", 0),
        ("max_steps", 2.5),
        ("max_steps", True),
        ("max_steps", "3"),
        ("top_k_final", 0),
        ("novelty_threshold", 0.0),
        ("novelty_threshold", 1.2),
        ("stop_no_new_steps", 0),
        ("max_latency_s", 0),
        ("max_latency_s", float("inf")),
        ("max_cost_usd", -0.01),
        ("bridge_quality_gate", 1.5),
        ("bridge_max_queries", -1),
        ("relevance_threshold", float("nan")),
    ],
)
def test_out_of_range_values_are_refused(key: str, value: object) -> None:
    with pytest.raises(InvalidArgumentError, match=key):
        MultiStepConfig.from_mapping({key: value})


def test_ints_are_accepted_for_float_fields_and_stored_as_floats() -> None:
    cfg = MultiStepConfig(max_latency_s=5, max_cost_usd=0)
    assert isinstance(cfg.max_latency_s, float) and cfg.max_latency_s == 5.0
    assert cfg.max_cost_usd == 0.0
    assert MultiStepConfig(bridge_max_queries=0, n_rewrites=0).bridge_max_queries == 0


def test_with_overrides_returns_a_new_validated_config() -> None:
    base = MultiStepConfig()
    changed = base.with_overrides(max_steps=2, novelty_threshold=0.9)
    assert (changed.max_steps, changed.novelty_threshold) == (2, 0.9)
    assert base.max_steps == 3
    with pytest.raises(InvalidArgumentError, match="unknown key 'steps'"):
        base.with_overrides(steps=2)
    with pytest.raises(InvalidArgumentError, match="max_steps"):
        base.with_overrides(max_steps=0)


def test_config_is_frozen() -> None:
    cfg = MultiStepConfig()
    with pytest.raises(AttributeError):
        cfg.max_steps = 5  # type: ignore[misc]


def test_to_dict_round_trips() -> None:
    cfg = MultiStepConfig(max_steps=4, relevance_threshold=0.3)
    assert MultiStepConfig.from_mapping(cfg.to_dict()) == cfg
    assert MultiStepConfig.from_mapping({"multistep": cfg.to_dict()}) == cfg
