"""Type names shared by the apps' services and selectors."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias
from uuid import UUID

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    User: TypeAlias = AbstractBaseUser

# Ids arrive from URLs, JSON and forms: an int, or a string to be parsed (bad ones are a 404).
AnyId: TypeAlias = int | str
RequestId: TypeAlias = UUID | str
