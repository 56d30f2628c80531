"""The contract package against the core (issue 14): fric_interfaces holds names and schemas as
plain data and imports nothing from fric_core; the names it lists are the ones the core's
registries build, and its defaults are the core's. The documented import paths of
../shared/CONTRACT.md still give the core's objects."""

import inspect
import subprocess
import sys

import fric_core.identification
import fric_core.identification_io
from fric_core import bank
from fric_core.haptics import identification, recording, renderer_yaml
from fric_core.haptics.stage import SAMPLES, HapticStageSim
from fric_core.planar.surfaces import SURFACES
from fric_interfaces import identifier_params, planar_params, renderer_params, stage_params


def _defaults(fn):
    return {n: p.default for n, p in inspect.signature(fn).parameters.items()
            if p.default is not inspect.Parameter.empty}


def test_contract_imports_nothing_from_the_core():
    code = ("import sys, pkgutil, importlib, fric_interfaces\n"
            "for m in pkgutil.walk_packages(fric_interfaces.__path__, 'fric_interfaces.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'fric_core'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_renderer_names_match_the_bank():
    assert renderer_params.LAW_NAMES == tuple(bank.LAWS)
    assert set(renderer_params.ELEMENTS) == set(bank.ELEMENT_PARAMS)
    assert set(renderer_params.DEFAULT_ELEMENT.values()) <= set(bank.ELEMENT_PARAMS)
    used = {k for ks in bank.LAW_PARAMS.values() for k in ks}
    used |= {k for ks in bank.ELEMENT_PARAMS.values() for k in ks}
    assert used <= set(renderer_params.ELEMENT_KEYS)  # every parameter the bank reads is declared
    assert set(bank.VECTOR_MIN_JOINTS) == set(bank.LAWS)


def test_planar_surface_names_match_the_core():
    assert planar_params.SURFACES == tuple(SURFACES)


def test_stage_names_and_defaults_match_the_sim():
    assert stage_params.SAMPLE_CHOICES == ("none",) + tuple(sorted(SAMPLES))
    sim = _defaults(HapticStageSim.__init__)
    assert stage_params.SIM_DEFAULTS == {k: sim[k] for k in stage_params.SIM_DEFAULTS}
    assert {name for name, *_ in stage_params.SIM_FIGURES} | {"dt"} == set(
        stage_params.SIM_DEFAULTS)


def test_identifier_defaults_match_the_excitation():
    exc = _defaults(identification.excitation)
    assert identifier_params.EXCITATION_DEFAULTS == {
        k: exc[k] for k in identifier_params.EXCITATION_DEFAULTS}


def test_documented_paths_give_the_core_objects():
    assert fric_core.identification.fit_friction is identification.fit_friction
    assert fric_core.identification.FrictionFit is identification.FrictionFit
    for name in ("Recording", "read_csv", "write_csv", "read_bag"):
        assert getattr(fric_core.identification_io, name) is getattr(recording, name)
    assert fric_core.identification_io.fit_to_yaml is renderer_yaml.fit_to_yaml
    from fric_core.axproj import AxprojSolver, axproj, axproj_projection
    from fric_core.transmission import Transmission, projection
    from fric_core.transmission import axproj as axproj_t
    assert axproj is axproj_t is projection.axproj
    assert AxprojSolver is projection.AxprojSolver
    assert axproj_projection is projection.axproj_projection
    assert Transmission.__module__ == "fric_core.transmission.dai"
