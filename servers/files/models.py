"""Records of the files service (a shared drive: folders, text/markdown/CSV files with versions and sharing).

A file holds its current content and the number of its current version; every write adds a row to ``versions``
with the full content it produced, so any earlier version can be read back. Access follows a drive's roles: the
owner, then viewer < editor, given to single people (``shares``) or to every member of the workspace
(``workspace_role``). A deleted file goes to the trash (``trashed``), where it stays readable.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp

Role = Literal["viewer", "editor"]
AccessRole = Literal["viewer", "editor", "owner"]
RANK: dict[str, int] = {"viewer": 1, "editor": 2, "owner": 3}
MimeType = Literal["text/plain", "text/markdown", "text/csv"]
TYPES: dict[str, str] = {".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv"}
NAME_PATTERN = r"^[^/\\\x00-\x1f]+$"


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


Email = Annotated[str, BeforeValidator(_lower), Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", max_length=254)]
Name = Annotated[str, Field(min_length=1, max_length=255, pattern=NAME_PATTERN)]


def type_of(name: str) -> str | None:
    """The MIME type a file name's extension gives ('.csv' → 'text/csv'), None for an unknown extension."""
    dot = name.rfind(".")
    return TYPES.get(name[dot:].lower()) if dot > 0 else None


class User(Record):
    """A member of the workspace (someone of the company); ``is_primary`` is the person the agent works for."""

    email: Email
    name: str = Field(min_length=1)
    title: str = ""
    is_primary: bool = Field(default=False, description="The user the tools act as: the person the agent works for")


class Folder(Record):
    name: Name
    parent_id: str | None = Field(default=None, description="The folder holding this one; null at the top")
    created_at: Timestamp | None = None


