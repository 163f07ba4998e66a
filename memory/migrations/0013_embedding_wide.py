import pgvector.django
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0012_node_owner_lexemes"),
    ]

    operations = [
        migrations.AddField(
            model_name="embedding",
            name="wide",
            field=pgvector.django.VectorField(dimensions=768, null=True, editable=False),
        ),
    ]
