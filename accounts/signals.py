"""A change of password revokes every token of the account, whichever way the password was set
(password change or reset page, the admin, ``manage.py changepassword``, a service calling ``set_password``)."""

from __future__ import annotations

from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver

from .services import tokens_revoke_all


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts.revoke_tokens_on_password_change")
def revoke_tokens_on_password_change(sender, instance, created, **kwargs):
    """Revoke all the user's tokens when a save stores a new password."""
    # set_password() keeps the raw password in _password until the save (Django's own password_changed hook keys
    # on it); the re-hash of an unchanged password at sign-in clears it before saving.
    if created or getattr(instance, "_password", None) is None:
        return
    tokens_revoke_all(user=instance)
