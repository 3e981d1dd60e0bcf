"""Records of the docs service (a Google-Docs/Drive-like shared workspace of documents).

A document holds its current title and content and the number of its current revision; every edit adds a
row to ``revisions`` with the full content it produced, so the edit history can be read and compared.
Access follows the usual roles: the owner, then viewer < commenter < editor, given to single people
(``shares``) or to every member of the workspace (``workspace_role``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp

Role = Literal["viewer", "commenter", "editor"]
AccessRole = Literal["viewer", "commenter", "editor", "owner"]
RANK: dict[str, int] = {"viewer": 1, "commenter": 2, "editor": 3, "owner": 4}


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


Email = Annotated[str, BeforeValidator(_lower), Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", max_length=254)]


class User(Record):
    """A member of the workspace (someone of the company); ``is_primary`` is the person the agent works for."""

    email: Email
    name: str = Field(min_length=1)
    title: str = ""
    is_primary: bool = Field(default=False, description="The user the tools act as: the person the agent works for")


class Folder(Record):
    name: str = Field(min_length=1, max_length=200)
    parent_id: str | None = Field(default=None, description="The folder holding this one; null at the top")
    created_at: Timestamp | None = None


class Share(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Email
    role: Role


class Document(Record):
    title: str = Field(min_length=1, max_length=300)
    content: str = Field(default="", description="Plain text or markdown; headings are lines starting with '#'")
    owner: Email
    folder_id: str | None = None
    workspace_role: Role | None = Field(
        default="editor",
        description="The role every workspace member has; null: only the owner and the people it is shared with",
    )
    shares: list[Share] = Field(default=[], description="People given a role on this document, one entry per email")
    revision: int = Field(default=1, ge=1, description="The current revision number; each edit adds one")
    custom_fields: dict[str, Any] = Field(
        default={},
        description="Other attributes as the source system keeps them. Example: {'category': 'IT Support', 'views': 120}",
    )
    created_at: Timestamp
    updated_at: Timestamp | None = Field(default=None, description="Last edit; the creation time if never edited")
    last_modified_by: Email | None = Field(default=None, description="Who made the last edit; the owner if none")

    @model_validator(mode="after")
    def _defaults(self) -> Document:
        if self.updated_at is None:
            self.updated_at = self.created_at
        if self.last_modified_by is None:
            self.last_modified_by = self.owner
        return self


class Revision(Record):
    """One revision of a document: the full title and content right after an edit."""

    document_id: str
    number: int = Field(ge=1)
    title: str
    content: str
    author: Email
    created_at: Timestamp
    summary: str = Field(default="", description="What the edit did, e.g. \"Replaced 1 occurrence of '$500'\"")


class Comment(Record):
    document_id: str
    author: Email
    body: str = Field(min_length=1)
    quoted_text: str | None = Field(default=None, description="The span of the content the comment is about")
    resolved: bool = False
    resolved_by: Email | None = None
    resolved_at: Timestamp | None = None
    created_at: Timestamp


TABLES = (
    Table("users", User, "usr_", indexes=(("email",),)),
    Table("folders", Folder, "fld_", refs=(("parent_id", "folders"),)),
    Table(
        "documents",
        Document,
        "doc_",
        indexes=(("updated_at",), ("owner",), ("folder_id",)),
        refs=(("folder_id", "folders"),),
        volatile=("revision", "updated_at", "last_modified_by"),
    ),
    Table(
        "revisions",
        Revision,
        "rev_",
        indexes=(("document_id", "number"),),
        refs=(("document_id", "documents"),),
        history=True,
    ),
    Table("comments", Comment, "cmt_", indexes=(("document_id",),), refs=(("document_id", "documents"),)),
)


# ---------------------------------------------------------------------------------------------- views
class DocumentView(Document):
    your_role: AccessRole = Field(description="What the acting user may do: viewer, commenter, editor or owner")


class DocumentSummary(BaseModel):
    """A document as search lists it: read the content with get_document."""

    id: str
    title: str
    owner: str
    folder_id: str | None
    revision: int
    updated_at: str
    last_modified_by: str
    snippet: str = Field(description="The start of the content")
    your_role: AccessRole


class DocumentPage(Page[DocumentSummary]):
    pass


class RevisionSummary(BaseModel):
    number: int
    title: str
    author: str
    created_at: str
    summary: str
    length: int = Field(description="Characters of content in this revision")
    is_current: bool


class RevisionPage(Page[RevisionSummary]):
    document_id: str
    current_revision: int


class RevisionView(BaseModel):
    document_id: str
    number: int
    title: str
    content: str
    author: str
    created_at: str
    summary: str
    is_current: bool


class CommentPage(Page[Comment]):
    pass


class FolderPage(Page[Folder]):
    pass


# ---------------------------------------------------------------------------------------------- seed rules
def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules across records: unique member emails and at most one primary member; every document owned by a
    member; revision numbers unique per document, none past the document's own, and a stored current revision
    equal to the document."""
    emails: set[str] = set()
    primary = 0
    for index, user in enumerate(seed.get("users", [])):
        if user["email"] in emails:
            raise SeedError(f"docs.users[{index}] field 'email': {user['email']!r} is already a member")
        emails.add(user["email"])
        primary += bool(user["is_primary"])
        if primary > 1:
            raise SeedError(f"docs.users[{index}] field 'is_primary': only one member can be the primary user")
    documents = {d["id"]: d for d in seed.get("documents", [])}
    for index, doc in enumerate(seed.get("documents", [])):
        if doc["owner"] not in emails:
            raise SeedError(f"docs.documents[{index}] field 'owner': {doc['owner']!r} is not a member in docs.users")
    numbers: set[tuple[str, int]] = set()
    for index, rev in enumerate(seed.get("revisions", [])):
        where = f"docs.revisions[{index}] field 'number'"
        doc = documents[rev["document_id"]]
        key = (rev["document_id"], rev["number"])
        if key in numbers:
            raise SeedError(f"{where}: {rev['document_id']} already has a revision {rev['number']}")
        numbers.add(key)
        if rev["number"] > doc["revision"]:
            raise SeedError(f"{where}: {rev['number']} is past the document's current revision {doc['revision']}")
        if rev["number"] == doc["revision"] and (rev["content"], rev["title"]) != (doc["content"], doc["title"]):
            raise SeedError(
                f"docs.revisions[{index}] field 'content': revision {rev['number']} is the current one of "
                f"{rev['document_id']}, so its title and content must equal the document's"
            )
