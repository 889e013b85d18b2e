"""chunkmill.pipeline.report: the chunk-quality report, one self-contained HTML page.

figures        the figures of one run: sql/stats and sql/report over it, and a recount
               of a sample with a real tokenizer
charts         the report's charts (Plotly), one function each
charts_detail  split blocks, rejects, documents, runs
charts_tokens  the estimate against a real tokenizer
page           the HTML page: figures as JSON islands, plotly.js inlined
style          the page's style sheet
"""
