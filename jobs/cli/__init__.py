"""chunkmill.jobs.cli: the ``chunkmill`` command line (click).

main      the command group, its entry point and the stage commands (runs, blocks,
          chunks)
run       ``chunkmill run``
search    ``chunkmill search``: BM25 over the chunks, or nearest vectors in a store
query     stats, check, sql and the folder helpers the readers share
consumer  changes and rollback
sync      ``chunkmill sync``
report    ``chunkmill report``
common    what the commands share: output and policy options, input errors, progress
          bars, closing lines
"""
