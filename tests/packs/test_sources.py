"""Pack sources: the config model, local paths and ``trainlint.packs`` entry points.

Entry points come from real distributions on ``sys.path``: a ``.dist-info`` directory (or a
zipped one) with ``entry_points.txt``, which ``importlib.metadata`` reads as it reads
site-packages, and (slow) a package installed with ``pip install --target``.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.packs.test_fetch import BUNDLE_FILES, make_bundle, sha256
from trainlint.errors import PolicyError
from trainlint.packs.fetch import resolve
from trainlint.packs.scaffold import init
from trainlint.packs.signing import sign
from trainlint.packs.sources import PackSource, entry_point_path

_names = itertools.count()
FILES_BUNDLE = (
    "from importlib.resources import files\n\n\ndef bundle():\n"
    "    return files(__name__) / 'bundle'\n"
)


def test_model_reads_the_config_spelling() -> None:
    source = PackSource.model_validate(
        {"url": "https://p.example/a.tar.gz", "public-key": "k.pem", "key-id": "k1"}
    )
    assert (source.public_key, source.key_id) == ("k.pem", "k1")
    assert PackSource.model_validate({"entry-point": "acme"}).entry_point == "acme"


@pytest.mark.parametrize(
    "fields", [{}, {"path": "a", "url": "https://x/a.tar.gz"}, {"sha256": "0" * 64}]
)
def test_model_needs_exactly_one_location(fields: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match="exactly one of path, url or entry_point"):
        PackSource.model_validate(fields)


def test_model_rejects_a_malformed_pin() -> None:
    with pytest.raises(ValidationError):
        PackSource(url="https://x/a.tar.gz", sha256="abc")


def test_path_is_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "packs" / "acme").mkdir(parents=True)
    source = PackSource(path="packs/acme")
    assert resolve(source, tmp_path, cache_dir=tmp_path / "c") == tmp_path / "packs" / "acme"


def test_absolute_path_is_kept(tmp_path: Path) -> None:
    (tmp_path / "acme").mkdir()
    source = PackSource(path=str(tmp_path / "acme"))
    assert resolve(source, tmp_path / "elsewhere", cache_dir=tmp_path / "c") == tmp_path / "acme"


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"pack path 'packs/nope' not found \(looked for .*"):
        resolve(PackSource(path="packs/nope"), tmp_path, cache_dir=tmp_path / "c")


def test_pinned_path_checks_the_archive(tmp_path: Path) -> None:
    body = make_bundle(BUNDLE_FILES)
    (tmp_path / "acme.tar.gz").write_bytes(body)
    good = PackSource(path="acme.tar.gz", sha256=sha256(body).upper())
    assert resolve(good, tmp_path, cache_dir=tmp_path / "c") == tmp_path / "acme.tar.gz"
    bad = PackSource(path="acme.tar.gz", sha256="1" * 64)
    with pytest.raises(PolicyError, match=f"expected {'1' * 64}, got {sha256(body)}"):
        resolve(bad, tmp_path, cache_dir=tmp_path / "c")


def test_a_directory_cannot_be_pinned(tmp_path: Path) -> None:
    (tmp_path / "acme").mkdir()
    with pytest.raises(PolicyError, match=r"sha256 pins a \.tar\.gz bundle, not a directory"):
        resolve(PackSource(path="acme", sha256="1" * 64), tmp_path, cache_dir=tmp_path / "c")


# Entry points ------------------------------------------------------------------------------


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on sys.path for test distributions; their modules are forgotten after."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        if name.startswith("acme_pack_"):
            del sys.modules[name]


def install(site: Path, code: str, entry: str, *, bundle: bool = True) -> tuple[str, Path]:
    """A distribution ``acme_pack_<n>`` in ``site`` whose entry point ``acme-<n>`` is
    ``<module>:<entry>`` (or the module itself when ``entry`` is empty); returns
    ``(entry point name, package dir)``."""
    n = next(_names)
    module, name = f"acme_pack_{n}", f"acme-{n}"
    package = site / module
    package.mkdir()
    (package / "__init__.py").write_text(code)
    if bundle:
        for file, text in BUNDLE_FILES.items():
            (package / "bundle" / file).parent.mkdir(parents=True, exist_ok=True)
            (package / "bundle" / file).write_text(text)
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    target = f"{module}:{entry}" if entry else module
    (info / "entry_points.txt").write_text(f"[trainlint.packs]\n{name} = {target}\n")
    return name, package


def resolve_entry(name: str, tmp_path: Path) -> Path:
    source = PackSource.model_validate({"entry-point": name})
    return resolve(source, tmp_path, cache_dir=tmp_path / "cache")


def test_entry_point_to_a_string_path(site: Path, tmp_path: Path) -> None:
    code = "import os\nBUNDLE = os.path.join(os.path.dirname(__file__), 'bundle')\n"
    name, package = install(site, code, "BUNDLE")
    assert resolve_entry(name, tmp_path) == package / "bundle"


def test_entry_point_to_a_callable_returning_a_traversable(site: Path, tmp_path: Path) -> None:
    code = FILES_BUNDLE
    name, package = install(site, code, "bundle")
    assert resolve_entry(name, tmp_path) == package / "bundle"


def test_entry_point_to_a_module_is_its_package_directory(site: Path, tmp_path: Path) -> None:
    name, package = install(site, "", "")
    assert resolve_entry(name, tmp_path) == package


def test_unknown_entry_point_lists_the_available_ones(site: Path, tmp_path: Path) -> None:
    name, _ = install(site, "BUNDLE = '.'\n", "BUNDLE")
    with pytest.raises(PolicyError, match=f"no pack entry point 'nope'.*available: .*{name}"):
        resolve_entry("nope", tmp_path)


def test_entry_point_that_is_not_a_path(site: Path, tmp_path: Path) -> None:
    name, _ = install(site, "BUNDLE = 42\n", "BUNDLE")
    with pytest.raises(PolicyError, match="gave a int; expected a path to a bundle"):
        resolve_entry(name, tmp_path)


def test_entry_point_that_fails_to_load(site: Path, tmp_path: Path) -> None:
    name, _ = install(site, "raise RuntimeError('broken pack')\n", "BUNDLE")
    with pytest.raises(PolicyError, match=r"failed to load: RuntimeError: broken pack"):
        resolve_entry(name, tmp_path)


def test_entry_point_to_a_missing_path(site: Path, tmp_path: Path) -> None:
    name, _ = install(site, "def bundle():\n    return '/nonexistent/bundle'\n", "bundle")
    with pytest.raises(PolicyError, match="points at /nonexistent/bundle, which does not exist"):
        resolve_entry(name, tmp_path)


def test_zipped_distribution_is_copied_to_the_cache(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = FILES_BUNDLE
    name, _ = install(site, code, "bundle")
    archive = tmp_path / "dist.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for member in sorted(site.rglob("*")):
            if member.is_file():
                zipped.write(member, member.relative_to(site).as_posix())
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(site)])
    monkeypatch.syspath_prepend(str(archive))
    path = entry_point_path(name, cache_dir=tmp_path / "cache")
    assert path.is_relative_to(tmp_path / "cache" / "entry-points") and path.name == "bundle"
    for file, text in BUNDLE_FILES.items():
        assert (path / file).read_text() == text
    assert entry_point_path(name, cache_dir=tmp_path / "cache") == path  # copied once


def pip_install(project: Path, package: str, entry: str, target: Path) -> None:
    """``pip install --target`` of ``project`` (its folder ``package``), whose
    ``trainlint.packs`` entry point ``acme-ml-pip`` is ``entry``: built by hatchling, as a
    pack's own pyproject would build it."""
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        f'[project]\nname = "{package.replace("_", "-")}"\nversion = "1.0"\n\n'
        f'[project.entry-points."trainlint.packs"]\nacme-ml-pip = "{entry}"\n\n'
        f'[tool.hatch.build.targets.wheel]\npackages = ["{package}"]\n'
    )
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    command += ["--no-build-isolation", "--no-index", "--target", str(target), str(project)]
    subprocess.run(command, check=True, capture_output=True)


