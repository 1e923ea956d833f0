"""A persistent cache of a check's work, as ruff keeps one (issue 19): a re-run of an
unchanged tree reuses the whole load and its report; after an edit, only the edited files
are parsed again, and only the jobs whose closures include them are assembled, estimated,
evaluated and given findings again.

Entries live under ``<cache-dir>/<version>-<format>-<code digest>/<kind>/<scope>``, so another
trainlint version, or an editable install whose modules changed, never reads them; a scope is
one set of paths checked from one project root. Each entry is one file, read and written
whole (a file per item costs more than the work it saves on a slow file system). The kinds:

* ``run``: a whole load (outcomes, measurement folders, which documents the document table
  holds), valid only while every file it read, each folder it looked in for a config, each
  place a reference was looked for in vain and each measurement folder is as it was
  (``Dependencies``); ``report`` (in ``lint``): the report of a load, by its identity and
  every setting the report depends on;
* ``carry``: what a load hands the next run while every config holds (``Carried``): each
  file's document key (``KeyMemo``), each folder's config, and each file's closure with the
  job it rooted, finished (``ClosureMemo``), which also hold the stored load's jobs;
* tables (``Table``, 16 shards each, so an edit rewrites one or two): ``document``, each
  file's document as a ``Stub`` (keyed by its path, forced format and content digest, held
  while every file its reading consulted is unchanged); ``estimate``, each job's estimates
  (by the job before estimating and the pack); ``evaluation``, each job's rule results (by
  its Rego input, the engine and the pack); ``findings`` (in ``lint``), each job's findings
  with their fixes.

Trust: entries are pickles, and a repository could ship a ``.trainlint_cache`` of its own.
Each entry is signed (HMAC-SHA256) with a key kept in the user's cache folder, never in the
repository, so an entry this user's trainlint did not write is ignored like a corrupt one:
a cache never raises and never decides a result, it only skips work. Writes go to a
temporary file renamed into place, so concurrent runs never read half an entry.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import pickle
import secrets
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainlint import __version__
from trainlint.discover import open_regular, resolved
from trainlint.read import Sighting, Summary, display, present

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from trainlint.config import Configs
    from trainlint.job import Job
    from trainlint.read import Workspace
    from trainlint.sources.base import Document, Skipped

CACHE_DIR = ".trainlint_cache"
"""The default cache folder, in the project root (``cache-dir`` in the config moves it)."""
FORMAT = 8
"""Bumped when what an entry holds changes shape within a version."""
SIGNATURE = 32  # bytes of HMAC-SHA256 before each entry's pickle
GITIGNORE = "# Automatically created by trainlint.\n*\n"
CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# trainlint's cache.\n"


def digest(*parts: str | bytes) -> str:
    """A key over ``parts``, each length-prefixed so ("ab", "c") and ("a", "bc") differ."""
    hasher = hashlib.blake2b(digest_size=20)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "little"))
        hasher.update(data)
    return hasher.hexdigest()


def file_digest(path: str | Path) -> str | None:
    """The digest of a regular file's bytes; None for anything that is not one (a FIFO is
    never opened) or cannot be read: such a file is never served from the cache."""
    try:
        with open_regular(Path(path)) as handle:
            return digest(handle.read())
    except OSError:
        return None


@dataclass(frozen=True)
class Cache:
    """One cache folder of this trainlint version; ``get`` and ``put`` never raise."""

    folder: Path
    secret: bytes

    @classmethod
    def open(cls, folder: Path) -> Cache | None:
        """The cache in ``folder`` (created, with a ``.gitignore`` of ``*`` as ruff's);
        None when it cannot be created or the user's key cannot be had: no cache, no error."""
        try:
            _create(folder)
            secret = _secret()
        except OSError:
            return None
        return cls(folder / f"{__version__}-{FORMAT}-{code_digest()}", secret)

    def get(self, kind: str, key: str) -> Any:
        """The value stored under ``key``; None when absent, foreign, corrupt or unsigned."""
        try:
            blob = (self.folder / kind / key).read_bytes()
        except OSError:
            return None
        signature, body = blob[:SIGNATURE], blob[SIGNATURE:]
        if not hmac.compare_digest(signature, self._sign(body)):
            return None
        try:
            return pickle.loads(body)  # signed by this user's key (the module's docstring)
        except Exception:  # a stale or damaged entry is a miss, never an error
            return None

    def put(self, kind: str, key: str, value: object) -> None:
        """Store ``value``: written to a temporary file, then renamed into place."""
        try:
            body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return
        folder = self.folder / kind
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        except OSError:
            return
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(self._sign(body) + body)
            os.replace(temporary, folder / key)
        except OSError:
            Path(temporary).unlink(missing_ok=True)

    def _sign(self, body: bytes) -> bytes:
        return hmac.digest(self.secret, body, "sha256")


def _create(folder: Path) -> None:
    """The cache folder, marked as ruff marks its own: ignored by git, tagged as a cache."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
        if not (folder / name).exists():
            (folder / name).write_text(text, encoding="utf-8")


@functools.cache
def _secret() -> bytes:
    """This user's signing key, created once (mode 0600) in the user's cache folder."""
    home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(home) / "trainlint" / "cache.key"
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        key = b""
    if len(key) == SIGNATURE:
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another run made it first, or a damaged key: use the file's
        key = path.read_bytes()
        if len(key) != SIGNATURE:
            raise OSError(f"{path}: not a trainlint cache key") from None
        return key
    key = secrets.token_bytes(SIGNATURE)
    with os.fdopen(handle, "wb") as file:
        file.write(key)
    return key


@dataclass
class Carried:
    """What one load hands the next while every config holds (``KeyMemo``'s document keys,
    ``ClosureMemo``'s closures, each folder's config), and what this load took on the way:
    each file's digest (hashed once), the folders' listings, the documents the table holds."""

    digests: Digests = field(default_factory=dict)
    keys: KeyMemo = field(default_factory=lambda: KeyMemo())
    closures: ClosureMemo = field(init=False)
    stored: Stored = field(default_factory=dict)
    """The load's documents the document table holds (``fill_documents``)."""
    listed: Listed = field(default_factory=dict)
    """Each folder's config files, as checking the last load listed them."""
    configs: dict[str, str | None] = field(default_factory=dict)
    """Each folder's config file as the last load found it (``Configs.found``), for the
    folders whose listing held (where its configs hold)."""

    def __post_init__(self) -> None:
        self.closures = ClosureMemo(self.digests)

    def made(self, salt: str, configs: Configs) -> Carry:
        """What this load hands on, for a run whose config has digest ``salt``."""
        return salt, self.keys.made, self.closures.records(), configs.found()


Carry = tuple[str, "DocumentKeys", dict[str, "Closure"], dict[str, "str | None"]]
"""What a load hands the next run (``Carried.made``): the run config's digest, the document
keys, the closures, each folder's config file."""


# What a whole load depends on ---------------------------------------------------------------


@dataclass(frozen=True)
class Dependencies:
    """What a cached load read, to tell whether it still holds: each file's digest, the
    config files present in each folder searched for one, each measurement folder's files."""

    files: tuple[tuple[str, str | None], ...]
    config_folders: tuple[tuple[str, tuple[str, ...]], ...]
    measurements: tuple[tuple[str, str], ...]
    configs: frozenset[str] = frozenset()
    """Which of ``files`` are config files (found in a searched folder, a config's source or
    ``extend`` base): while they and ``config_folders`` hold, every file has its config."""

    @classmethod
    def of(
        cls,
        files: Iterable[Path],
        config_folders: Mapping[str, tuple[str, ...]],
        measured: Iterable[Path],
        digests: Mapping[Path, str | None],
        configs: Iterable[Path] = (),
    ) -> Dependencies:
        """``config_folders``: each folder searched and its config files (``configs_in``);
        ``digests``: the files' digests taken before they were parsed (a file edited
        during the run then differs next time); the others are taken now."""
        named = sorted((str(path), path) for path in set(files))  # strings sort fast, Paths not
        return cls(
            tuple(
                (name, digests[path] if path in digests else file_digest(path))
                for name, path in named
            ),
            tuple(sorted(config_folders.items())),
            tuple((str(folder), folder_digest(folder)) for folder in sorted(set(measured))),
            frozenset(map(str, configs)),
        )

    def hold(self, seen: dict[str, str | None] | None = None) -> bool:
        """Whether every file, config folder and measurement folder is as it was; each
        file's digest taken is kept in ``seen`` when given (until the first that differs)."""
        seen = {} if seen is None else seen
        for path, known in self.files:
            seen[path] = file_digest(path)
            if seen[path] != known:
                return False
        configs = all(configs_in(folder) == known for folder, known in self.config_folders)
        return configs and self.measurements_hold()

    def measurements_hold(self) -> bool:
        """Whether every measurement folder is as it was."""
        return all(folder_digest(Path(f)) == known for f, known in self.measurements)

    def configs_hold(self, seen: Mapping[str, str | None], listed: Listed) -> bool:
        """Whether every config file and each folder searched for one is as it was (each
        file's digest from ``seen`` where ``hold`` took it; each folder's config files
        kept in ``listed``, for the next load's dependencies)."""
        return all(
            (seen[path] if path in seen else file_digest(path)) == known
            for path, known in self.files
            if path in self.configs
        ) and all(_listed(folder, listed) == known for folder, known in self.config_folders)


Listed = dict[str, tuple[str, ...]]
"""Each folder's config files (``configs_in``) as one run listed them."""


def _listed(folder: str, listed: Listed) -> tuple[str, ...]:
    """``configs_in``, each folder listed once per run (kept in ``listed``)."""
    if folder not in listed:
        listed[folder] = configs_in(folder)
    return listed[folder]


def configs_in(folder: str) -> tuple[str, ...]:
    """The config files in ``folder`` (a new one changes every file under it)."""
    from trainlint.config import CONFIG_FILES

    try:
        names = set(os.listdir(folder))
    except OSError:
        return ()
    return tuple(name for name in CONFIG_FILES if name in names)


def folder_digest(folder: Path) -> str:
    """A digest of every file under ``folder`` (their paths and bytes); "" when absent."""
    if not folder.is_dir():
        return ""
    parts: list[str] = []
    for top, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(top, name)
            parts += [path, file_digest(path) or "-"]
    return digest(*parts)


def data_digest(value: object) -> str:
    """A key over JSON-like data (a pack's data, a job's input); keys sorted."""
    return digest(json.dumps(value, sort_keys=True, default=str))


def pack_digest(modules: dict[str, str], data: object) -> str:
    """The pack as an evaluation sees it: every module's text and the data."""
    return digest(*(part for name in sorted(modules) for part in (name, modules[name])),
                  data_digest(data))  # fmt: skip


NONDETERMINISTIC = ("time.now_ns", "rand.intn", "http.send", "uuid.rfc4122", "opa.runtime")
"""Builtins whose value differs from one run to the next: a pack that calls one is evaluated
anew every run (its results are never cached)."""


def deterministic(modules: dict[str, str]) -> bool:
    """Whether every module's results depend on the input and data alone."""
    return not any(call in text for text in modules.values() for call in NONDETERMINISTIC)


SHARDS = "0123456789abcdef"
"""A table's shards, by its keys' first hex digit: an edit rewrites the one or two shards its
old and new keys fall in, not every entry of the scope (pickling 1,000 documents takes
~0.1 s)."""


class Table:
    """One kind's entries of one scope, kept in one cache entry per shard (``SHARDS``): each
    read on first use, written by ``save`` where anything was added or dropped. A pruning
    save (a complete run) keeps, of each shard it reads or adds to, only the entries used,
    made or touched (``touch``: in use, though not read), so what no longer matches any
    file drops out; a partial run (``--changed``, or a load that reused finished jobs)
    keeps the others too. A shard neither read nor added to is left as it was, unless the
    run asked for every key in use (``save(complete=True)``)."""

    def __init__(self, cache: Cache, kind: str, scope: str) -> None:
        self.cache, self.kind, self.scope = cache, kind, scope
        self._stored: dict[str, dict[str, Any]] = {}
        self._used: dict[str, dict[str, Any]] = {shard: {} for shard in SHARDS}
        self._touched: dict[str, set[str]] = {shard: set() for shard in SHARDS}
        self._added: set[str] = set()

    def get(self, key: str) -> Any:
        value = self._shard(_shard(key)).get(key)
        if value is not None:
            self._used[_shard(key)][key] = value
        return value

    def touch(self, key: str) -> None:
        """Keep ``key``'s entry through a pruning save without reading it."""
        self._touched[_shard(key)].add(key)

    def put(self, key: str, value: object) -> None:
        self._used[_shard(key)][key] = value
        self._added.add(_shard(key))

    def save(self, *, prune: bool = True, complete: bool = False) -> None:
        """Write the shards added to, and those a pruning save drops entries from; with
        ``complete`` (the run asked for every key in use), every shard is read to prune."""
        for shard in SHARDS:
            if shard not in self._stored and shard not in self._added and not complete:
                continue  # neither read nor added to: as it was
            used, old = self._used[shard], self._shard(shard)
            if prune:
                kept = {key: old[key] for key in self._touched[shard] if key in old}
                kept.update(used)
            else:
                kept = {**old, **used}
            if shard in self._added or len(kept) < len(old):
                self.cache.put(self.kind, f"{self.scope}-{shard}", kept)

    def _shard(self, shard: str) -> dict[str, Any]:
        if shard not in self._stored:
            entry = self.cache.get(self.kind, f"{self.scope}-{shard}")
            self._stored[shard] = entry if isinstance(entry, dict) else {}
        return self._stored[shard]


def _shard(key: str) -> str:
    """A key's shard (``SHARDS``): its first character where that is one, else the first."""
    return key[:1] if key[:1] in SHARDS else SHARDS[0]


# The load's hooks (``lint._load``) ----------------------------------------------------------


def forced_format(space: Workspace, path: Path) -> str | None:
    """The format the file's config forces, as ``Workspace.load`` asks for it."""
    config = space.configs.of(path) if space.configs is not None else space.config
    try:
        return config.forced_format(path)
    except (OSError, RuntimeError):  # a symlink loop: read_file reports it
        return None


Digests = dict[Path, "str | None"]
"""Each file's digest, by resolved path, as one run took it (before parsing)."""


def document_key(space: Workspace, path: Path, digests: Digests | None = None) -> str | None:
    """A candidate's document key: its names, forced format and bytes (None: not cached);
    the digest is kept in ``digests`` when given."""
    content = file_digest(path)
    if digests is not None:
        digests[resolved(path)] = content
    if content is None:
        return None
    return _key(space, path, content)


def _key(space: Workspace, path: Path, content: str) -> str:
    return digest(display(path), str(resolved(path)), forced_format(space, path) or "", content)


DocumentKeys = dict[str, tuple[str, str]]
"""Each candidate's document key as one run made it: the path as found → (its content
digest, its key)."""


@dataclass
class KeyMemo:
    """Document keys carried from one run to the next (~0.25 s for 1,000 files, most of it
    finding each file's config): ``known``, the last run's, given only while every config
    file, each folder searched for one and the run's config are as they were (a key holds
    the file's names and forced format, which then are too), so a file whose bytes are
    unchanged keeps its key; ``seen``, the digests that validating the last load took this
    run (each file is read once); ``made``, this run's, for the next."""

    known: DocumentKeys = field(default_factory=dict)
    seen: dict[str, str | None] = field(default_factory=dict)
    made: DocumentKeys = field(default_factory=dict)

    def key(self, space: Workspace, path: Path, digests: Digests) -> str | None:
        """``document_key``, the last run's where the file's bytes are unchanged."""
        real = resolved(path)
        content = self.seen[str(real)] if str(real) in self.seen else file_digest(path)
        digests[real] = content
        if content is None:
            return None
        prior = self.known.get(str(path))
        key = prior[1] if prior is not None and prior[0] == content else _key(space, path, content)
        self.made[str(path)] = (content, key)
        return key


@dataclass(frozen=True)
class Closure:
    """A file's closure as assembly found it (``assemble.ClosureMemo``), kept for the next
    run: each look at the file system following its references made, with what it saw
    (``seen``: a file's resolved path and digest, a place's absence, a Hydra app's digest),
    the files it owns, its size, and the job it rooted as the load finished it (measured
    and estimated) in JSON (``judged``: built and judged; ``job_json`` None then: no job)."""

    seen: tuple[tuple[str, str, str], ...]
    owned: tuple[str, ...]
    size: int
    job_json: bytes | None = None
    judged: bool = False
    fingerprint: str = ""
    """A digest of ``seen``: of every file of the job, each with its bytes."""
    measured_in: str = ""
    """The folder the job's probe measurements are looked for in ("": not known)."""

    @property
    def input_digest(self) -> str:
        """The digest of the job's JSON (with aliases: what its Rego input is made from),
        as ``lint`` keys evaluations by ("": no job)."""
        return digest(self.job_json) if self.job_json is not None else ""


@dataclass(frozen=True)
class Recall:
    """A closure that still holds, as ``assemble`` takes it (``assemble.Recalled``)."""

    key: str
    kept: Closure
    owned: set[Path]
    memo: ClosureMemo

    @property
    def size(self) -> int:
        return self.kept.size

    @property
    def judged(self) -> bool:
        return self.kept.judged

    def job(self) -> Job | None:
        """The job the closure rooted last time, finished (``ClosureMemo.finished``)."""
        if self.kept.job_json is None:
            return None
        job = restored_job(self.kept)
        self.memo.finished.add(id(job))
        self.memo.roots[id(job)] = self.key
        if self.kept.measured_in:
            self.memo.measured_in[id(job)] = self.kept.measured_in
        return job


def restored_job(closure: Closure) -> Job:
    """The job a closure rooted, as the load that made it finished it; ValueError (pydantic's
    ValidationError) when it no longer validates (a job model changed within a version)."""
    return _job().validate_json(closure.job_json or b"")


@functools.cache
def _job() -> TypeAdapter[Job]:
    from pydantic import TypeAdapter

    from trainlint.job import Job

    return TypeAdapter(Job)


@dataclass
class ClosureMemo:
    """Closures carried from one run to the next (``assemble``): a file's closure, and the
    job it rooted, are reused while every sighting its assembly made holds — each file it
    loaded has the bytes and real path it had, each place looked in vain is still empty,
    each file found still resolves where it did, each Hydra app read is unchanged. Given
    only while every config and every measurement folder holds and the pack is the same
    (``RunMemo.get``), so a reused job is reused finished: measured and estimated as it
    was (``finished``); ``digests`` are the run's (taken before parsing, so a record never
    vouches for bytes its documents were not read from)."""

    digests: Digests
    known: dict[str, Closure] = field(default_factory=dict)
    made: dict[str, Closure] = field(default_factory=dict)
    finished: set[int] = field(default_factory=set)
    """The ``id`` of each job reused finished (no measuring or estimating again)."""
    roots: dict[int, str] = field(default_factory=dict)
    """The key of each job's closure (its entry file's real path), by the job's ``id``."""
    measured_in: dict[int, str] = field(default_factory=dict)
    """The folder each job's measurements are looked for in, by the job's ``id``: what the
    load found for it, or, for a job reused finished, what the last load did (its configs
    and its entry file's real path hold, so the folder does)."""
    _judged: dict[str, Job | None] = field(default_factory=dict)
    _names: dict[str, str | None] = field(default_factory=dict)
    """``digests`` by the real path's name (taken at the first recall: every candidate's)."""

    def recall(self, key: Path, space: Workspace) -> Recall | None:
        kept = self.known.get(str(key))
        if kept is None or not all(self._holds(sighting, space) for sighting in kept.seen):
            return None
        self.made[str(key)] = kept
        return Recall(str(key), kept, set(map(Path, kept.owned)), self)

    def keep(self, key: Path, sightings: list[Sighting], owned: set[Path], size: int) -> None:
        seen = tuple((kind, path, self._seen(kind, Path(path))) for kind, path in
                     dict.fromkeys(sightings))  # fmt: skip
        kept = Closure(seen, tuple(map(str, owned)), size, fingerprint=digest(repr(seen)))
        self.made[str(key)] = kept

    def judge(self, key: Path, job: Job | None) -> None:
        """The job built from the closure of ``key`` (None: no job), kept as it is once the
        load has finished it (``records``)."""
        if str(key) in self.made:
            self._judged[str(key)] = job
            if job is not None:
                self.roots[id(job)] = str(key)

    def records(self) -> dict[str, Closure]:
        """The closures of this run, each with its job as finished now."""
        made = dict(self.made)
        for key, job in self._judged.items():
            json = None if job is None else _job().dump_json(job, by_alias=True)
            measured = self.measured_in.get(id(job), "") if job is not None else ""
            made[key] = replace(made[key], job_json=json, judged=True, measured_in=measured)
        return made

    def _seen(self, kind: str, path: Path) -> str:
        """What a sighting of ``kind`` sees at ``path`` now ("-": nothing to vouch for)."""
        if kind == "absent":
            return "absent" if not present(path) else "-"
        if kind == "present":
            return str(resolved(path)) if present(path) else "-"
        if kind in ("text", "file"):  # what a reader consulted (``Document.consulted``)
            return consulted_now(kind, str(path), self.digests)
        content = self._digest(path)
        return "-" if content is None else f"{resolved(path)}:{content}"

    def _digest(self, path: Path) -> str | None:
        real = resolved(path)
        if real not in self.digests:
            self.digests[real] = file_digest(path)
        return self.digests[real]

    def _holds(self, sighting: tuple[str, str, str], space: Workspace) -> bool:
        """``_seen`` again, by the names where it can (a ``Path`` per sighting costs more
        than the check): a file's digest by its real path's name."""
        kind, name, value = sighting
        if kind in ("text", "file"):  # what a reader consulted: its absence too
            return consulted_now(kind, name, self.digests) == value
        if value == "-":
            return False
        if kind == "absent":
            if present(name):
                return False
            space.probed.add(Path(name))  # still a dependency of the load (``load_dependencies``)
            return True
        if kind != "doc":
            return self._seen(kind, Path(name)) == value
        real, _, content = value.rpartition(":")
        if self._named_digest(real) != content:
            return False
        if not space.has(Path(real)):  # no candidate: loaded as following the reference did
            space.load(Path(name))
        return True

    def _named_digest(self, real: str) -> str | None:
        """The digest of the file whose real path is ``real``, as the run took it."""
        if not self._names:
            self._names.update((str(path), known) for path, known in self.digests.items())
        if real not in self._names:
            self._names[real] = self._digest(Path(real))
        return self._names[real]


Misses = dict[Path, tuple[Path, str]]
"""The candidates to parse this run: resolved path → (the path as found, its document key)."""


Stored = dict[Path, tuple[str, str]]
"""The documents of a load the document table holds: resolved path → (the path as found, its
document key). A stored load keeps these by reference (``restored_documents``)."""


@dataclass(frozen=True)
class Stub:
    """A document as the document table keeps it: pickled apart, read on first use
    (``read.Stub``), with its ``Summary`` (what outcomes and suppressions read of it)."""

    summary: Summary
    pickled: bytes
    consulted: tuple[tuple[str, str, str], ...] = ()
    """The other files its reading consulted (``Document.consulted``), each with what it saw
    (``consulted_now``): the document holds only while they are as they were."""

    @classmethod
    def of(cls, document: Document | Skipped) -> Stub:
        from trainlint.files import summary_of

        pickled = pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL)
        consulted = getattr(document, "consulted", ())
        seen = tuple((kind, path, consulted_now(kind, path)) for kind, path in consulted)
        return cls(summary_of(document), pickled, seen)

    def holds(self, digests: Digests) -> bool:
        """Whether every file its reading consulted is as it was (each file hashed once a
        run: its digest kept in ``digests``)."""
        return all(
            consulted_now(kind, path, digests) == seen for kind, path, seen in self.consulted
        )

    def document(self) -> Document | Skipped:
        return pickle.loads(self.pickled)  # type: ignore[no-any-return]  # a signed entry's


