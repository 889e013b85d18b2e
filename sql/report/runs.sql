-- Every recorded run, oldest first: what it added, removed and kept, its policy, and
-- whether its policy differs from the run before it (a policy change re-ids every chunk).
WITH
ordered AS (
    SELECT
        run_id, status, started_at, policy_hash, chunker_version,
        coalesce(chunks_added, 0) AS chunks_added,
        coalesce(chunks_removed, 0) AS chunks_removed,
        coalesce(chunks_kept, 0) AS chunks_kept,
        chunks_total,
        coalesce(documents_added, 0) + coalesce(documents_changed, 0)
            + coalesce(documents_deleted, 0) AS documents_touched,
        lag(policy_hash) OVER (ORDER BY started_at, run_id) AS previous_policy
    FROM runs
),
final AS (
    SELECT
        * EXCLUDE (previous_policy),
        previous_policy IS NOT NULL AND previous_policy <> policy_hash AS policy_changed
    FROM ordered
)
SELECT * FROM final ORDER BY started_at, run_id
