#!/usr/bin/env python3
"""Print one judge's settings from judges.toml as shell assignments (for serve.sh).

    eval "$(python3 servers/judge_vars.py judges.toml JUDGE PROG)"

Exits non-zero with a one-line message for an unknown judge or an unreadable file.
"""

import shlex
import sys
import tomllib

DEFAULTS = {"tokenizer_mode": "", "max_input_tokens": ""}


def main() -> int:
    path, name, prog = sys.argv[1:4]
    try:
        with open(path, "rb") as f:
            judges = tomllib.load(f)["judges"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as e:
        sys.exit(f"{prog}: cannot read judges from {path}: {e}")
    if name not in judges:
        sys.exit(f"{prog}: unknown judge '{name}' (known: {', '.join(judges)})")
    for key, value in {**DEFAULTS, **judges[name]}.items():
        if isinstance(value, str | int | float):
            print(f"{key}={shlex.quote(str(value))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