def consulted_now(kind: str, path: str, digests: Digests | None = None) -> str:
    """What consulting ``path`` sees now: for a file read ("text"), its real path and digest
    ("-": none), the digest the run took of it where it took one (kept in ``digests``); for
    a place checked ("file"), whether a file is there."""
    if kind == "file":
        return "1" if os.path.isfile(path) else "0"
    real = resolved(Path(path))
    if digests is None or real not in digests:
        content = file_digest(path)
        if digests is not None:
            digests[real] = content
    else:
        content = digests[real]
    return "-" if content is None else f"{real}:{content}"


def fill_documents(
    table: Table, paths: Sequence[Path], space: Workspace, carried: Carried
) -> Misses:
    """Put each candidate's cached document into ``space.stubs`` (read on first use; its
    digest into ``carried.digests``, its key into ``carried.keys``, and the reference into
    ``carried.stored``); the others, for ``store_documents`` once they are parsed."""
    misses: Misses = {}
    for path in paths:
        real = resolved(path)
        if real in space.documents or real in space.stubs or real in misses:
            continue
        key = carried.keys.key(space, path, carried.digests)
        if key is None:
            continue
        stub = table.get(key)
        if isinstance(stub, Stub) and stub.holds(carried.digests):
            space.stubs[real] = stub
            carried.stored[real] = (str(path), key)
        else:  # not read yet, or a file its reading consulted changed
            misses[real] = (path, key)
    return misses


