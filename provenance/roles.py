"""The deletion reviewer: sees the review desk and the read-only deletion records, resumes and retries
deletions, exports the audit log. No permission on any conversation, message or memory item is part of it,
and those models have no admin at all."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission
from django.db.models import Q

REVIEWER_GROUP = "Deletion reviewers"
REVIEW_PERMISSION = "provenance.review_deletions"
# (app label, codename) of every permission the group holds.
REVIEWER_PERMISSIONS = [
    ("provenance", "review_deletions"),
    ("provenance", "view_deletionrequest"),
    ("provenance", "view_auditrecord"),
    ("memory", "view_taskrun"),
]


def reviewer_group_ensure(**kwargs) -> Group:
    """Create the reviewers' group with exactly its permissions (run after every ``migrate``)."""
    group, _ = Group.objects.get_or_create(name=REVIEWER_GROUP)
    wanted = Q()
    for app_label, codename in REVIEWER_PERMISSIONS:
        wanted |= Q(content_type__app_label=app_label, codename=codename)
    group.permissions.set(Permission.objects.filter(wanted))
    return group


def can_review(user) -> bool:
    """Whether ``user`` may use the review desk: active staff holding the reviewer's permission."""
    return user.is_active and user.is_staff and user.has_perm(REVIEW_PERMISSION)
