"""The README's Python commands print what the README says: each `$ python3 examples/python/...`
line of a console block runs with the installed package, from the repository root, and its
output must equal the lines that follow it in the README."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def readme_examples():
    """(command, expected output) for each Python example in README.md."""
    lines = (ROOT / "README.md").read_text().splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.startswith("$ python3 examples/python/"):
            expected = []
            for after in lines[i + 1 :]:
                if after.startswith("$ ") or after.startswith("```"):
                    break
                expected.append(after)
            found.append((line[2:], expected))
    return found


def test_the_readme_runs_the_python_examples():
    assert readme_examples(), "README.md shows no Python example"


def test_each_example_prints_what_the_readme_says():
    for command, expected in readme_examples():
        script = command.split()[1]
        run = subprocess.run([sys.executable, script], cwd=ROOT, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == expected, f"{command}:\n{run.stdout}"
