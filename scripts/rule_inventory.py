"""Counts of hand rules in answer/ and retrieve/: regex patterns, concept entries,
hand-set numbers (module constants and numeric config fields of search/answer)."""
import ast, sys, re
from pathlib import Path
root = Path(sys.argv[1]) / "codecite"
pat = consts = 0
for d in ("answer", "retrieve", "question"):
    for f in sorted((root / d).glob("*.py")) if (root / d).is_dir() else []:
        tree = ast.parse(f.read_text())
        pat += sum(1 for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "compile")
        for n in tree.body:
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                v = n.value
                if any(isinstance(t, ast.Name) and t.id.isupper() for t in targets) and v is not None:
                    nums = [x for x in ast.walk(v) if isinstance(x, ast.Constant) and isinstance(x.value, (int, float)) and not isinstance(x.value, bool)]
                    consts += len(nums)
concepts = 0  # counted below
c = root / "retrieve" / "concepts.py"
if c.is_file():
    tree = ast.parse(c.read_text())
    for n in tree.body:
        if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "_CONCEPTS":
            concepts = len(n.value.elts)
cfg = ast.parse((root / "config.py").read_text())
fields = 0
for n in ast.walk(cfg):
    if isinstance(n, ast.ClassDef) and n.name in ("SearchConfig", "AnswerConfig"):
        for b in n.body:
            if isinstance(b, ast.AnnAssign) and isinstance(b.value, ast.Constant) and isinstance(b.value.value, (int, float)) and not isinstance(b.value.value, bool):
                fields += 1
print(f"patterns {pat}, concept entries {concepts}, hand-set numbers: module constants {consts}, numeric search/answer settings {fields}")
