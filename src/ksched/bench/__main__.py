"""``python -m ksched.bench WORKLOAD_FILE ...``: the same as ``ksched bench``."""

from __future__ import annotations

import argparse

from . import configure_parser, main

parser = argparse.ArgumentParser(prog="ksched bench", description=main.__doc__)
configure_parser(parser)
raise SystemExit(main(parser.parse_args()))
