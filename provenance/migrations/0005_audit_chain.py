"""The audit log becomes a keyed hash chain: existing entries are chained in the order they were written."""

from django.db import migrations, models


def chain_existing(apps, schema_editor):
    from provenance.forgetting import chain
    from provenance.forgetting.audit import audit_entry, chain_key

    key, prev = chain_key(), chain.GENESIS
    records = apps.get_model("provenance", "AuditRecord").objects.order_by("started_at", "pk")
    for seq, record in enumerate(records, start=1):
        record.seq, record.chain_prev = seq, prev
        record.chain_hash = chain.link_hash(key, audit_entry(record))
        record.seal = chain.seal_hash(key, audit_entry(record))
        record.save(update_fields=["seq", "chain_prev", "chain_hash", "seal"])
        prev = record.chain_hash


class Migration(migrations.Migration):
    dependencies = [("provenance", "0004_remove_auditrecord_requester_username")]

    operations = [
        migrations.AlterModelOptions(name="auditrecord", options={"ordering": ["-seq"]}),
        migrations.AlterModelOptions(
            name="deletionrequest",
            options={
                "ordering": ["-created_at"],
                "permissions": [
                    ("review_deletions", "Can review deletions: the review desk, exports, resume and retry")
                ],
            },
        ),
        migrations.AddField("auditrecord", "seq", models.PositiveBigIntegerField(null=True)),
        migrations.AddField("auditrecord", "chain_prev", models.CharField(max_length=64, default="")),
        migrations.AddField("auditrecord", "chain_hash", models.CharField(max_length=64, default="")),
        migrations.AddField("auditrecord", "seal", models.CharField(max_length=64, default="")),
        migrations.RunPython(chain_existing, migrations.RunPython.noop),
        migrations.AlterField("auditrecord", "seq", models.PositiveBigIntegerField(unique=True)),
        migrations.AlterField("auditrecord", "chain_prev", models.CharField(max_length=64)),
        migrations.AlterField("auditrecord", "chain_hash", models.CharField(max_length=64)),
        migrations.AlterField("auditrecord", "seal", models.CharField(max_length=64)),
    ]
