"""`fric identify`: end to end on a CSV and a bag of the simulated stage (exit 0, table, YAML the
renderer accepts, report), bad data (exit 1 naming the problem), bad arguments (exit 2)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fric_core.haptics.identification import excitation
from fric_core.haptics.recording import Recording, write_csv
from fric_core.haptics.report import REPORT_FILES
from fric_core.haptics.stage import SAMPLES, HapticStageSim
from fric_nodes.tools.cli import main

ROOT = Path(__file__).resolve().parents[2]
BRASS = SAMPLES["brass"]


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    ex = excitation(warmup=2.0)
    st = HapticStageSim(sample="brass", seed=4)
    rs = [r for r, keep in zip((st.step(position_setpoint=float(x)) for x in ex.x), ex.record)
          if keep]
    col = {k: np.array([getattr(r, k) for r in rs])
           for k in ("t", "position", "velocity", "force", "acceleration")}
    rec = Recording(col["t"], col["position"], col["velocity"], col["force"],
                    a=col["acceleration"])
    path = tmp_path_factory.mktemp("cli") / "brass.csv"
    write_csv(rec, path)
    return path


def test_identify_csv_end_to_end(csv_path, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["identify", str(csv_path), "--out", str(out), "--joint", "slide",
               "--mass", "0.5"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "| OLS ± std | EIV ± std |" in cap.out and "| m | kg |" in cap.out
    for name in REPORT_FILES + ("slide.yaml",):
        assert (out / name).is_file(), name
    from rclpy.parameter import parameter_dict_from_yaml_file, parameter_value_to_python

    params = {k: parameter_value_to_python(v.value) for k, v in
              parameter_dict_from_yaml_file(str(out / "slide.yaml"),
                                            target_nodes=["friction_renderer"]).items()}
    assert params["joints"] == ["slide"] and params["slide.mass"] == 0.5
    # the identified kinetic levels of brass: positive, within 5 % (test_stage_recovers_sample)
    assert params["slide.Cp"] == pytest.approx(BRASS.law.Cp, rel=0.05)
    assert params["slide.Cn"] == pytest.approx(BRASS.law.Cn, rel=0.05)
    # --method ols and --yaml elsewhere; fixed dv
    y = tmp_path / "ols.yaml"
    assert main(["identify", str(csv_path), "--out", str(tmp_path / "o2"), "--method", "ols",
                 "--yaml", str(y), "--dv", "0.01", "--accel-noise", "0.0566"]) == 0
    assert "# method: ols" in y.read_text() and "fitted dv = 0.01 m/s" in y.read_text()


def test_identify_bad_data_exits_1_naming_the_problem(csv_path, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text(csv_path.read_text().replace(",force,", ",load,"))
    assert main(["identify", str(bad), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fric identify: ") and "missing column(s) 'force'" in err
    assert not (tmp_path / "o").exists()
    # mapped, it works
    assert main(["identify", str(bad), "--columns", "force=load",
                 "--out", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    assert main(["identify", str(tmp_path / "absent.csv")]) == 1
    assert "absent.csv: no such file" in capsys.readouterr().err
    assert main(["identify", str(csv_path), "--K", "-5", "--out", str(tmp_path / "k")]) == 1
    assert "K: must be" in capsys.readouterr().err


def test_identify_bad_arguments_exit_2(csv_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["identify", str(csv_path), "--method", "ls"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["identify", str(csv_path), "--columns", "speed=v"])
    assert e.value.code == 2 and "'speed' is not one of" in capsys.readouterr().err
    assert main(["identify", str(csv_path), "--accel-topic", "/accelerometer"]) == 2
    assert "--accel-topic apply only to a bag" in capsys.readouterr().err


def test_identify_bag(tmp_path, capsys):
    from test_identification_io import stage_recording, write_bag

    bag = write_bag(tmp_path / "bag", stage_recording(seed=6), wrench=False)
    out = tmp_path / "out"
    assert main(["identify", str(bag), "--accel-topic", "/accelerometer",
                 "--out", str(out)]) == 0
    assert "/accelerometer" in capsys.readouterr().out
    assert (out / "stage_joint.yaml").is_file()
    assert main(["identify", str(bag), "--joint", "slider", "--out", str(out)]) == 1
    assert "joint 'slider' is not in message 1" in capsys.readouterr().err


def test_identify_process_exit_status(tmp_path):
    """The real command line: exit status 1 and the message on stderr."""
    bad = tmp_path / "bad.csv"
    bad.write_text("t,x,v,force\n0,0,0,1\n0.001,0,x,1\n")
    proc = subprocess.run([sys.executable, "-m", "fric_nodes.tools.cli", "identify", str(bad)],
                          cwd=tmp_path, env=dict(os.environ), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "line 3, column 'v': 'x' is not a number" in proc.stderr
