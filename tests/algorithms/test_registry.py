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


def test_expectations_default_by_variant_kind_and_can_be_marked():
    register("test-expect", kind="learner", paper="p", section="s", summary="x",
             variants={"bug": "a bug", "nc-1": "a control", "wb": "white-box bug", "ut": "utility bug"},
             expect={"wb": "white-box", "ut": "utility"})(_factory)
    try:
        s = algorithms.spec("test-expect")
        assert [s.expectation(v) for v in ("correct", "bug", "nc-1", "wb", "ut")] == \
            ["pass", "violation", "pass", "white-box", "utility"]
        assert algorithms.info("test-expect")["expect"]["wb"] == "white-box"
    finally:
        algorithms.registry._REGISTRY.pop("test-expect")
    with pytest.raises(ValueError, match="expect"):
        register("test-expect-bad", kind="learner", paper="p", section="s", summary="x",
                 variants={"bug": "a bug"}, expect={"bug": "maybe"})(_factory)


def test_positive_controls_expect_a_violation_and_marked_bugs_have_white_box_tests():
    assert algorithms.spec("ch-erm").expectation("correct") == "violation"
    marked = {(n, v): e for n in algorithms.names()
              for v, e in algorithms.info(n)["expect"].items() if e in ("white-box", "utility")}
    # every variant excused from the black-box acceptance test names its catching test in its
    # description (white-box invariant / permutation / representative test, or utility)
    for (n, v), e in marked.items():
        text = algorithms.info(n)["variants"][v].lower()
        assert ("white-box" in text or "invariance" in text or "utility" in text
                or "exact" in text), (n, v, text)


def test_cli_notes_a_white_box_only_variant(capsys):
    from privaudit.cli import main

    main(["list"])
    assert "white-box-only bugs (a black-box audit passes them): v14, v17" in capsys.readouterr().out


def test_cli_expectation_note_per_kind():
    from privaudit.resolve import Target

    def note(name, variant):
        return Target(None, name, {"variant": variant}, algorithm=name).expectation_note()

    assert "white-box-only" in note("lwy-p2", "v17")
    assert "utility-only" in note("lwy-p2", "v15")
    assert "masks this bug" in note("blm-t1", "b2")
    assert note("blm-t1", "b5") == note("blm-t1", "benign-ln2") == note("df-cor1", "correct") == ""
