"""chunkmill.pipeline.inputs: a run's INPUT into raw documents, read safely.

sources        the INPUT (folders, files, tables, object stores) listed and read into
               RawDocuments, in batches
reading        one file's bytes: stat first, regular files only, bounded reads
table_rows     tables of documents (Parquet, JSONL, Arrow): one document per row
parquet_pages  the page sizes a Parquet file declares, read before any page
input_labels   with several INPUTs, the label each input's paths start with
"""