@pytest.mark.slow
def test_pip_installed_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real pip-installable pack: pyproject with the entry point, built and installed by pip."""
    project = tmp_path / "acme-ml-pack"
    package = project / "acme_ml_pack_pip"
    for file, text in BUNDLE_FILES.items():
        (package / "bundle" / file).parent.mkdir(parents=True, exist_ok=True)
        (package / "bundle" / file).write_text(text)
    (package / "__init__.py").write_text(FILES_BUNDLE)
    target = tmp_path / "site"
    pip_install(project, "acme_ml_pack_pip", "acme_ml_pack_pip:bundle", target)
    monkeypatch.syspath_prepend(str(target))
    try:
        path = resolve_entry("acme-ml-pip", tmp_path)
    finally:
        sys.modules.pop("acme_ml_pack_pip", None)
    assert path == target / "acme_ml_pack_pip" / "bundle"
    assert (path / ".manifest").read_text() == BUNDLE_FILES[".manifest"]


@pytest.mark.slow
def test_signed_pip_installed_pack_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented release of a pip pack: ``pack init`` and ``pack sign`` the bundle, make
    that folder the Python package (``__init__.py``), ``pip install`` it; a repository that
    names it by entry point with the public key gets it verified."""
    project = tmp_path / "acme-ml-pack"
    package = project / "acme_ml_pack_signed"
    init("acme", package)
    secret = tmp_path / "secret"
    secret.write_bytes(b"a shared secret of at least thirty-two bytes!")
    sign(package, secret.read_bytes(), "HS256")
    (package / "__init__.py").write_text(
        '"""The acme trainlint pack: this folder is its bundle."""\n'
    )
    target = tmp_path / "site"
    pip_install(project, "acme_ml_pack_signed", "acme_ml_pack_signed", target)
    monkeypatch.syspath_prepend(str(target))
    source = PackSource.model_validate({"entry-point": "acme-ml-pip", "public-key": str(secret)})
    try:
        path = resolve(source, tmp_path, cache_dir=tmp_path / "cache")
    finally:
        sys.modules.pop("acme_ml_pack_signed", None)
    assert path == target / "acme_ml_pack_signed"
    assert (path / "__init__.py").is_file() and (path / ".signatures.json").is_file()
