# A user message that states something before it asks ("my employer keeps my passport, is that allowed?") holds
# information: the rule now says so, and messages stored before it are decided again (only ever towards True).

from django.db import migrations

from memory.information import holds_information


def redecide(apps, schema_editor):
    Message = apps.get_model("chat", "Message")
    Node = apps.get_model("memory", "Node")
    empty = Message.objects.filter(role="user", informative=False).values_list("pk", "content")
    informs = [pk for pk, content in empty.iterator(chunk_size=2000)
               if holds_information(kind="message", role="user", text=content)]
    for start in range(0, len(informs), 2000):
        Node.objects.filter(pk__in=informs[start : start + 2000]).update(informative=True)


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0007_message_node_owner"),
    ]

    operations = [migrations.RunPython(redecide, migrations.RunPython.noop)]
