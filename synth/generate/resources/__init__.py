"""Resources: a folder of a user's files (Markdown and text documents, CSV sheets, .eml mail, .ics calendars)
loaded as records that synthesis grounds its tasks on (``coworkenv synth --from DIR``)."""

from coworkenv.synth.generate.resources.loader import ResourceError, load_resources
from coworkenv.synth.generate.resources.model import Attachment, Attendee, Document, Event, Mail, ResourceSet, Sheet

__all__ = [
    "Attachment",
    "Attendee",
    "Document",
    "Event",
    "Mail",
    "ResourceError",
    "ResourceSet",
    "Sheet",
    "load_resources",
]
