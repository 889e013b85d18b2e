"""chunkmill.jobs: what reads, dispatches and writes, and the command line.

The jobs: blocks_job, chunks_job, run_job (the nightly run: run_inputs reads its inputs,
reuse takes what it can from the published run, run_batches sends the batches to the
engine and writes what comes back, run_tally adds up what they did), ray_job (the Ray
engine), report_job, rollback; their workers (pool, worker) and the parts a worker writes
whole (part_work); what a run counts (counts) and its log (runlog); the options of a run,
declared once (options); how the command line fails (errors); the click command line
(``cli``, a folder of its own).
"""
