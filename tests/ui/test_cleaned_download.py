"""The dashboard's cleaned-CKF download (crp_ui.decisions.cleaned_ckf_bytes): a CKF folder comes as a zip whose
export report names the CKF as the sidebar lists it and the download by its file name, never a server path.

A walk-through downloaded eastbrook_emb.cleaned.zip from a server started with ``crp-inspect dashboard --ckf
/tmp/walk56/kb/eastbrook_emb`` and read ``"ckf": "/tmp/walk56/kb/eastbrook_emb"`` and ``"out":
"/tmp/crp-cleaned-altzc3pr/cleaned"`` in its export_report.json.
"""

from __future__ import annotations

import io
import json
import zipfile

from crp_core.decisions import Decision, DecisionSet
from crp_core.io.ckf import load_ckf, write_ckf
from crp_ui import decisions as dmod
from tests.support.factories import fact, make_kb, unit


def test_the_zip_of_a_ckf_folder_names_it_without_a_server_path(tmp_path):
    kb = make_kb([fact("A", "one"), fact("B", "two")], [unit([1, 0]), unit([0, 1])])
    folder = write_ckf(kb, tmp_path / "srv" / "kb" / "eastbrook")
    ds = DecisionSet.from_decisions([Decision.mark_status("A", "B", fact="B", status="QUARANTINED", operator="ada")])
    data, name, _info = dmod.cleaned_ckf_bytes(load_ckf(folder), ds)
    assert name == "eastbrook.cleaned.zip"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert sorted(zf.namelist()) == ["embeddings.npy", "export_report.json", "facts.jsonl", "manifest.json"]
        raw = zf.read("export_report.json").decode("utf-8")
        facts = [json.loads(line) for line in zf.read("facts.jsonl").decode("utf-8").splitlines()]
    report = json.loads(raw)
    assert (report["ckf"], report["out"], report["format"]) == ("eastbrook", "eastbrook.cleaned.zip", "dir")
    assert report["changed"] == {"QUARANTINED": 1} and [f.get("status", "ACTIVE") for f in facts][1] == "QUARANTINED"
    assert str(tmp_path) not in raw and "crp-cleaned-" not in raw and "/tmp" not in raw
