"""Tools of the files service. Names and vocabulary follow the widely used Google Drive API (files in folders,
versions, permissions with roles), for plain text, markdown and CSV files.

The tools live in three modules (reading, writing, sharing); this one gathers them in the order the agent sees
them.
"""

from __future__ import annotations

from coworkenv.servers.files.tools_read import list_files, list_versions, read_csv, read_file, search_files
from coworkenv.servers.files.tools_share import share_file, unshare_file
from coworkenv.servers.files.tools_write import (
    append_to_file,
    create_file,
    create_folder,
    delete_file,
    move_file,
    write_file,
)

TOOLS = (
    list_files,
    search_files,
    read_file,
    read_csv,
    list_versions,
    create_file,
    write_file,
    append_to_file,
    move_file,
    create_folder,
    delete_file,
    share_file,
    unshare_file,
)
