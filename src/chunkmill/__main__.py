"""``python -m chunkmill``: the ``chunkmill`` command."""

if __name__ == "__main__":
    from chunkmill.jobs.cli.main import entry

    entry()
