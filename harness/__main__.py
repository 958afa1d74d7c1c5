from harness.cli import main
from harness.core.commands import process_main

process_main(main)
