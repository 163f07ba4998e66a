# Messages stored before Node.informative existed: decide it once, with the rule every new item gets.

from django.db import migrations

from memory.information import holds_information


def backfill(apps, schema_editor):
    Message = apps.get_model("chat", "Message")
    Node = apps.get_model("memory", "Node")
    empty = [
        pk
        for pk, role, content in Message.objects.values_list("pk", "role", "content").iterator(chunk_size=2000)
        if not holds_information(kind="message", role=role, text=content)
    ]
    for start in range(0, len(empty), 2000):
        Node.objects.filter(pk__in=empty[start : start + 2000]).update(informative=False)


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0005_conversation_temporary"),
        ("memory", "0006_node_informative"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
