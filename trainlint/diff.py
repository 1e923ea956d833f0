"""Diff mode: the jobs a change touches, checked at the base revision and at the head.

``diff_check(paths, "origin/main")`` answers what a pull request (or the work in progress)
changes: which findings are new, which are fixed, and what each touched job costs per run
before → after. Decisions (see docs/diff.md):

- **Base** is the merge base of ``BASE`` and ``HEAD`` (what ``git diff BASE...HEAD`` and a
  GitHub pull request compare against) when the history holds one, else ``BASE``'s own tree: a
  depth-1 CI checkout shares no history with a base fetched at depth 1, and there (GitHub
  checks out the pull request's merge commit, whose first parent is the base) the base's tree
  is what the merge base would be. **head** is the working tree, so uncommitted and
  untracked (not ignored) files count too: in CI the working tree is the checked-out head, in a
  pre-commit hook it is the change about to be committed.
- The base is read through git, never checked out: its blobs are written into a temporary
  folder (``git ls-tree`` + ``git cat-file --batch``), and the normal check runs there.
- Each revision is checked under **its own** repo configs, as ``trainlint check`` on a checkout
  of it would; a change to a config file touches every job with a file under it.
- A job is touched when one of its source files changed; it is identified by its entry file
  relative to the repository root, and every path in the report is repo-relative.
- Findings are matched by rule, job, file and fingerprint (line-independent), as multisets.
  A matched finding whose waste grew by 10% or more, or whose severity rose, is **worsened**
  (it counts, like a new one). A base finding the head lost is **fixed** only when the fact it
  points at changed (or its job is gone); when that fact is the same, another fact turned the
  rule off (TL305 when only the GPU count changed) and it is listed as **vanished**.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath

from trainlint.assemble import assemble
from trainlint.config import Configs, find_config
from trainlint.discover import EXCLUDED_DIRS, discover
from trainlint.errors import ConfigError
from trainlint.findings import Finding, fingerprint, sort_key, worsened
from trainlint.job import Job
from trainlint.lint import CheckOptions, check
from trainlint.read import Workspace
from trainlint.results import (
    DiffError,
    DiffReport,
    JobCost,
    JobDiff,
    Report,
    Status,
    Worsened,
)
from trainlint.sources.structured import MAX_BYTES
from trainlint.workdir import working_directory

_KEPT_DIRS = frozenset({".trainlint"})  # measurements and baselines live there


def diff_check(
    paths: Sequence[Path | str],
    base: str,
    options: CheckOptions | None = None,
    *,
    repo_root: Path | None = None,
) -> DiffReport:
    """Check the jobs under ``paths`` touched since ``base`` at both revisions and compare.

    ``options`` are the check's for both revisions; ``config`` is not one of them: each
    revision is checked under its own.
    """
    options = options or CheckOptions()
    if options.config is not None:
        raise ConfigError("diff mode reads each revision's own repo config; drop config=")
    if options.baseline is not None:
        options = replace(options, baseline=options.baseline.resolve())
    first = Path(paths[0]) if paths else None
    root = repo_root.resolve() if repo_root else toplevel(_folder(first))
    targets = [_repo_relative(Path(p), root) for p in (paths or ["."])]
    commit = merge_base(root, base)
    changed = changed_files(root, commit)
    report = DiffReport(base=base, base_commit=commit, changed_files=sorted(changed))
    with tempfile.TemporaryDirectory(prefix="trainlint-base-") as tmp:
        base_tree = Path(tmp)
        materialise(root, commit, base_tree)
        touched = _touched(base_tree, targets, changed) | _touched(root, targets, changed)
        before = _evaluate(base_tree, targets, touched, options)
    after = _evaluate(root, targets, touched, options)
    _compare(report, before, after)
    report._head = after
    return report


# -- git ---------------------------------------------------------------------------------------


def git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run git in ``root`` (no shell); a failure is a ConfigError with git's own words."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True,
                              check=False)  # fmt: skip
    except FileNotFoundError:
        raise ConfigError("diff mode needs git, and no `git` executable was found") from None
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip().splitlines()
        raise ConfigError(f"git {args[0]} failed: {detail[-1] if detail else done.returncode}")
    return done.stdout


def toplevel(start: Path) -> Path:
    try:
        out = git(start, "rev-parse", "--show-toplevel")
    except ConfigError:
        raise ConfigError(f"--diff needs a git repository, and {start} is not in one") from None
    return Path(out.decode().strip()).resolve()


def merge_base(root: Path, ref: str) -> str:
    """The commit to compare with: the merge base of ``ref`` and HEAD (``BASE...HEAD``) when
    the history holds one, else ``ref`` itself (a depth-1 clone with the base fetched at depth
    1 shares no history; in a pull request's merge checkout the base is HEAD's first parent,
    which is what the merge base would be). A ref git does not have is a clear error that
    says how to fetch it."""
    if not ref or ref.startswith("-"):
        raise ConfigError(f"--diff: {ref!r} is not a git revision")
    try:
        sha = git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except ConfigError:
        raise ConfigError(_missing(ref, root)) from None
    commit = sha.decode().strip()
    try:
        return git(root, "merge-base", commit, "HEAD").decode().strip()
    except ConfigError:  # no shared history (shallow or unrelated): compare the trees
        return commit


def _missing(ref: str, root: Path) -> str:
    """Why ``ref`` cannot be compared, and the command that fetches it."""
    shallow = git(root, "rev-parse", "--is-shallow-repository").decode().strip() == "true"
    where = "this shallow clone" if shallow else root
    return (f"--diff: unknown git revision {ref!r} in {where}; fetch it first, e.g. "
            f"`git fetch --depth=1 origin {ref}`")  # fmt: skip


def changed_files(root: Path, commit: str) -> set[str]:
    """Files that differ between ``commit`` and the working tree, plus untracked ones."""
    tracked = git(root, "diff", "--name-only", "--no-renames", "-z", commit, "--")
    untracked = git(root, "ls-files", "--others", "--exclude-standard", "-z", "--")
    return {name for name in (tracked + untracked).decode().split("\0") if name}


def materialise(root: Path, commit: str, target: Path) -> int:
    """Write the files trainlint could read at ``commit`` under ``target``; returns the count.

    Skipped: blobs over the size no source reads, folders discovery never enters, submodules,
    and paths that would land outside ``target`` (``..`` or an absolute name in a crafted
    tree). Files are written first and symlinks last, so no write goes through a link, and a
    link is kept only when the OS would resolve it inside the tree (``_resolves_inside``).
    """
    wanted = _listing(root, commit)
    out = git(root, "cat-file", "--batch", stdin="".join(f"{s}\n" for _, s, _ in wanted).encode())
    links: dict[str, str] = {}
    offset = 0
    for mode, _, path in wanted:
        header_end = out.index(b"\n", offset)
        length = int(out[offset:header_end].split()[2])
        body = out[header_end + 1 : header_end + 1 + length]
        offset = header_end + 1 + length + 1
        if mode == "120000":
            links[path] = body.decode(errors="replace")
        else:
            _write(target, path, mode, body)
    for path, link in links.items():
        if _resolves_inside(path, links):
            _link(target / path, link)
    return len(wanted)


def _listing(root: Path, commit: str) -> list[tuple[str, str, str]]:
    """(mode, sha, path) of each blob at ``commit`` worth writing."""
    listing = git(root, "ls-tree", "-r", "-z", "--full-tree", "-l", commit)
    wanted: list[tuple[str, str, str]] = []
    for entry in listing.decode().split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, sha, size = meta.split()
        folders = PurePosixPath(path).parts[:-1]
        skipped = any(p in EXCLUDED_DIRS and p not in _KEPT_DIRS for p in folders)
        if kind != "blob" or int(size) > MAX_BYTES or skipped or _escapes(path):
            continue
        wanted.append((mode, sha, path))
    return wanted


def _escapes(path: str) -> bool:
    """A tree path that would not land inside the tree: git refuses to check out ``..``,
    ``.`` or empty names, but a crafted tree holds them (``git mktree`` takes ``..``)."""
    separators = "/" + (os.sep if os.sep != "/" else "") + (os.altsep or "")
    parts = path.translate({ord(sep): "/" for sep in separators}).split("/")
    return os.path.isabs(path) or any(part in ("", ".", "..") for part in parts)


def _write(target: Path, path: str, mode: str, body: bytes) -> None:
    """One file; an entry a crafted tree makes impossible (a file where a folder must be) is
    left out."""
    destination = target / path
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(body)
    except OSError:
        return
    if mode == "100755":
        destination.chmod(0o755)


def _link(destination: Path, link: str) -> None:
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.symlink_to(link)
    except OSError:  # a path a crafted tree also holds as a file or folder
        return


MAX_LINK_HOPS = 40
"""Links followed in one resolution before giving up (Linux's MAXSYMLINKS)."""


def _resolves_inside(path: str, links: dict[str, str]) -> bool:
    """Whether the link at ``path`` leads inside the tree when the OS resolves it: from the
    top, component by component — the link's folder, then its text — each link met expanded
    in place from the tree's own links (so ``a/b -> ..`` then ``a/c -> b/../x`` is followed
    as the OS does, not as ``normpath`` reads it). An absolute link, a ``..`` above the top
    or more than ``MAX_LINK_HOPS`` links refuse it."""
    folder, _, _ = path.rpartition("/")
    if links[path].startswith("/"):
        return False
    where: list[str] = []
    pending = deque([*folder.split("/"), *links[path].split("/")])
    hops = 1
    while pending:
        part = pending.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            if not where:
                return False
            where.pop()
            continue
        text = links.get("/".join([*where, part]))
        if text is None:
            where.append(part)
            continue
        hops += 1
        if hops > MAX_LINK_HOPS or text.startswith("/"):
            return False
        pending.extendleft(reversed(text.split("/")))
    return True


# -- both sides --------------------------------------------------------------------------------


def _folder(path: Path | None) -> Path:
    """Where to look for the repository: the first path's folder, else the current one."""
    if path is None or not path.exists():
        return Path.cwd()
    return path if path.is_dir() else path.parent


def _repo_relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix() or "."
    except ValueError:
        raise ConfigError(f"--diff: {path} is outside the git repository {root}") from None


def _existing(targets: Sequence[str]) -> list[Path]:
    return [Path(t) for t in targets if Path(t).exists()]


def _touched(tree: Path, targets: Sequence[str], changed: set[str]) -> set[str]:
    """Ids of the jobs under ``targets`` in ``tree`` with a changed source file (all of them
    when the repo config itself changed)."""
    with working_directory(tree):
        paths = _existing(targets)
        if not paths:
            return set()
        configs = Configs(find_config(paths[0]))
        jobs = assemble(discover(paths), Workspace(config=configs.run, configs=configs))
        run = configs.run.source
        if run is not None and _relative(run, tree) in changed:  # it may be extended
            return {job.id for job in jobs}
        by_config = {job.id for job in jobs if _configs_of(job, configs, tree) & changed}
    return by_config | {job.id for job in jobs if any(_norm(s.path) in changed
                                                       for s in job.sources)}  # fmt: skip


def _configs_of(job: Job, configs: Configs, tree: Path) -> set[str]:
    """The config files (repo-relative) that configure a job's files: each file's closest,
    so a change to a nested ``.trainlint.toml`` touches the jobs under it."""
    sources = (configs.of(source.path).source for source in job.sources)
    return {_relative(source, tree) for source in sources if source is not None}


def _evaluate(tree: Path, targets: Sequence[str], ids: set[str], options: CheckOptions) -> Report:
    """The normal check at ``tree``, on the files of the jobs in ``ids`` only."""
    with working_directory(tree):
        paths = _existing(targets)
        if not paths or not ids:
            return Report()
        config = find_config(paths[0])
        jobs = [j for j in assemble(discover(paths), Workspace(config=config)) if j.id in ids]
        files = sorted({s.path for job in jobs for s in job.sources if Path(s.path).exists()})
        if not files:
            return Report()
        report = check([Path(f) for f in files], replace(options, config=config, root=tree))
    report.jobs = [job for job in report.jobs if job.id in ids]
    return report


Key = tuple[str, str, str, str]


def _key(finding: Finding) -> Key:
    return finding.rule, finding.job, finding.file, finding.fingerprint


def _compare(report: DiffReport, before: Report, after: Report) -> None:
    """Pair the head's findings with the base's by key (as multisets): new, unchanged,
    worsened, newly suppressed; then the base's counted findings the head lost: fixed or
    vanished (``_gone``)."""
    counted = _by_key(f for f in before.findings if f.suppression is None)
    suppressed = _by_key(f for f in before.findings if f.suppression is not None)
    for finding in after.findings:
        _pair(report, finding, counted, suppressed)
    heads = {job.id: job for job in after.jobs}
    bases = {job.id: job for job in before.jobs}
    for finding in (f for queue in counted.values() for f in queue):
        fixed = _fixed(finding, bases.get(finding.job), heads.get(finding.job))
        (report.fixed if fixed else report.vanished).append(finding)
    report.fixed.sort(key=sort_key)
    report.vanished.sort(key=sort_key)
    report.worsened.sort(key=lambda w: (-(w.usd_delta or 0.0), *sort_key(w)))
    report.errors = [DiffError(side="base", **e.model_dump()) for e in before.errors] + [
        DiffError(side="head", **e.model_dump()) for e in after.errors
    ]
    _jobs(report, before, after)


def _by_key(findings: Iterable[Finding]) -> dict[Key, deque[Finding]]:
    queues: dict[Key, deque[Finding]] = {}
    for finding in findings:
        queues.setdefault(_key(finding), deque()).append(finding)
    return queues


def _pair(
    report: DiffReport,
    finding: Finding,
    counted: dict[Key, deque[Finding]],
    suppressed: dict[Key, deque[Finding]],
) -> None:
    """One head finding into its bucket, using up the base finding it matches: a counted one
    first, else (for a finding that counts now) one the base suppressed, which makes it new
    unless it got worse (a baseline entry stops suppressing a worsened finding)."""
    base = _take(counted, finding)
    if finding.suppression is not None:
        if base is not None:
            report.suppressed.append(finding)
        return
    base = base or _take(suppressed, finding)
    if base is not None and worsened(base, finding):
        report.worsened.append(Worsened(**finding.model_dump(), waste_before=base.waste,
                                        severity_before=base.severity))  # fmt: skip
    elif base is not None and base.suppression is None:
        report.unchanged.append(finding)
    else:
        report.new.append(finding)


def _take(queues: dict[Key, deque[Finding]], finding: Finding) -> Finding | None:
    queue = queues.get(_key(finding))
    return queue.popleft() if queue else None


def _fixed(finding: Finding, base: Job | None, head: Job | None) -> bool:
    """Whether a base finding the head lost was fixed: its job is gone, or the fact it points
    at (the pointer whose fingerprint it carries) differs at the head. A finding whose fact is
    the same at both revisions vanished because some other fact turned its rule off (TL305
    when only the GPU count changed): that is not a fix. A pointer that cannot be recovered
    counts as fixed, as before."""
    if base is None or head is None:
        return True
    pointer = _pointer(finding, base)
    return pointer is None or _fact(base, pointer) != _fact(head, pointer)


def _pointer(finding: Finding, job: Job) -> str | None:
    """The JSON pointer the rule returned, found again by its fingerprint among the job's."""
    for pointer in _pointers(job):
        if fingerprint(finding.rule, pointer, finding.message) == finding.fingerprint:
            return pointer
    return None


def _pointers(job: Job) -> list[str]:
    """Every pointer into the job as Rego saw it, plus those its provenance and defaults
    name, with their ancestors."""
    found: set[str] = {""}
    pending: list[tuple[str, object]] = [("", job.as_input())]
    while pending:
        here, value = pending.pop()
        found.add(here)
        children = (value.items() if isinstance(value, dict)
                    else enumerate(value) if isinstance(value, list) else ())  # fmt: skip
        pending += [(f"{here}/{_escape(str(k))}", v) for k, v in children]
    for named in [*job.provenance, *job.defaults, *job.derived]:
        parts = named.split("/")
        found.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    return sorted(found)


def _fact(job: Job, pointer: str) -> tuple[object, object]:
    """The value at ``pointer`` and the framework default recorded for it."""
    value: object = job.as_input()
    for part in pointer.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            value = value.get(key)
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            value = None
    default = job.defaults.get(pointer)
    return value, default.value if default else None


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _jobs(report: DiffReport, before: Report, after: Report) -> None:
    old = {job.id: JobCost.of(job) for job in before.jobs}
    new = {job.id: JobCost.of(job) for job in after.jobs}
    usd_before = usd_after = 0.0
    known = False
    for job in sorted(old.keys() | new.keys()):
        status: Status = "added" if job not in old else "removed" if job not in new else "modified"
        entry = JobDiff(job=job, status=status, before=old.get(job), after=new.get(job),
                        new=sum(f.job == job for f in report.new),
                        fixed=sum(f.job == job for f in report.fixed),
                        worsened=sum(f.job == job for f in report.worsened))  # fmt: skip
        report.jobs.append(entry)
        sides = [c for c in (entry.before, entry.after) if c is not None]
        if all(c.usd is not None for c in sides):  # a job of unknown cost is left out of both
            known = True
            usd_before += entry.before.usd or 0.0 if entry.before else 0.0
            usd_after += entry.after.usd or 0.0 if entry.after else 0.0
    report.usd_before, report.usd_after = (usd_before, usd_after) if known else (None, None)


def _relative(path: Path, tree: Path) -> str:
    try:
        return path.resolve().relative_to(tree.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _norm(path: str) -> str:
    return PurePosixPath(os.path.normpath(path)).as_posix()
