"""JSON shapes of the memory API (facts, summaries, rectify)."""

from rest_framework import serializers


class FactSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    content = serializers.CharField()
    sources = serializers.ListField(child=serializers.IntegerField())
    version = serializers.IntegerField()
    status = serializers.CharField(help_text="active | superseded")
    rectified = serializers.BooleanField()
    supersedes = serializers.IntegerField(allow_null=True)
    derivation = serializers.DictField()
    rebuilt_at = serializers.DateTimeField()


class SummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    conversation = serializers.IntegerField()
    content = serializers.CharField()
    sources = serializers.ListField(child=serializers.IntegerField())
    version = serializers.IntegerField()
    status = serializers.CharField()
    derivation = serializers.DictField()
    rebuilt_at = serializers.DateTimeField()


class MemorySerializer(serializers.Serializer):
    facts = FactSerializer(many=True)
    summaries = SummarySerializer(many=True)


class RectifySerializer(serializers.Serializer):
    content = serializers.CharField(allow_blank=True, trim_whitespace=False)


class MemorySettingsSerializer(serializers.Serializer):
    enabled = serializers.BooleanField(
        help_text="Memory on: replies are written with what you told me before, and facts and summaries are taken "
        "from new messages. Off: a reply sees only your question and nothing is taken from what you say (your "
        "messages are still kept in their conversation)."
    )
