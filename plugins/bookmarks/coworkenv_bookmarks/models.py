"""Records of the bookmarks service: folders, and bookmarks that may sit in one."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from coworkenv.servers.kit import Page, Record, Table, Timestamp

Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Status = Literal["ok", "broken", "archived"]


class Folder(Record):
    """A folder of bookmarks."""

    id: str = Field(description="The folder's id. Example: 'fld_reading'")
    name: Title = Field(description="Example: 'Reading list'")


class Bookmark(Record):
    """A saved link: where it points, what it is called, who saved it and whether the link still works."""

    id: str = Field(description="The bookmark's id. Example: 'bm_style_guide'")
    url: str = Field(max_length=2_000, description="Example: 'https://brightwave.io/style'")
    title: Title = Field(description="Example: 'Style guide'")
    tags: list[str] = Field(default=[], description="Example: ['design', 'onboarding']")
    folder_id: str | None = Field(default=None, description="The folder it sits in, if any. Example: 'fld_reading'")
    status: Status = Field(
        default="ok", description="'broken' when the link no longer answers; 'archived' when kept aside."
    )
    saved_by: str = Field(description="Who saved it (an email address). Example: 'dana@brightwave.io'")
    created_at: Timestamp = Field(description="When it was saved (ISO 8601, UTC).")
    updated_at: Timestamp | None = Field(default=None, description="When it was last changed (ISO 8601, UTC).")


class BookmarkPage(Page[Bookmark]):
    pass


class FolderPage(Page[Folder]):
    pass


TABLES = (
    Table("folders", Folder, "fld_"),
    Table(
        "bookmarks",
        Bookmark,
        "bm_",
        indexes=(("folder_id",), ("status",)),
        refs=(("folder_id", "folders"),),  # a seed's bookmark names a folder the seed has
        volatile=("updated_at",),  # bumped beside a real change: not a change of its own to the grader
    ),
)
