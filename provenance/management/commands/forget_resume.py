from django.core.management.base import BaseCommand

from provenance.forgetting.services import forget_resume


class Command(BaseCommand):
    help = "Finish forget requests interrupted mid-way (crash, restart) and expire stale previews."

    def handle(self, *args, **options):
        result = forget_resume()
        self.stdout.write(f"resumed {len(result['resumed'])} request(s), expired {result['expired']} preview(s)")
        for request_id in result["resumed"]:
            self.stdout.write(f"  completed {request_id}")
