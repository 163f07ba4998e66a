"""Scoring the forget resolver under other settings of its constants (``manage.py resolution_sweep``)."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.resolution import conversation_resolution_evaluate, resolver_settings
from provenance.forgetting import resolution

ROWS = [
    {"type": "user", "user": "u1", "statements": [
        "I live on Kestrel Lane in Bristol.", "I have a tortoise called Sheldon.", "I earn 41,000 pounds a year."]},
    {"type": "request", "user": "u1", "target": 1, "text": "Please forget my tortoise."},
    {"type": "request", "user": "u1", "target": [0, 2], "text": "Delete where I live and how much I earn."},
]


def test_settings_are_set_for_the_block_and_put_back_even_after_an_error():
    shipped = resolution.MATCH_GAP
    with pytest.raises(RuntimeError), resolver_settings({"MATCH_GAP": shipped + 1}):
        assert resolution.MATCH_GAP == shipped + 1
        raise RuntimeError
    assert resolution.MATCH_GAP == shipped


@pytest.mark.parametrize("name", ["MATCH_GAPP", "resolve", "_TRACE"])
def test_an_unknown_setting_is_refused(name):
    with pytest.raises(ValueError, match=name), resolver_settings({name: 1}):
        pass


@pytest.mark.django_db
def test_each_setting_is_scored_on_the_same_stored_statements():
    plain = conversation_resolution_evaluate(ROWS)
    shipped, nothing_sure = conversation_resolution_evaluate(ROWS, settings=[{}, {"MATCH_FLOOR": 5.0}])
    assert shipped == plain
    assert plain["all"]["requests"] == 2 and plain["all"]["right_item_rate"] == 1.0
    # No score reaches a floor of 5: nothing is matched, every request is a miss.
    assert nothing_sure["all"]["right_item_rate"] == 0.0 and len(nothing_sure["misses"]) == 2
    assert resolution.MATCH_FLOOR < 1


@pytest.mark.django_db
def test_the_sets_kept_for_scoring_need_to_be_asked_for():
    with pytest.raises(CommandError, match="--held-out"):
        call_command("resolution_sweep", sets="independent_c")
    with pytest.raises(CommandError, match="no such set"):
        call_command("resolution_sweep", sets="independent_zz")
    with pytest.raises(CommandError, match="JSON"):
        call_command("resolution_sweep", "--set", "{MATCH_GAP: 1}", sets="independent_a")

