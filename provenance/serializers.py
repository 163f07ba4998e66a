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


class ConversationCountSerializer(serializers.Serializer):
    conversation = serializers.IntegerField(allow_null=True)
    items = serializers.IntegerField()


class PreviewSummarySerializer(serializers.Serializer):
    matched = serializers.IntegerField()
    tainted = serializers.IntegerField()
    related = serializers.IntegerField()
    derived = serializers.IntegerField()
    by_kind = serializers.DictField(child=serializers.IntegerField(), help_text="Matched and tainted items by kind.")
    by_conversation = ConversationCountSerializer(many=True, help_text="The same by conversation, largest first.")
    page_size = serializers.IntegerField(help_text="Each list of the preview shows at most this many items.")


class ProgressSerializer(serializers.Serializer):
    stage = serializers.ChoiceField(choices=["queued", "locking", "wiping", "verifying", "completed", "failed"])
    done = serializers.IntegerField(help_text="Items wiped so far.")
    total = serializers.IntegerField()
    fraction = serializers.FloatField(allow_null=True, help_text="How far the whole job is, from 0 to 1.")
    error = serializers.CharField(required=False)


class JobStatusSerializer(serializers.Serializer):
    request_id = serializers.UUIDField()
    status = serializers.CharField()
    progress = ProgressSerializer(allow_null=True)


class PreviewItemsQuerySerializer(serializers.Serializer):
    """``offset`` and ``limit`` of a page; the list itself (``list``) is checked by the selector."""

    offset = serializers.IntegerField(min_value=0, default=0, max_value=10**9)
    limit = serializers.IntegerField(min_value=1, default=200, max_value=10**9)


class PreviewItemsSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = serializers.ListField(child=serializers.DictField(), help_text="Entries as in the preview's list.")


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
    summary = PreviewSummarySerializer()
    next = serializers.DictField(
        child=serializers.CharField(), help_text="For each list longer than a page: the URL of its next page."
    )
    progress = ProgressSerializer(required=False, allow_null=True, help_text="While a large deletion runs.")


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
