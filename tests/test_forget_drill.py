"""The forget drill: a synthetic person seeded through every way in, forgotten, then searched for everywhere."""

import pytest
from django.core.management import CommandError, call_command

from chat.models import Conversation, Message, Role
from evaluation import drill

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_drill_finds_no_trace(capsys):
    call_command("forget_drill", "--seed", "11")
    out = capsys.readouterr().out
    assert "no trace in" in out and "TRACE" not in out
    for where in (
        "messages",
        "replies",
        "embeddings",
        "fact",
        "summary",
        "conversation title",
        "edge",
        "pending preview",
        "export",
    ):
        assert f"seeded {where:<20} yes" in out


def test_the_drill_catches_a_row_planted_after_the_deletion(monkeypatch, capsys):
    forget = drill.drill_forget

    def forget_then_plant(*, visitor, person, conversation_id):
        owner = Conversation.objects.get(pk=conversation_id).owner
        manifests = forget(visitor=visitor, person=person, conversation_id=conversation_id)
        # The deletion may have emptied (and so removed) that conversation: plant into one that survives.
        conversation = Conversation.objects.filter(owner=owner).first() or Conversation.objects.create(owner=owner)
        Message.objects.create(conversation=conversation, role=Role.USER, content=f"{person.city} is lovely in May.")
        return manifests

    monkeypatch.setattr(drill, "drill_forget", forget_then_plant)
    with pytest.raises(CommandError, match="trace"):
        call_command("forget_drill", "--seed", "12")
    out = capsys.readouterr().out
    assert "TRACE SQL memory_node.content" in out