def store_documents(table: Table, space: Workspace, misses: Misses, stored: Stored) -> None:
    """Store the documents parsed this run, each only if its file still has the bytes its
    key was made from (a file edited while the run read it is parsed again next time)."""
    for real, (path, key) in misses.items():
        if real in space.documents and document_key(space, path) == key:
            table.put(key, Stub.of(space.documents[real]))
            stored[real] = (str(path), key)
    table.save(complete=True)  # every candidate's key was asked for


def restored_documents(
    table: Table, stored: Stored, reread: Callable[[Path], Document | Skipped]
) -> tuple[dict[Path, Document | Skipped], dict[Path, Stub]]:
    """A stored load's ``stored`` documents, as stubs from the table; one the table no
    longer holds (a concurrent run of the scope dropped it) is read again with ``reread``
    (the load held, so its file has the bytes of its key)."""
    documents: dict[Path, Document | Skipped] = {}
    stubs: dict[Path, Stub] = {}
    for real, (path, key) in stored.items():
        stub = table.get(key)
        if isinstance(stub, Stub):
            stubs[real] = stub
        else:
            documents[real] = reread(Path(path))
    return documents, stubs


def load_dependencies(
    documents: Mapping[Path, object],
    configs: Configs,
    jobs: Sequence[Job],
    measured: Iterable[Path],
    carried: Carried,
) -> Dependencies:
    """What a load read: every document, each folder a file's config was looked for in (and
    the config files there, and each config's ``extend`` base), the measurement folders, and
    the files a job references that are missing (TL904 ends when one is created); with
    ``carried``'s digests, each candidate's and each place a reference was looked for in vain
    (a file created nearer its referrer is the one it names then); each folder listed once a
    run (``Carried.listed``)."""
    from trainlint.measurement import MEASUREMENTS_DIR

    digests = carried.digests
    files = {*documents, *digests}  # every candidate, and where a reference found no file
    config_files: set[Path] = set()
    for job in jobs:
        for missing in job.missing_references:
            here = Path(os.path.dirname(missing.file)) / missing.path
            files.update(Path(os.path.abspath(p)) for p in (missing.path, here))
    parents = {os.path.dirname(path) for path in map(str, documents)}  # siblings: one search
    folders: set[str] = set()
    for parent in parents:  # a search that reaches a folder searched before goes on as it did
        for folder in _config_search(parent):
            if folder in folders:
                break
            folders.add(folder)
    listed = {folder: _listed(folder, carried.listed) for folder in folders}
    for folder, names in listed.items():
        config_files.update(Path(folder) / name for name in names)
    for config in configs.used():
        if config.source is not None:
            config_files.add(Path(os.path.abspath(config.source)))
        if config.extend is not None:
            config_files.add(Path(os.path.abspath(config.root / config.extend)))
    measurements = (folder / MEASUREMENTS_DIR for folder in measured)
    return Dependencies.of(files | config_files, listed, measurements, digests, config_files)


