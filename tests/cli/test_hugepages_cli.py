"""``pynuma hugepages`` run as a command: table, JSON, set, errors (exit codes, one line, no traceback)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pynuma.cli import main as cli_main
from pynuma.fsroot import FsRoot
from tests.fsroot.test_hugepages_pools import TWO_NODES, build_tree

PROJECT = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "pynuma", "hugepages", *args], capture_output=True, text=True,
                          cwd=PROJECT)


@pytest.fixture
def root(tmp_path):
    return build_tree(tmp_path, TWO_NODES, nodes=(0, 1),
                      cmdline="default_hugepagesz=2M hugepagesz=1G hugepages=0:2,1:2 hugepagesz=2M hugepages=2048")


def test_table_per_size_and_node(root):
    r = run("--root", str(root))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["SIZE", "NODE", "TOTAL", "FREE", "IN-USE", "RESERVED", "SURPLUS", "OVERCOMMIT",
                                "CMDLINE"]
    rows = [l.split() for l in lines[1:] if l and l.split()[0] in ("2Mi", "1Gi")]
    assert ["2Mi", "all", "1536", "1000", "536", "12", "0", "8", "2048"] in rows
    assert ["1Gi", "1", "2", "2", "0", "-", "0", "-", "2"] in rows
    assert "default size: 2Mi (2048 kB)" in r.stdout
    assert "2Mi: asked 2048, kernel holds 1536" in r.stdout


def test_json(root):
    r = run("--root", str(root), "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["default_size_kb"] == 2048
    assert d["nodes"]["1"]["2048"]["total"] == 512
    assert d["capacity"]["total"]["hugepages-2Mi"] == "3Gi"
    assert d["capacity"]["nodes"]["0"]["hugepages-1Gi"] == "2Gi"


def test_live_machine_runs_and_tells_the_truth():
    fs = FsRoot("/")

    def kernel_totals():
        names = fs.listdir("/sys/kernel/mm/hugepages")
        return {n: fs.read_optional(f"/sys/kernel/mm/hugepages/{n}/nr_hugepages") for n in names}

    # nr_hugepages moves while surplus pages come and go (overcommit) or another job resizes a pool:
    # compare against a moment when the kernel's counts held still around the command
    for _ in range(5):
        before = kernel_totals()
        r = run("--json")
        assert r.returncode == 0, r.stderr
        if kernel_totals() == before:
            break
    else:
        pytest.skip("hugepage pools kept changing while the command ran")
    d = json.loads(r.stdout)
    for size in d["sizes"]:
        text = before[f"hugepages-{size}kB"]
        assert d["pools"][str(size)]["total"] == int(text)


def test_set_per_node(root):
    r = run("set", "1Gi=3", "--node", "0", "--root", str(root), "--target-root")
    assert r.returncode == 0, r.stderr
    assert "hugepages-1Gi node 0: 2 -> 3 pages" in r.stdout
    assert (root / "sys/devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages").read_text().strip() == "3"


def test_set_dry_run_json(root):
    r = run("set", "2048kB=64", "--dry-run", "--force", "--json", "--root", str(root))
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["results"][0]
    assert res["dry_run"] and res["requested"] == 64 and res["before"] == 1536
    assert (root / "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages").read_text().strip() == "1536"


@pytest.mark.parametrize("args,code,needle", [
    (["set", "3Mi=4"], 2, "does not exist"),
    (["set", "2Mi"], 2, "SIZE=COUNT"),
    (["set", "2Mi=-4"], 2, "non-negative"),
    (["set", "2Mi=4", "--node", "9"], 2, "no such NUMA node"),
    (["set", "2Mi=1", "--target-root"], 1, "in use"),
    (["set", "2Mi=1600"], 1, "needs --target-root"),
    (["--bogus"], 2, "unrecognized"),
])
def test_errors_are_one_line(root, args, code, needle):
    pools = sorted(p.read_text() for p in root.glob("sys/**/nr_hugepages"))
    r = run(*args, "--root", str(root))
    assert r.returncode == code, (r.stdout, r.stderr)
    assert sorted(p.read_text() for p in root.glob("sys/**/nr_hugepages")) == pools  # nothing written
    assert needle in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_shortfall_exits_1(root, monkeypatch, capsys):
    real = FsRoot.write_text

    def stingy(fs, path, text):  # the kernel found only 1700 free 2 MiB pages
        real(fs, path, f"{min(int(text), 1700)}\n")

    monkeypatch.setattr(FsRoot, "write_text", stingy)
    assert cli_main(["hugepages", "set", "2Mi=4000", "--root", str(root), "--target-root"]) == 1
    out, err = capsys.readouterr()
    assert "asked for 4000 pages, the kernel gave 1700" in err
    assert "1536 -> 1700" in out
