"""chunkmill.jobs: what reads, dispatches and writes, and the command line.

The jobs: blocks_job, chunks_job, run_job (the nightly run: run_inputs reads its inputs,
reuse takes what it can from the published run), ray_job (the Ray engine), report_job,
rollback; their workers (pool, worker) and the parts a worker writes whole
(part_work); what a run counts (counts) and its log (runlog); the options of a run,
declared once (options); the click CLI (cli, run_cli, search_cli, query_cli, consumer_cli,
sync_cli, report_cli, what they share: cli_common, errors).
"""
