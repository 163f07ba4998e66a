"""JSON shapes of the forget API: preview, confirm (the manifest), the list of requests."""

from rest_framework import serializers

from dellm_site.validation import MAX_DEPTH, IdField

from .forgetting.matching import MODES

# Deleting a whole account goes through the account's own endpoint, which asks for the password.
PUBLIC_MODES = tuple(mode for mode in MODES if mode != "account")


class ForgetPreviewRequestSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=PUBLIC_MODES)
    query = serializers.CharField(required=False, allow_blank=True, trim_whitespace=True, default="")
    message_ids = serializers.ListField(child=IdField(), required=False, max_length=10000)
    conversation_id = IdField(required=False)
    threshold = serializers.FloatField(required=False, min_value=0.01, max_value=1.0)
    depth = serializers.IntegerField(required=False, min_value=0, max_value=MAX_DEPTH, allow_null=True)


class MatchedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    reason = serializers.CharField(help_text="id | exact | keyword | semantic | conversation")
    score = serializers.FloatField(required=False)
    kind = serializers.CharField(allow_null=True)
    role = serializers.CharField(allow_null=True)
    conversation = serializers.IntegerField(allow_null=True)
    excerpt = serializers.CharField(allow_null=True)


class TaintedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    depth = serializers.IntegerField()
    path = serializers.ListField(child=serializers.IntegerField(), help_text="From a matched item to this one.")
    explanation = serializers.CharField()
    kind = serializers.CharField(allow_null=True)
    role = serializers.CharField(allow_null=True)
    conversation = serializers.IntegerField(allow_null=True)
    excerpt = serializers.CharField(allow_null=True)


class DerivedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    action = serializers.CharField()


class RelatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    score = serializers.FloatField()
    target = serializers.CharField(help_text="The part of the request this item is close to.")
    why = serializers.CharField(help_text="Why it is offered, in plain words.")
    kind = serializers.CharField(allow_null=True)
    role = serializers.CharField(allow_null=True)
    conversation = serializers.IntegerField(allow_null=True)
    excerpt = serializers.CharField(allow_null=True)


class PreviewSerializer(serializers.Serializer):
    request_id = serializers.UUIDField()
    status = serializers.CharField()
    mode = serializers.CharField()
    query = serializers.CharField(allow_null=True)
    depth = serializers.IntegerField(allow_null=True)
    threshold = serializers.FloatField(allow_null=True)
    expires_at = serializers.DateTimeField()
    matched = MatchedSerializer(many=True)
    tainted = TaintedSerializer(many=True)
    derived = DerivedSerializer(many=True)
    related = RelatedSerializer(
        many=True, help_text="Possibly related items, not deleted unless listed in the confirm's `add`."
    )


class ConfirmSerializer(serializers.Serializer):
    keep = serializers.ListField(child=IdField(), required=False, default=list)
    add = serializers.ListField(
        child=IdField(), required=False, default=list,
        help_text="Possibly related items (from the preview's `related`) to forget as well.",
    )
    full_scan = serializers.BooleanField(
        required=False, default=False,
        help_text="Verify by scanning every surviving item, not only those the indexes name as able to hold it.",
    )


class ManifestSerializer(serializers.Serializer):
    request_id = serializers.UUIDField()
    status = serializers.CharField()
    requested_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField()
    mode = serializers.CharField()
    depth = serializers.IntegerField(allow_null=True)
    kept = serializers.ListField(child=serializers.IntegerField())
    deleted = serializers.DictField(child=serializers.IntegerField())
    rebuilt = serializers.ListField(child=serializers.DictField())
    verification = serializers.DictField(
        help_text="checked_stores, residual_hits, residual_ids, method; possible_residue: surviving items that share "
        "a distinctive part of the deleted text (a number, a name, rare words) or come close in meaning, each "
        "{id, kind, conversation, why: [..], spans: [[start, end]], similarity?, excerpt, tokens} (excerpt and tokens "
        "are read from the item when shown, never stored); possible_residue_titles: conversation ids; "
        "possible_residue_more: how many more were found than listed.",
    )
    timings = serializers.DictField()


class RequestSummarySerializer(serializers.Serializer):
    request_id = serializers.UUIDField(source="pk")
    status = serializers.CharField()
    mode = serializers.CharField()
    requested_at = serializers.DateTimeField(source="created_at")
    completed_at = serializers.DateTimeField(allow_null=True)
    deleted = serializers.SerializerMethodField()

    def get_deleted(self, obj) -> dict:
        return obj.manifest.get("deleted", {}) if obj.manifest else {}
