from django.core.management.base import BaseCommand

from provenance.forgetting.services import forget_resume


class Command(BaseCommand):
    help = (
        "Finish forget requests interrupted mid-way (crash, restart), expire stale previews, and run the disk "
        "maintenance (VACUUM, CHECKPOINT) of erasures still waiting for it."
    )

    def handle(self, *args, **options):
        result = forget_resume()
        self.stdout.write(f"resumed {len(result['resumed'])} request(s), expired {result['expired']} preview(s)")
        for request_id in result["resumed"]:
            self.stdout.write(f"  completed {request_id}")
        if result.get("disk_reclaimed"):
            self.stdout.write("ran the disk maintenance of earlier erasures")
