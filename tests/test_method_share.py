"""Every method at home: at least 80% of the source lines that serve one method only sit in its own folders
(``scripts/method_share.py`` counts them and prints the table)."""

from __future__ import annotations

import runpy
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "method_share.py"
MIN_SHARE = 0.8


def test_every_method_has_at_least_80_percent_of_its_code_at_home(capsys):
    script = runpy.run_path(str(SCRIPT))
    table, outside = script["share_table"]()
    print(script["format_table"](table))  # shown with -s / on failure
    assert set(table) == set(script["methods"]())
    low = {
        name: outside[name]
        for name, counts in table.items()
        if counts["home"] < MIN_SHARE * (counts["home"] + counts["elsewhere"])
    }
    assert not low, f"methods with less than {MIN_SHARE:.0%} of their code at home, and what lives elsewhere: {low}"


def test_the_rule_follows_imports(tmp_path):
    """A module that only one method's code imports serves that method; one that neutral code or two methods import
    does not; a script serves the one method whose code it imports; a method's folders and studies are its home."""
    script = runpy.run_path(str(SCRIPT))
    files = {
        "src/phrasezoo/__init__.py": "",
        "src/phrasezoo/methods/__init__.py": "",
        "src/phrasezoo/methods/alpha/__init__.py": "from phrasezoo.helpers import only_alpha, both\n",
        "src/phrasezoo/methods/beta/__init__.py": "from phrasezoo.helpers.both import x\n",
        "src/phrasezoo/helpers/__init__.py": "",
        "src/phrasezoo/helpers/only_alpha.py": "from . import deeper\n",  # and what only it imports
        "src/phrasezoo/helpers/deeper.py": "x = 1\ny = 2\n",
        "src/phrasezoo/helpers/both.py": "x = 1\n",
        "src/phrasezoo/helpers/neutral.py": "z = 3\n",
        "src/phrasezoo/workflow.py": "from phrasezoo.helpers import neutral\n",
        "experiments/alpha/study.py": "import phrasezoo.methods.alpha\n",
        "benchmarks/bench_beta.py": "from phrasezoo.methods import beta\nprint(beta)\n",
        "scripts/tool.py": "import phrasezoo.workflow\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    table, outside = script["share_table"](tmp_path)
    assert outside == {
        "alpha": [("src/phrasezoo/helpers/deeper.py", 2), ("src/phrasezoo/helpers/only_alpha.py", 1)],
        "beta": [("benchmarks/bench_beta.py", 2)],
    }
    assert table == {"alpha": {"home": 2, "elsewhere": 3}, "beta": {"home": 1, "elsewhere": 2}}
    assert script["home_of"]("src/phrasezoo/data/cache.py", ["alpha"]) is None
