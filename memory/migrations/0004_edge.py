"""The Edge model moves from provenance to memory; its table (provenance_edge) and rows stay as they are."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0003_fact_summary_taskrun"),
        ("provenance", "0003_move_edge_to_memory"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Edge",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "dst",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="in_edges", to="memory.node"
                            ),
                        ),
                        (
                            "src",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="out_edges", to="memory.node"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "provenance_edge",
                        "indexes": [models.Index(fields=["dst", "src"], name="edge_dst_src")],
                        "constraints": [
                            models.UniqueConstraint(fields=("src", "dst"), name="edge_unique_src_dst"),
                            models.CheckConstraint(
                                condition=models.Q(("src", models.F("dst")), _negated=True), name="edge_no_self_loop"
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
