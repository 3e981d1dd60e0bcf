"""Our tasks as an OpenEnv environment server (``coworkenv openenv serve``): one isolated workspace per session, the
task's tools as MCP-style ``call_tool`` actions, ``reply`` to the user, the grader's score as the final reward.

- :mod:`.protocol`: the wire shapes of OpenEnv's protocol (results, actions, frames, schemas);
- :mod:`.episode`: one session's episode (the harness's episode session over a fork of the task's baseline);
- :mod:`.server`: the Starlette app (HTTP, WebSocket and JSON-RPC routes, sessions);
- :mod:`.client`: a small client of that protocol (what the trl environment and the bench use);
- :mod:`.cli`: the command.
"""
