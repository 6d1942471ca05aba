"""Counts of hand rules in answer/, retrieve/ and question/: regex patterns, concept
entries, hand-set numbers (module constants and numeric config fields of search/answer).

    python scripts/rule_inventory.py src
"""

import ast
import sys
from pathlib import Path


def _number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    )


def main(src: Path) -> str:
    root = src / "codecite"
    patterns = constants = 0
    for folder in ("answer", "retrieve", "question"):
        for path in sorted((root / folder).glob("*.py")):
            tree = ast.parse(path.read_text())
            patterns += sum(
                1
                for n in ast.walk(tree)
                if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "compile"
            )
            for n in tree.body:
                if not isinstance(n, (ast.Assign, ast.AnnAssign)) or n.value is None:
                    continue
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if any(isinstance(t, ast.Name) and t.id.isupper() for t in targets):
                    constants += sum(1 for x in ast.walk(n.value) if _number(x))
    concepts = 0
    table = root / "retrieve" / "concepts.py"
    if table.is_file():
        for n in ast.parse(table.read_text()).body:
            if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "_CONCEPTS":
                concepts = len(getattr(n.value, "elts", []))
    fields = 0
    for n in ast.walk(ast.parse((root / "config.py").read_text())):
        if isinstance(n, ast.ClassDef) and n.name in ("SearchConfig", "AnswerConfig"):
            fields += sum(1 for b in n.body if isinstance(b, ast.AnnAssign) and _number(b.value))
    return (
        f"patterns {patterns}, concept entries {concepts}, hand-set numbers: module constants "
        f"{constants}, numeric search/answer settings {fields}"
    )


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
