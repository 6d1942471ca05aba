"""The architecture document lives in the repository (docs/DESIGN.md) and what points
to it resolves: every "DESIGN.md §N" / "DESIGN.md section N" in the package, the tests
and the benchmarks names a section that exists, and its layout section (§2) names every
package under ``src/codecite/``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "DESIGN.md"
#: A reference and the section numbers it names ("§11, §13", "section 4").
REFERENCE = re.compile(r"DESIGN(?:\.md)?\s*((?:(?:§|section\s+)\d+(?:,\s*)?)+)")


def _sections() -> dict[int, str]:
    """Section number → its title, from the ``## N. Title`` headings."""
    found = re.findall(r"^## (\d+)\. (.+)$", DESIGN.read_text(), flags=re.MULTILINE)
    return {int(number): title for number, title in found}


def _references() -> list[tuple[str, int]]:
    out = []
    for folder in ("src", "tests", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "fixtures" in path.parts:
                continue
            text = path.read_text()
            for match in REFERENCE.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                for number in re.findall(r"\d+", match.group(1)):
                    out.append((f"{path.relative_to(ROOT)}:{line}", int(number)))
    return out


def test_every_design_reference_names_a_section() -> None:
    sections = _sections()
    assert set(sections) == set(range(1, 14)), sorted(sections)
    references = _references()
    assert len(references) > 40, "the references were not found: has the pattern drifted?"
    missing = [f"{where} → §{number}" for where, number in references if number not in sections]
    assert not missing, "no such section in docs/DESIGN.md: " + ", ".join(missing)


def test_layout_section_names_every_package() -> None:
    text = DESIGN.read_text()
    layout = text[text.index("## 2. ") : text.index("## 3. ")]
    package = ROOT / "src" / "codecite"
    folders = sorted(
        p.relative_to(package).as_posix()
        for p in package.rglob("*")
        if p.is_dir() and p.name != "__pycache__"
    )
    unnamed = [f for f in folders if f"{f.rsplit('/', 1)[-1]}/" not in layout]
    assert not unnamed, f"docs/DESIGN.md §2 does not show these folders: {unnamed}"
    modules = sorted(p.stem for p in package.glob("*.py") if p.stem != "__main__")
    assert [m for m in modules if m not in layout] == []


def test_readme_points_to_the_design() -> None:
    assert "docs/DESIGN.md" in (ROOT / "README.md").read_text()