def _config_search(folder: str) -> Iterator[str]:
    """The folders ``Configs`` searches for the config of a file in ``folder``: it and each
    parent up to the top of the git work tree (a folder holding ``.git``)."""
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder or os.path.exists(os.path.join(folder, ".git")):
            return
        folder = parent


@dataclass(frozen=True)
class RunMemo:
    """A whole load of one scope, stored with what it was loaded from (``key``: the
    candidates and the pack) and its ``Dependencies``."""

    cache: Cache
    scope: str
    key: str

    def get(self, carried: Carried, salt: str) -> tuple[str, Any, dict[str, Closure]] | None:
        """The load's ``identity``, the load, unpickled only once its dependencies are known
        to hold (the entry is signed as a whole, so the inner pickle is this user's too),
        and the closures holding its jobs; else None, with what the load carried on in
        ``carried``."""
        entry = self.cache.get("run", self.scope)
        if not isinstance(entry, tuple) or len(entry) != 4 or entry[0] != self.key:
            return None
        _, dependencies, value, stored = entry
        if not isinstance(dependencies, Dependencies):
            return None
        if not dependencies.hold(carried.keys.seen):
            self._carry(carried, salt, dependencies, stored)
            return None
        closures = self._carried(stored)
        if closures is None:
            return None
        try:
            return stored, pickle.loads(value), closures[2]  # inside a signed entry
        except Exception:  # as Cache.get: a miss
            return None

    def _carried(self, stored: str) -> Carry | None:
        """What the load of identity ``stored`` carried on (the ``carry`` entry, kept apart
        so a load that does not hold reads only that): None when absent or another's."""
        entry = self.cache.get("carry", self.scope)
        if not isinstance(entry, tuple) or len(entry) != 2 or entry[0] != stored:
            return None
        known = entry[1]
        if not isinstance(known, tuple) or len(known) != 4:
            return None
        if not all(isinstance(part, dict) for part in known[1:]):
            return None
        return known

    def _carry(self, carried: Carried, salt: str, dependencies: Dependencies, of: str) -> None:
        """The stored load's document keys, where its configs hold and ``salt`` (the run's
        config) is the same; its closures, where its measurement folders hold too."""
        known = self._carried(of)
        if known is None or known[0] != salt:
            return
        if not dependencies.configs_hold(carried.keys.seen, carried.listed):
            return
        carried.keys.known = known[1]
        carried.configs = {folder: c for folder, c in known[3].items() if folder in carried.listed}
        if dependencies.measurements_hold():
            carried.closures.known = known[2]

    def put(
        self,
        dependencies: Dependencies,
        value: object,
        carried: Carry,
        jobs: Sequence[bytes],
    ) -> str | None:
        """Store the load (its ``jobs``, as JSON, are held by the closures carried on) and
        what the next run may carry over (the run config's ``salt``, the document keys and
        closures made); its ``identity`` (None: not stored)."""
        try:
            inner = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return None
        stored = identity(inner, jobs)
        self.cache.put("run", self.scope, (self.key, dependencies, inner, stored))
        self.cache.put("carry", self.scope, (stored, carried))
        return stored


def identity(stored: bytes, jobs: Sequence[bytes]) -> str:
    """A load's identity: the digest of its stored bytes (every document and outcome) and
    its ``jobs`` (their JSON, estimates included). Two runs whose loads have one identity
    loaded the same thing, so what is made from a load alone and the run's settings (the
    report) can be reused."""
    return "load:" + digest(stored, *jobs)


@functools.cache
def code_digest() -> str:
    """trainlint's own modules (each ``.py``: path, size, modification time): an editable
    install whose code changed starts a new cache folder, as a new version does, so a
    developer never sees results of the code before (~400 ``stat`` calls, ~2 ms)."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        for name in sorted(n for n in names if n.endswith(".py")):
            stat = os.stat(os.path.join(folder, name))
            relative = os.path.relpath(os.path.join(folder, name), root)
            digest.update(f"{relative}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:12]
