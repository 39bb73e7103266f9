import sys

from .cli import main

# Guarded: a spawned worker process (``--jobs``) imports the main module of its parent.
if __name__ == "__main__":
    sys.exit(main())
