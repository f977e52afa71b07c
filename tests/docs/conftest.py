"""The docs tests list the guide blocks they skip, with their reasons, at the end of the run."""

from guide_blocks import RUN, all_blocks


def pytest_terminal_summary(terminalreporter):
    every = [block for block in all_blocks() if block.language in RUN]
    skipped = [block for block in every if block.skip]
    terminalreporter.section("documentation code blocks")
    terminalreporter.write_line(f"{len(every) - len(skipped)} run, {len(skipped)} skipped:")
    for block in skipped:
        terminalreporter.write_line(f"  {block.page}:{block.line}: {block.skip}")
