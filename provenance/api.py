"""REST views of forgetting: parse, call one service or selector, render."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from . import selectors
from .forgetting import services
from .graph_svg import preview_svg
from .models import DeletionStatus
from .serializers import (
    ConfirmSerializer,
    ForgetPreviewRequestSerializer,
    JobStatusSerializer,
    ManifestSerializer,
    PreviewItemsQuerySerializer,
    PreviewItemsSerializer,
    PreviewSerializer,
    RequestSummarySerializer,
)


class ForgetPreviewApi(APIView):
    @extend_schema(request=ForgetPreviewRequestSerializer, responses={201: PreviewSerializer})
    def post(self, request):
        data = ForgetPreviewRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        deletion = services.forget_preview(user=request.user, **data.validated_data)
        return Response(selectors.preview_data(request=deletion), status=status.HTTP_201_CREATED)


class ForgetConfirmApi(APIView):
    @extend_schema(
        request=ConfirmSerializer,
        responses={200: ManifestSerializer, 202: JobStatusSerializer},
        description="Deletes. A deletion of DELLM_FORGET_JOB_MIN_ITEMS items or more runs in the background: "
        "202 with its progress; GET /api/forget/{id}/ shows the progress, then the manifest.",
    )
    def post(self, request, request_id):
        data = ConfirmSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        manifest = services.forget_confirm(user=request.user, request_id=request_id, **data.validated_data)
        if manifest.get("status") != DeletionStatus.COMPLETED:
            # A large deletion runs as a job: its progress now, the manifest from GET /api/forget/{id}/ later.
            return Response(manifest, status=status.HTTP_202_ACCEPTED)
        return Response(selectors.manifest_data(user=request.user, manifest=manifest))


class ForgetListApi(APIView):
    @extend_schema(responses=RequestSummarySerializer(many=True))
    def get(self, request):
        return Response(RequestSummarySerializer(selectors.deletion_request_list(user=request.user), many=True).data)


class ForgetDetailApi(APIView):
    @extend_schema(responses=ManifestSerializer, description="The manifest once confirmed, else the preview.")
    def get(self, request, request_id):
        deletion = selectors.deletion_request_get(user=request.user, request_id=request_id)
        if deletion.status == DeletionStatus.COMPLETED:
            return Response(selectors.manifest_data(user=request.user, manifest=deletion.manifest))
        return Response(selectors.preview_data(request=deletion))


class ForgetItemsApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("list", str, enum=list(selectors.PREVIEW_LISTS), description="Which list of the preview."),
            OpenApiParameter("offset", int),
            OpenApiParameter("limit", int, description="At most DELLM_FORGET_PREVIEW_PAGE (200)."),
        ],
        responses=PreviewItemsSerializer,
        description="One page of a preview's matched, tainted or related items (a large preview lists the first).",
    )
    def get(self, request, request_id):
        deletion = selectors.deletion_request_get(user=request.user, request_id=request_id)
        query = PreviewItemsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        which = request.query_params.get("list", "matched")
        return Response(selectors.preview_items(request=deletion, which=which, **query.validated_data))


class SvgRenderer(BaseRenderer):
    media_type = "image/svg+xml"
    format = "svg"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        return data.encode()


class SvgApiView(APIView):
    """Answers with a picture drawn by the server (SVG); its errors are JSON, as everywhere else."""

    renderer_classes = [SvgRenderer, JSONRenderer]

    def handle_exception(self, exc):
        self.request.accepted_renderer, self.request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type
        return super().handle_exception(exc)


class ForgetGraphApi(SvgApiView):
    @extend_schema(
        responses={(200, "image/svg+xml"): OpenApiResponse(OpenApiTypes.STR)},
        description="A preview as a picture (SVG): the matched items and those tainted through them.",
    )
    def get(self, request, request_id):
        deletion = selectors.deletion_request_get(user=request.user, request_id=request_id)
        return Response(preview_svg(user=request.user, request=deletion))


class ForgetCancelApi(APIView):
    @extend_schema(request=None, responses={204: None}, description="Abandon a preview; it can no longer be confirmed.")
    def post(self, request, request_id):
        services.forget_cancel(user=request.user, request_id=request_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
