"""What the CLI tests share: run a command and keep its exit code and output, and the project's error rule
(a failing command exits with its code and writes exactly one line to stderr)."""
import os
import subprocess


def run(*args, env=None, input=None, timeout=300, cwd=None):
    """Runs args (the binary first), returns the CompletedProcess with text stdout and stderr; env adds to
    (does not replace) this process's environment."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, errors="replace", env=full_env,
                          input=input, timeout=timeout, cwd=cwd)


def assert_one_line_error(result, code, needle):
    """The command exited with exactly `code` and its stderr is one line that contains `needle`."""
    lines = result.stderr.splitlines()
    assert result.returncode == code and len(lines) == 1 and needle in result.stderr, (
        f"rc={result.returncode} (wanted {code}); stderr has {len(lines)} lines (wanted 1 containing "
        f"{needle!r}):\n{result.stderr[:2000]}")


def expect_exit(code, needle, *args, **kwargs):
    """Runs args and asserts the one-line error rule; returns the result."""
    result = run(*args, **kwargs)
    assert_one_line_error(result, code, needle)
    return result