class Share(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: Email
    role: Role


class File(Record):
    name: Name = Field(description="The file name with its extension: .txt, .md or .csv, e.g. 'payouts-feb.csv'")
    folder_id: str | None = Field(default=None, description="The folder holding the file; null at the top")
    mime_type: MimeType | None = Field(default=None, description="Set from the name's extension when omitted")
    content: str = ""
    size: int = Field(default=0, ge=0, description="Bytes of the content in UTF-8 (set from the content)")
    owner: Email
    workspace_role: Role | None = Field(
        default="editor",
        description="The role every workspace member has; null: only the owner and the people it is shared with",
    )
    shares: list[Share] = Field(default=[], description="People given a role on this file, one entry per email")
    version: int = Field(default=1, ge=1, description="The current version number; each write adds one")
    trashed: bool = False
    created_at: Timestamp
    updated_at: Timestamp | None = Field(default=None, description="Last write; the creation time if never written")
    last_modified_by: Email | None = Field(default=None, description="Who wrote last; the owner if none")

    @model_validator(mode="after")
    def _derived(self) -> File:
        kind = type_of(self.name)
        if kind is None:
            raise ValueError(f"{self.name!r} has no supported extension; name it .txt, .md or .csv")
        if self.mime_type is not None and self.mime_type != kind:
            raise ValueError(f"mime_type {self.mime_type} does not match the extension of {self.name!r} ({kind})")
        self.mime_type = kind  # type: ignore[assignment]
        self.size = len(self.content.encode("utf-8", "surrogatepass"))
        emails = [s.email for s in self.shares]
        if len(set(emails)) != len(emails):
            raise ValueError("a person is listed twice in shares; give each email once")
        if self.updated_at is None:
            self.updated_at = self.created_at
        if self.last_modified_by is None:
            self.last_modified_by = self.owner
        return self


class Version(Record):
    """One version of a file: its full content right after a write."""

    file_id: str
    number: int = Field(ge=1)
    content: str
    author: Email
    created_at: Timestamp
    summary: str = Field(default="", description="What the write did, e.g. 'Appended 2 lines'")


TABLES = (
    Table("users", User, "usr_", indexes=(("email",),)),
    Table("folders", Folder, "fld_", indexes=(("parent_id",),), refs=(("parent_id", "folders"),)),
    Table(
        "files",
        File,
        "file_",
        indexes=(("folder_id",), ("updated_at",), ("owner",)),
        refs=(("folder_id", "folders"),),
        volatile=("version", "updated_at", "last_modified_by", "size"),
    ),
    Table("versions", Version, "ver_", indexes=(("file_id", "number"),), refs=(("file_id", "files"),), history=True),
)


# ---------------------------------------------------------------------------------------------- views
class FolderView(Folder):
    path: str = Field(description="Where it sits, e.g. '/Finance/Payouts'")


class FileView(File):
    path: str = Field(description="Where it sits, e.g. '/Finance/payouts-feb.csv'")
    your_role: AccessRole = Field(description="What the acting user may do: viewer, editor or owner")
    current_version: int = Field(description="The file's newest version; 'version' is the one shown here")


class FileSummary(BaseModel):
    """A file as lists show it: read the content with read_file."""

    id: str
    name: str
    path: str
    folder_id: str | None
    mime_type: str
    size: int
    version: int
    owner: str
    updated_at: str
    last_modified_by: str
    trashed: bool
    snippet: str = Field(description="The start of the content")
    your_role: AccessRole


class FilePage(Page[FileSummary]):
    folders: list[FolderView] = Field(default=[], description="Listing a folder: the folders inside it")


class VersionSummary(BaseModel):
    number: int
    author: str
    created_at: str
    summary: str
    size: int
    is_current: bool


class VersionPage(Page[VersionSummary]):
    file_id: str
    current_version: int


class CsvRows(BaseModel):
    file_id: str
    version: int
    header: list[str] = Field(description="The column names, from the first line")
    rows: list[dict[str, str]] = Field(description="The rows asked for, each as {column: value}")
    row_count: int = Field(description="Data rows in the whole file (the header not counted)")
    next_offset: int | None = Field(description="Pass as offset to read on; null after the last row")


# ---------------------------------------------------------------------------------------------- seed rules
def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules across records: unique member emails and at most one primary member; files owned by members; one
    name per folder; folders that nest without a loop; versions numbered once each, none past the file's own,
    the current one equal to the file."""
    emails: set[str] = set()
    primary = 0
    for index, user in enumerate(seed.get("users", [])):
        if user["email"] in emails:
            raise SeedError(f"files.users[{index}] field 'email': {user['email']!r} is already a member")
        emails.add(user["email"])
        primary += bool(user["is_primary"])
        if primary > 1:
            raise SeedError(f"files.users[{index}] field 'is_primary': only one member can be the primary user")
    _check_folders(seed.get("folders", []))
    names: set[tuple[str | None, str]] = set()
    for index, file in enumerate(seed.get("files", [])):
        if file["owner"] not in emails:
            raise SeedError(f"files.files[{index}] field 'owner': {file['owner']!r} is not a member in files.users")
        key = (file["folder_id"], file["name"].casefold())
        if not file["trashed"] and key in names:
            raise SeedError(f"files.files[{index}] field 'name': {file['name']!r} is already in that folder")
        names.add(key)
    _check_versions(seed)


def _check_folders(folders: list[dict[str, Any]]) -> None:
    parents = {f["id"]: f["parent_id"] for f in folders}
    siblings: set[tuple[str | None, str]] = set()
    for index, folder in enumerate(folders):
        key = (folder["parent_id"], folder["name"].casefold())
        if key in siblings:
            raise SeedError(f"files.folders[{index}] field 'name': {folder['name']!r} is already in that folder")
        siblings.add(key)
        seen, at = {folder["id"]}, folder["parent_id"]
        while at is not None:
            if at in seen:
                raise SeedError(f"files.folders[{index}] field 'parent_id': the folders {sorted(seen)} form a loop")
            seen.add(at)
            at = parents.get(at)


def _check_versions(seed: dict[str, list[dict[str, Any]]]) -> None:
    files = {f["id"]: f for f in seed.get("files", [])}
    numbers: set[tuple[str, int]] = set()
    for index, ver in enumerate(seed.get("versions", [])):
        where = f"files.versions[{index}] field 'number'"
        file = files[ver["file_id"]]
        key = (ver["file_id"], ver["number"])
        if key in numbers:
            raise SeedError(f"{where}: {ver['file_id']} already has a version {ver['number']}")
        numbers.add(key)
        if ver["number"] > file["version"]:
            raise SeedError(f"{where}: {ver['number']} is past the file's current version {file['version']}")
        if ver["number"] == file["version"] and ver["content"] != file["content"]:
            raise SeedError(
                f"files.versions[{index}] field 'content': version {ver['number']} is the current one of "
                f"{ver['file_id']}, so its content must equal the file's"
            )
