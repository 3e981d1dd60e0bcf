"""What the code-repository families share: a small project (modules, tests, CI workflow), its collaborators, and
a :class:`Repo` that writes the history of one task into the ``repo`` service's seed in time order (commits with
their file versions, merged and open pull requests, CI runs with pytest-like logs, issues, CODEOWNERS, tags)."""

from __future__ import annotations

from dataclasses import dataclass, field

from coworkenv.synth.generate.families.kit.base import Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import USER, Person

PACKAGES = ("uploader", "billing", "search", "notify", "ledger", "importer", "gateway", "reports")
MODULES = (
    "client", "config", "retry", "storage", "auth", "cache", "export", "metrics", "parser", "webhooks",
    "invoices", "schedule", "limits", "sessions",
)  # fmt: skip
BEHAVIOURS = (
    "handles_empty_input", "retries_on_timeout", "rejects_bad_token", "parses_iso_dates", "keeps_order",
    "rounds_half_up", "skips_disabled_rows", "reads_default_timeout", "expires_old_entries", "escapes_quotes",
    "accepts_unicode_names", "pages_through_results", "caps_batch_size", "logs_failures_once",
)  # fmt: skip
ERRORS = (
    ("KeyError: 'TIMEOUT'", "config"),
    ("AssertionError: assert 3 == 2", "retry"),
    ("TypeError: unsupported operand type(s) for +: 'int' and 'str'", "parser"),
    ("AttributeError: 'NoneType' object has no attribute 'id'", "sessions"),
    ("ValueError: invalid literal for int() with base 10: ''", "limits"),
)
WORKFLOW = (
    "name: ci\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - uses: actions/checkout@v4\n      - run: pip install -e .[test]\n      - run: pytest -q\n"
)


def login_of(p: Person) -> str:
    """'Dana Whitfield' → 'dwhitfield'."""
    return (p.first[0] + p.last).lower().replace(" ", "")


def module_text(package: str, module: str, version: int) -> str:
    """The text of ``src/<package>/<module>.py`` at its ``version`` (each version differs)."""
    lines = [f'"""{module.capitalize()} of the {package} service."""', "", "import logging", ""]
    lines.append(f"LOG = logging.getLogger({module!r})")
    lines.append(f"LIMIT = {10 * (version + 1)}")
    for n in range(version + 1):
        lines += ["", "", f"def {module}_step_{n}(value):", f"    return value[:LIMIT] if value else {n}"]
    return "\n".join(lines) + "\n"


def tests_text(module: str, tests: list[str]) -> str:
    lines = [f"from {module} import *  # noqa: F403", ""]
    for name in tests:
        lines += ["", f"def {name}():", "    assert True"]
    return "\n".join(lines) + "\n"


def pytest_log(tests: list[str], failing: list[str], error: str, where: str) -> str:
    """A pytest console log of ``tests`` (paths 'tests/test_x.py::test_y') with ``failing`` failed by ``error``."""
    files = sorted({t.split("::")[0] for t in tests})
    out = ["Run pytest -q", f"collected {len(tests)} items", ""]
    for f in files:
        marks = "".join("F" if t in failing else "." for t in tests if t.startswith(f + "::"))
        out.append(f"{f} {marks}")
    if failing:
        out += ["", "=" * 30 + " FAILURES " + "=" * 30]
        for t in failing:
            name = t.split("::")[1]
            out += [
                f"{'_' * 20} {name} {'_' * 20}",
                "",
                f"    def {name}():",
                f">       {where}",
                f"E       {error}",
                "",
            ]
        out.append("=" * 25 + " short test summary info " + "=" * 25)
        out += [f"FAILED {t} - {error}" for t in failing]
    passed = len(tests) - len(failing)
    out.append(f"{len(failing)} failed, {passed} passed in 3.1s" if failing else f"{passed} passed in 2.9s")
    return "\n".join(out)


@dataclass
class Dev:
    person: Person
    login: str

    @property
    def name(self) -> str:
        return self.person.name

    @property
    def first(self) -> str:
        return self.person.first


