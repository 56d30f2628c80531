"""The docs' commands run where a newcomer runs them (issue 22 item 1): after ``make demo`` on a
fresh clone the venv is not on PATH and there is no ``ros2``.

Over README.md and docs/*.md, every command line of a code block (fenced, or indented after a
blank line; diagram lines with box-drawing arrows are not commands):

* starting with a bare fric console script (``fric``, ``fric_recorder``, ``friction_renderer``,
  …: setup.py's entry points) — only after the note that says ``source .venv/bin/activate``
  in the same file; everywhere else it is written ``.venv/bin/NAME``;
* starting with ``ros2`` or ``rviz2`` (or using ``$(ros2 …)``) — its comment says ``ROS 2
  install`` and gives the venv form (``venv: …``) or says there is ``no venv form``;

and the README says near its top how to put the venv on PATH.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ACTIVATE = "source .venv/bin/activate"


def _scripts() -> list[str]:
    """setup.py's console scripts (the names a venv puts in .venv/bin)."""
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    names = re.findall(r'"(\w+) = fric_nodes\.[\w.]+:main"', text)
    assert "fric" in names and "fric_recorder" in names, names
    return names


def code_commands(text: str) -> list[tuple[int, str, str]]:
    """(line number, first line, the whole command with its continuation lines) of every
    command in the Markdown code blocks of ``text``."""
    out: list[tuple[int, str, str]] = []
    fence, in_indented, prev_blank = False, False, True
    cont = False
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith(("```", "~~~")):
            fence, in_indented, cont = not fence, False, False
            prev_blank = False
            continue
        is_code = fence or (line.startswith("    ") and bool(s) and (prev_blank or in_indented))
        if not fence:
            in_indented = is_code or (in_indented and not s)
        prev_blank = not s
        if not is_code or not s:
            cont = False if not is_code else cont
            continue
        if cont:
            out[-1] = (out[-1][0], out[-1][1], out[-1][2] + "\n" + s)
        elif not s.startswith("#") and "──" not in s and "▶" not in s:
            out.append((no, s, s))
        cont = s.endswith("\\")
    return out


def _comment(command: str) -> str:
    return " ".join(part.split(" # ", 1)[1] for part in command.splitlines() if " # " in part)


def test_the_scanner_sees_commands_of_both_block_kinds():
    text = ("Text\n\n    fric a \\\n      b   # c\n    ros2 x\n\n```\nfric_recorder y\n"
            "a ──▶ b\n```\n- item\n    not code: a list's continuation\n")
    assert code_commands(text) == [(3, "fric a \\", "fric a \\\nb   # c"),
                                   (5, "ros2 x", "ros2 x"), (8, "fric_recorder y",
                                                             "fric_recorder y")]
    assert _comment("fric a \\\nb   # c") == "c"


def test_readme_says_near_the_top_how_to_put_the_venv_on_path():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_section = text.index("\n## ")
    assert ACTIVATE in text[:first_section]
    assert ".venv/bin/fric" in text[:first_section]


def test_bare_console_scripts_only_after_the_activate_note():
    bare = re.compile(r"^(\$\s+)?(" + "|".join(map(re.escape, _scripts())) + r")(\s|$)")
    problems, seen = [], 0
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        note = text.find(ACTIVATE)
        note_line = text.count("\n", 0, note) + 1 if note >= 0 else None
        for no, first, _ in code_commands(text):
            if first.startswith(".venv/bin/"):
                seen += 1
            if bare.match(first) and (note_line is None or no < note_line):
                problems.append(f"{path.relative_to(ROOT)}:{no}: {first[:80]}")
    assert seen > 20  # the docs' venv commands are seen as commands
    assert not problems, ("bare commands (write .venv/bin/NAME, or put the `source "
                          ".venv/bin/activate` note before them):\n" + "\n".join(problems))


def test_every_ros2_command_is_marked_with_its_venv_form():
    problems, seen = [], 0
    for path in DOCS:
        for no, first, whole in code_commands(path.read_text(encoding="utf-8")):
            if not (re.match(r"^(\$\s+)?(ros2|rviz2)\s", first) or "$(ros2 " in whole):
                continue
            seen += 1
            comment = _comment(whole)
            if "ROS 2 install" not in comment or not ("venv:" in comment
                                                      or "no venv form" in comment):
                problems.append(f"{path.relative_to(ROOT)}:{no}: {first[:80]}")
    assert seen >= 8
    assert not problems, ("ros2 commands without `# ROS 2 install; venv: ...` (or `no venv "
                          "form`):\n" + "\n".join(problems))
