"""The registry: variants' audit instances (parameters a planted bug is built with by default)."""

import pytest

import algorithms
from algorithms.registry import register


def _factory(alpha: float = 1.0, n: int = 10, variant: str = "correct"):
    return {"alpha": alpha, "n": n, "variant": variant}


def test_instance_applies_only_to_its_variant_and_yields_to_explicit_params():
    register("test-instance", kind="learner", paper="p", section="s", summary="x",
             variants={"bug": "a bug"}, instances={"bug": {"alpha": 0.1}})(_factory)
    try:
        assert algorithms.get("test-instance")["alpha"] == 1.0
        assert algorithms.get("test-instance", variant="bug") == {"alpha": 0.1, "n": 10, "variant": "bug"}
        assert algorithms.get("test-instance", variant="bug", alpha=0.3)["alpha"] == 0.3
        assert algorithms.info("test-instance")["instances"] == {"bug": {"alpha": 0.1}}
    finally:
        algorithms.registry._REGISTRY.pop("test-instance")


@pytest.mark.parametrize("instances, msg", [({"nope": {"alpha": 0.1}}, "unknown variant"),
                                            ({"bug": {"beta": 1}}, "invalid parameter"),
                                            ({"bug": {"variant": "correct"}}, "invalid parameter")])
def test_bad_instances_rejected_at_registration(instances, msg):
    with pytest.raises(ValueError, match=msg):
        register("test-bad-instance", kind="learner", paper="p", section="s", summary="x",
                 variants={"bug": "a bug"}, instances=instances)(_factory)
    assert "test-bad-instance" not in algorithms.names()