@dataclass
class Repo:
    """One task's repository, written into the builder's ``repo`` seed as it is made (in time order)."""

    b: TaskBuilder
    package: str = ""
    me: Dev = field(init=False)
    devs: list[Dev] = field(default_factory=list)
    heads: dict[str, str] = field(default_factory=dict)
    protected: set[str] = field(default_factory=set)
    content: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per branch: path → the content at its head."""
    tests: list[str] = field(default_factory=list)
    tests_of: dict[str, list[str]] = field(default_factory=dict)
    """Per module: its tests, as 'tests/test_<module>.py::test_<...>'."""
    numbers: int = 0

    def __post_init__(self) -> None:
        b = self.b
        self.package = self.package or b.pick(*PACKAGES)
        self.me = Dev(USER.person, login_of(USER.person))
        self._user(self.me, primary=True)
        self.numbers = b.rng.randrange(40, 400)

    def _user(self, dev: Dev, primary: bool = False) -> None:
        record = {"id": f"usr_{dev.login}", "login": dev.login, "name": dev.name, "is_primary": primary}
        self.b.add("repo", "users", {**record, "email": f"{dev.person.first.lower()}@brightwave.io"})

    def dev(self, first: str | None = None) -> Dev:
        """A new collaborator (a drawn name, never one already in the task)."""
        while True:
            d = Dev(self.b.names.person("Software Engineer", first=first), "")
            d.login = login_of(d.person)
            if all(x.login != d.login for x in (self.me, *self.devs)):
                break
        self.devs.append(d)
        self._user(d)
        return d

    def number(self) -> int:
        self.numbers += self.b.rng.randint(1, 3)
        return self.numbers

    # ------------------------------------------------------------------------------------------ code
    def start(self, modules: list[str], days: float) -> str:
        """The first commit on main: README, the CI workflow, the modules and their tests."""
        files = {
            "README.md": f"# {self.package}\n\nThe {self.package} service.\n",
            ".github/workflows/ci.yml": WORKFLOW,
        }
        for m in modules:
            tests = [f"test_{m}_{x}" for x in self.b.rng.sample(BEHAVIOURS, 2)]
            self.tests_of[m] = [f"tests/test_{m}.py::{t}" for t in tests]
            self.tests += self.tests_of[m]
            files[f"src/{self.package}/{m}.py"] = module_text(self.package, m, 0)
            files[f"tests/test_{m}.py"] = tests_text(m, tests)
        self.protected.add("main")
        return self.commit("main", self.me.login, "Initial import", files, days)

    def commit(self, branch: str, author: str, message: str, files: dict[str, str], days: float) -> str:
        """A commit on ``branch`` (a new branch starts from main's head), its file versions, the branch moved."""
        b = self.b
        if branch not in self.heads and self.heads:
            self.heads[branch] = self.heads["main"]
            self.content[branch] = dict(self.content["main"])
        cid = b.uid("c_", f"{b.rng.getrandbits(28):07x}")
        record = {"id": cid, "branch": branch, "parent_id": self.heads.get(branch), "author": author}
        b.add(
            "repo", "commits", {**record, "message": message, "changed_files": sorted(files), "created_at": b.ago(days)}
        )
        for path, text in sorted(files.items()):
            b.add("repo", "file_versions", {"id": b.uid("fv_"), "commit_id": cid, "path": path, "content": text})
        self.heads[branch] = cid
        self.content.setdefault(branch, {}).update(files)
        return cid

    def change(self, branch: str, module: str, version: int) -> dict[str, str]:
        return {f"src/{self.package}/{module}.py": module_text(self.package, module, version)}

    # ------------------------------------------------------------------------------------------ pull requests
    def pull(self, title: str, author: Dev, branch: str, days: float, **fields: object) -> Json:
        """An open pull request of ``branch`` into main (its commits made before)."""
        when = self.b.ago(days)
        record = {"id": self.b.uid("pr_"), "number": self.number(), "title": title, "author": author.login}
        record |= {"head_branch": branch, "base_branch": "main", "state": "open", "created_at": when}
        return self.b.add("repo", "pull_requests", {**record, "updated_at": when, **fields})

    def merged(self, title: str, author: Dev, files: dict[str, str], days: float, body: str = "") -> Json:
        """A pull request merged into main: its commit on a feature branch, the merge commit on main."""
        branch = f"feature/{self.b.uid('', title)[:40]}"
        head = self.commit(branch, author.login, title, files, days + 0.2)
        merge_id = self.b.uid("c_", f"{self.b.rng.getrandbits(28):07x}")
        number = self.number()
        parent = self.heads["main"]
        message = f"Merge pull request #{number} from {branch}\n\n{title}"
        record = {"id": merge_id, "branch": "main", "parent_id": parent, "merged_parent_id": head}
        when = self.b.ago(days)
        self.b.add(
            "repo",
            "commits",
            {**record, "author": self.me.login, "message": message, "changed_files": sorted(files), "created_at": when},
        )
        for path, text in sorted(files.items()):
            self.b.add(
                "repo", "file_versions", {"id": self.b.uid("fv_"), "commit_id": merge_id, "path": path, "content": text}
            )
        self.heads["main"] = merge_id
        self.content["main"].update(files)
        del self.heads[branch]
        pr = {"id": self.b.uid("pr_"), "number": number, "title": title, "body": body, "author": author.login}
        pr |= {"head_branch": branch, "base_branch": "main", "state": "merged", "created_at": self.b.ago(days + 1)}
        pr |= {"updated_at": when, "merged_at": when, "merged_by": self.me.login, "merge_commit_id": merge_id}
        return self.b.add("repo", "pull_requests", pr)

    # ------------------------------------------------------------------------------------------ CI, issues, owners
    def run(self, commit: str, branch: str, days: float, failing: list[str] | None = None, **fields: object) -> Json:
        """A finished CI run (a failure when ``failing``), its pytest log naming the failing tests."""
        b = self.b
        failing = failing or []
        error, _ = ERRORS[b.rng.randrange(len(ERRORS))] if failing else ("", "")
        log = pytest_log(self.tests, failing, error, "assert run() == expected")
        record: Json = {"id": b.uid("run_"), "workflow": "ci", "commit_id": commit, "branch": branch, "log": log}
        record |= {"status": "failure" if failing else "success", "failing_tests": failing}
        record |= {"started_at": b.ago(days), "finished_at": b.ago(days - 0.01)}
        return b.add("repo", "ci_runs", {**record, **fields})

    def issue(self, title: str, author: Dev, days: float, **fields: object) -> Json:
        when = self.b.ago(days)
        record = {"id": self.b.uid("iss_"), "number": self.number(), "title": title, "author": author.login}
        return self.b.add("repo", "issues", {**record, "created_at": when, "updated_at": when, **fields})

    def owners(self, rules: list[tuple[str, list[str]]]) -> None:
        for line, (pattern, who) in enumerate(rules, start=1):
            rule = {"id": self.b.uid("own_"), "pattern": pattern, "owners": [f"@{w}" for w in who], "line": line}
            self.b.add("repo", "codeowners", rule)

    def finish(self) -> None:
        """The branches, as their heads stand now (main protected, one approval needed to merge into it)."""
        for name, head in self.heads.items():
            record: Json = {"id": self.b.uid("br_", name), "name": name, "head_commit_id": head}
            if name in self.protected:
                record |= {"protected": True, "required_approvals": 1}
            self.b.add("repo", "branches", record)


def short_name(path: str) -> str:
    """'tests/test_config.py::test_config_keeps_order' → 'test_config_keeps_order'."""
    return path.split("::")[-1]


@dataclass
class RedMain:
    """main gone red: the commit that broke a test, its author, the first and latest failing runs on main, the
    commits after it (red too, by inheritance), the commits before it (green)."""

    test: str
    breaking: str
    culprit: Dev
    first_run: str
    latest_run: str
    later: list[str]
    earlier: list[str]
    module: str


def red_main(b: TaskBuilder, repo: Repo, modules: list[str]) -> RedMain:
    """A history where one commit on main broke a test of the module it changed and every later run on main fails
    that test; distractors: an open pull request whose branch fails another test, (medium+) an open issue about a
    flaky test, (hard) an earlier one-off red run that went green again. Calls :meth:`Repo.finish`."""
    broken, *rest = modules
    repo.start(modules, days=16)
    culprit = repo.dev()
    others = [repo.dev() for _ in range(3)]
    version = dict.fromkeys(modules, 0)

    def bump(module: str) -> dict[str, str]:
        version[module] += 1
        return repo.change("main", module, version[module])

    earlier = []
    for i in range(2 + b.targets):
        module = rest[i % len(rest)]
        who = b.rng.choice(others)
        cid = repo.commit("main", who.login, f"Tidy up {module} handling", bump(module), 12 - i)
        earlier.append(cid)
        if b.hard and i == 1:
            flaky = b.rng.choice(repo.tests_of[rest[-1]])
            b.distract(repo.run(cid, "main", 12 - i - 0.1, [flaky])["id"])
            cid = repo.commit("main", who.login, f"Stabilise {rest[-1]} test", bump(rest[-1]), 11.5 - i)
            earlier.append(cid)
        repo.run(cid, "main", 11.9 - i)
    test = b.rng.choice(repo.tests_of[broken])
    breaking = repo.commit("main", culprit.login, f"Rework {broken} defaults", bump(broken), 2)
    first = repo.run(breaking, "main", 1.95, [test])
    later, latest = [], first
    for i in range(1 + int(b.hard)):
        module = rest[(i + 1) % len(rest)]
        who = others[i]
        cid = repo.commit("main", who.login, f"Speed up {module}", bump(module), 1 - i * 0.3)
        later.append(cid)
        latest = repo.run(cid, "main", 0.95 - i * 0.3, [test])
    pr_dev = others[-1]
    other_test = b.rng.choice(repo.tests_of[rest[0]])
    head = repo.commit(
        f"feature/{rest[0]}-rewrite", pr_dev.login, f"Rewrite {rest[0]}", repo.change("", rest[0], 9), 0.8
    )
    pr = repo.pull(f"Rewrite {rest[0]}", pr_dev, f"feature/{rest[0]}-rewrite", 0.8, body="Work in progress.")
    b.distract(
        pr["id"], repo.run(head, f"feature/{rest[0]}-rewrite", 0.7, [other_test], pull_request_id=pr["id"])["id"]
    )
    if b.difficulty != "easy":
        flaky_test = short_name(b.rng.choice(repo.tests_of[rest[1]]))
        b.distract(repo.issue(f"Flaky: {flaky_test}", others[1], 6, labels=["ci", "flaky"])["id"])
    repo.finish()
    return RedMain(test, breaking, culprit, str(first["id"]), str(latest["id"]), later, earlier, broken)
