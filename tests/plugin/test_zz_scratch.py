import pytest
from plugin_project import write

def _change_reply(project, old, new):
    path = project.path / "scenarios" / "adding.yaml"
    path.write_text(path.read_text().replace(old, new))

def test_show(project):
    project.runpytest("--snapshot-update")
    _change_reply(project, "      - 2 + 3 = 5\n", "")
    r = project.runpytest("scenarios/adding.yaml::function_calling")
    print("=====OUT1\n" + r.stdout.str())
    write(project, "broken_tools.py", '''\
        def add(a: int, b: int) -> int:
            """Add two integers."""
            raise SystemExit("the tool exited")
        ''')
    path = project.path / "scenarios" / "adding.yaml"
    path.write_text(path.read_text().replace("calc_tools:add", "broken_tools:add"))
    r = project.runpytest("scenarios/adding.yaml::react")
    print("=====OUT2\n" + r.stdout.str())
    write(project, "scenarios/broken.yaml", "format: 1\nturns:\n  - user: [unclosed\n")
    r = project.runpytest()
    print("=====OUT3\n" + r.stdout.str())
    r = project.runpytest("--record-mode=sometimes")
    print("=====OUT4\n" + r.stderr.str())
    r = project.runpytest("--collect-only", "-q")
    print("=====OUT5\n" + r.stdout.str())
