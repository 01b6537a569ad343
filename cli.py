"""Run symgen from a checkout without installing it: ``python cli.py ...`` == ``symgen ...``."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from symgen.cli import main  # noqa: E402

if __name__ == "__main__":
    main()
