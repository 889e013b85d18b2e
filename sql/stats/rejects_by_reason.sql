-- Rejected documents by stage and reason.
WITH
final AS (
    SELECT stage, reason, count(*) AS documents, min(path) AS example
    FROM rejects
    GROUP BY stage, reason
)
SELECT * FROM final ORDER BY documents DESC, stage, reason
