"""Site-wide response policies."""


class NoStoreForSignedInPages:
    """Pages of a signed-in user are never cached by the browser: after a deletion, Back must not
    show content that is gone (and a shared computer must not keep it)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and "Cache-Control" not in response:
            response["Cache-Control"] = "no-store"
        return response
