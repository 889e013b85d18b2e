"""benchmarks/RESULTS.md, rendered from benchmarks/results/latest.json (``make bench``
writes both): the latest figures only, named by date, commit and machine.

    python benchmarks/results_page.py [--check]   # --check: fail if RESULTS.md is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LATEST = HERE / "results" / "latest.json"
PAGE = HERE / "RESULTS.md"


def _pct(x: float | None, digits: int = 1) -> str:
    return "" if x is None else f"{100 * x:.{digits}f} %"


def _num(x: float | None, digits: int = 2) -> str:
    return "" if x is None else f"{x:,.{digits}f}"


def _table(head: list[str], rows: list[list[str]], align: str | None = None) -> list[str]:
    align = align or "l" + "r" * (len(head) - 1)
    rule = ["---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(rule) + " |"]
    return lines + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def header(d: dict) -> list[str]:
    m = d.get("machine", {})
    where = ", ".join(
        x
        for x in (
            m.get("name"),
            f"{m['cpus']} CPUs" if m.get("cpus") else None,
            m.get("cpu"),
            f"Python {m['python']}" if m.get("python") else None,
        )
        if x
    )
    return [
        "# Results",
        "",
        "What `make bench` measured (`benchmarks/run.py`; this page is rendered from",
        "`benchmarks/results/latest.json` by `benchmarks/results_page.py`): "
        f"{d.get('date', 'date not recorded')}, commit {d.get('commit', 'not recorded')}, "
        f"{where or 'machine not recorded'}, alone on the machine. The corpora are every "
        "markdown and text file of `../shared/corpora` (real documentation in many "
        "languages). One-off times on a shared 2-core machine move by 15-30 % from one "
        "minute to the next: read the ratios, each measured within one run.",
        "",
    ]


def compare(d: dict) -> list[str]:
    c = d.get("compare")
    if not c:
        return []
    out = [
        "## Against the chunkers people use",
        "",
        f"`compare.py`: whole processes timed from launch to exit over all corpora "
        f"({c['mb']} MB), best of three with rows alternating, with the peak RSS of the "
        "process tree; 750 tokens (3,000 characters with 320 overlap for character-budget "
        "tools), quality judged on what would be embedded, the cap 1,000 cl100k tokens. The "
        "anchors list, read, split and write their chunk texts as one Parquet table; "
        "chunkmill writes what a run writes by default (documents, chunks and rejects, the "
        "manifest and the run history; a first run has no change set).",
        "",
    ]
    rows = []
    for name, r in c["rows"].items():
        rows.append(
            [
                name,
                _num(r["seconds"]),
                _num(r["mb_per_s"]),
                _num(r["peak_mb"], 0),
                f"{r['chunks']:,}" if "chunks" in r else "",
                _pct(r.get("unbalanced_fence"), 2),
                _pct(r.get("over_budget"), 2),
                _pct(r.get("starts_with_heading")),
                _pct(r.get("under_50_tokens")),
            ]
        )
    head = ["chunker (whole process)", "s", "MB/s", "peak MB", "chunks", "unbalanced fence"]
    out += _table(head + ["over 1,000 cl100k", "starts with heading", "< 50 tokens"], rows)
    r = c.get("ratios", {})
    out += [
        f"Cold run against text-splitter's whole process: **{r.get('cold_vs_text_splitter')}x**; "
        f"against LangChain's: **{r.get('cold_vs_langchain')}x**. Unchanged rerun: "
        f"{_pct(r.get('unchanged_share'))} of the cold run; re-pack after a policy change: "
        f"{r.get('repack_speedup')}x the cold run's speed.",
        "",
    ]
    if "exact_vs_estimate" in r:
        out += [
            f"Exact counts against the estimate, cold: the default (cl100k) "
            f"**{r['exact_vs_estimate']}x** the estimate's time; MiniLM's tokenizer "
            f"**{r['minilm_vs_estimate']}x** (at the cap of 256: "
            f"**{r['minilm_vs_estimate_256']}x**). Two tokenizers at once (cl100k and MiniLM, "
            f"cap 256): **{r['two_vs_minilm_256']}x** MiniLM's time alone, "
            f"{r['two_vs_cl100k_256']}x cl100k's.",
            "",
        ]
    return out


def inprocess(d: dict) -> list[str]:
    p = d.get("inprocess")
    if not p:
        return []
    out = [
        "## In-process",
        "",
        f"`inprocess.py`: every document of the corpora ({p['documents']:,}, {p['mb']} MB) "
        "read into memory, then split in a loop of one call per document (target 400 / max "
        "512; text-splitter `MarkdownSplitter(2048, overlap=204)`; LangChain's header then "
        "recursive splitter at 2,048 characters), and chunkmill's `chunk_texts` once over "
        "all of them on every core.",
        "",
    ]
    rows = [
        [n, _num(r["seconds"]), _num(r["cpu_seconds"]), _num(r["mb_per_s"]), f"{r['chunks']:,}"]
        for n, r in p["rows"].items()
    ]
    out += _table(["chunker", "s", "CPU s", "MB/s", "chunks"], rows)
    r = p.get("ratios", {})
    out += [
        f"The loop against text-splitter's: **{r.get('text-splitter')}x**; against "
        f"LangChain's: **{r.get('langchain')}x**; `chunk_texts` against text-splitter's "
        f"loop: **{r.get('batch_vs_text-splitter')}x**.",
        "",
    ]
    return out


def floor(d: dict) -> list[str]:
    f = d.get("floor_cpu")
    if not f:
        return []
    # the sum counts the worker start-up once per worker: a cold run starts two
    rows = [
        [part + " (x2)", f"2 x {_num(cpu)}"] if "worker's start-up" in part else [part, _num(cpu)]
        for part, cpu in f["cpu"].items()
    ]
    rows.append(["**sum**", f"**{_num(f['fixed_cpu'])}**"])
    return [
        "## Where a cold run's time goes",
        "",
        "`floor_cpu.py`: what every cold run spends outside its own parsing and packing, each "
        "part in a fresh interpreter, best of three, in CPU seconds. At half text-splitter's "
        f"speed a cold run on 2 cores may spend {_num(f['budget_cpu'])} CPU s in all.",
        "",
        *_table(["part", "CPU s"], rows),
    ]


def speed(d: dict) -> list[str]:
    s = d.get("speed")
    if not s:
        return []
    rows = [
        [
            name,
            _num(r["mb"]),
            _num(r["cold_s"]),
            _num(r["cold_mb_s"]),
            _num(r["unchanged_s"]),
            _pct(r["unchanged_share"], 0),
            _num(r["repack_s"]),
            "yes" if r["unchanged_ok"] else "no",
        ]
        for name, r in s.items()
    ]
    return [
        "## Nightly reruns",
        "",
        "`speed.py`: `chunkmill run --workers 2` as a whole process per corpus; re-pack: "
        "`--target-tokens 600 --max-tokens 900 --new-policy`; the unchanged rerun is the best "
        "of three; ok: within 10 % of the cold run or 0.5 s.",
        "",
        *_table(
            ["corpus", "MB", "cold s", "MB/s", "unchanged s", "share", "re-pack s", "ok"], rows
        ),
    ]


def nightly(d: dict) -> list[str]:
    n, w = d.get("nightly"), d.get("nights")
    if not n:
        return []
    scale = []
    if w and not w.get("skipped"):
        rows = [
            [
                size,
                _num(r["cold_s"]),
                _num(r["unchanged_s"]),
                _pct(r["unchanged_share"], 0),
                _num(r["edit_s"]),
                _pct(r["edit_share"], 0),
            ]
            for size, r in w.items()
            if isinstance(r, dict)
        ]
        scale = [
            "`nights.py`: whole `chunkmill run --workers 2` processes over the shared corpora "
            "(1x) and four copies of them (4x): cold, the unchanged rerun (best of three), one "
            f"edited paragraph per run (median of five). One edit at 4x / at 1x: "
            f"{_num(w['edit_4x_over_1x'])}.",
            "",
            *_table(["size", "cold s", "unchanged s", "share", "one edit s", "share"], rows),
        ]
    return [
        "## Edits",
        "",
        *scale,
        f"`nightly.py` (in one process): cold {n['cold_seconds']} s, unchanged "
        f"{n['unchanged_seconds']} s, re-pack {n['repack_seconds']} s; {n['edits']} edits of "
        f"one paragraph each, {n['added_per_edit_mean']} chunk id added per edit on average "
        f"(at most {n['added_per_edit_max']}), {n['edit_run_seconds_mean']} s per run.",
        "",
    ]


def sync(d: dict) -> list[str]:
    s = d.get("sync")
    if not s or s.get("skipped"):
        return []
    sp, m, e, n = s["speed"], s["minilm"], s["endpoint"], s["nights"]
    rows = [
        ["chunkmill sync", str(n["chunkmill_texts_embedded"]), f"{n['chunkmill_exact_nights']}"],
        ["LangChain index (incremental)", str(n["langchain_texts_embedded"]),
         f"{n['langchain_exact_nights']}"],
    ]  # fmt: skip
    return [
        "## Sync",
        "",
        f"`sync.py`: the published run of all shared corpora ({sp['chunks']:,} chunks) into "
        f"LanceDB with a zero-cost embedder: first sync {_num(sp['first_sync_s'])} s against "
        f"{_num(sp['cold_run_s'])} s for the cold run that made it "
        f"({_pct(sp['first_sync_share_of_run'], 0)}); unchanged sync "
        f"{_num(sp['unchanged_sync_s'], 3)} s (whole processes). The bundled MiniLM (ONNX, "
        f"{m['threads']} threads): {_num(m['texts_per_s'], 1)} texts/s over {m['texts']:,} "
        f"chunk texts of at most 256 tokens. The `openai:` client against the local test "
        f"server, {e['in_flight']} requests in flight: {_num(e['texts_per_s'], 0)} texts/s.",
        "",
        f"{n['nights']} nights over rust_book (edits, adds, deletes, renames, a restore from a "
        'backup), each synced; LangChain\'s `index(..., cleanup="incremental")` with its '
        "SQLRecordManager fed the same chunks (source = path). Texts sent to the embedder, and "
        f"nights after which the store held exactly the published chunks ({n['nights']} "
        f"nights; {n['distinct_texts_last']:,} distinct texts on the last):",
        "",
        *_table(["", "texts embedded", "exact nights"], rows),
        "",
    ]


def resources(d: dict) -> list[str]:
    out = ["## Memory, bad documents, large documents", ""]
    m, p, t = d.get("memory"), d.get("poison"), d.get("threads")
    if m:
        out += [
            f"- `memory.py`: peak RSS of a cold run ({m['workers']} workers) {m['peak_rss_mb_1x']} "
            f"MB over the corpora, {m['peak_rss_mb_4x']} MB over 4x the corpora "
            f"({m['ratio']}x)."
        ]
    if p:
        w = p["workers_2"]
        out += [
            f"- `poison.py`: {p['kinds']} poison documents ({p['poison_mb']} MB) beside 100 "
            f"ordinary ones, 2 workers: {w['seconds']} s, peak {w['peak_mb']} MB; ordinary "
            f"documents identical: {w['ordinary_identical']}; every file a document or a "
            f"reject: {w['every_file_accounted']}."
        ]
    for name, steps in (d.get("linear") or {}).items():
        per = ", ".join(f"{s['factor']}x {s['seconds_per_mb']} s/MB" for s in steps)
        out += [f"- `linear.py`, one {name} document: {per}."]
    if t:
        out += [
            f"- `threads.py`: a cold run's work on 2 worker processes {t['processes']} s, in one "
            f"process on 2 threads of the core {t['threads']} s (runs keep processes)."
        ]
    s, i = d.get("search"), d.get("integrity")
    if s:
        out += [
            f"- `search.py`: {s['queries']} BM25 queries over {s['chunks']:,} chunks, p50 "
            f"{s['p50_ms']} ms, p95 {s['p95_ms']} ms."
        ]
    if i:
        out += [
            f"- `integrity.py`: checking a published run's {i['run_files_mb']} MB against its "
            f"manifest {i['verify_seconds_best']} s; hashing a new run "
            f"{i['hash_new_run_seconds_best']} s."
        ]
    return out + [""] if len(out) > 2 else []


def cap(d: dict) -> list[str]:
    e = d.get("estimate_cap")
    if not e:
        return []
    out = [
        "## The cap in real tokens",
        "",
        "`estimate_cap.py`: chunks made with the estimate (the default policy's sizes, and "
        "target 400 / max 512), counted again in cl100k and o200k: the share over the cap, "
        "and the largest excess (negative: the largest chunk stays that far under the cap).",
        "",
    ]
    out += _cap_tables(e)
    x = d.get("exact_cap")
    if x:
        out += [
            "The same, packed by the default's exact cl100k counts (`--packed-by "
            "tiktoken:cl100k_base`), and the estimate's chunks per cl100k chunk:",
            "",
        ]
        out += _cap_tables(x)
        for policy, r in x.items():
            mine = {t["corpus"]: t["chunks"] for t in r.get("table") or []}
            theirs = {t["corpus"]: t["chunks"] for t in e.get(policy, {}).get("table") or []}
            rows = [[c, f"{theirs[c]:,}", f"{n:,}", f"{theirs[c] / n:.2f}"]
                    for c, n in mine.items() if c in theirs and n]  # fmt: skip
            out += [f"Chunks at policy {policy}:", ""]
            out += _table(["corpus", "estimate", "cl100k", "ratio"], rows)
    return out


def _cap_tables(e: dict) -> list[str]:
    out = []
    for policy, r in e.items():
        table = r.get("table") or []
        if not table:
            continue
        cols = [k for k in table[0] if k != "corpus"]
        out += [f"Policy {policy}:", ""]
        out += _table(
            ["corpus", *cols],
            [
                [t["corpus"], *(f"{t[k]:,}" if k == "chunks" else str(t[k]) for k in cols)]
                for t in table
            ],
        )
    return out


def sections(d: dict) -> list[str]:
    s = d.get("sections")
    if not s:
        return []
    rows = [
        [
            name,
            f"{r['chunks']:,}",
            _pct(r["under_50"]),
            _pct(r["sc001_embed"]),
            _pct(r["sc001_text"]),
            _pct(r["bound"]),
        ]
        for name, r in s.items()
    ]
    return [
        "## Chunks and their sections",
        "",
        "`sections.py` (default policy, markdown documents): chunks, the share under 50 "
        "tokens, the share whose embedded text names its section (after its context header "
        "the chunk opens with a heading, or the header names the chunk's section), the share "
        "whose text starts with a heading or is a whole section, and the best share any "
        "packing could reach for that test.",
        "",
        *_table(["corpus", "chunks", "< 50 tokens", "names its section", "text", "bound"], rows),
    ]


def retrieval(d: dict) -> list[str]:
    r = (d.get("retrieval") or {}).get("table")
    if not r:
        return []
    out = [
        "## Retrieval",
        "",
        "`retrieval.py`: the 100 development questions of `../shared/qa`, each with the "
        "corpus passage that answers it; every chunker at 512 tokens (2,048 characters for "
        "character budgets); recall@k in %: a question counts when a chunk among the first k "
        "holds its evidence; MRR@10: the mean reciprocal rank of the first such chunk; "
        "@20k chars: recall at equal retrieved text, the best-ranked chunks that together "
        "hold at most 20,480 characters (what ten 2,048-character chunks hold).",
        "",
    ]
    for retriever, chunkers in r.items():
        corpora = sorted({c for v in chunkers.values() for c in v["corpora"]})
        rows = [
            [
                name,
                f"{v['all']['@5']:.0f}",
                f"{v['all']['@10']:.0f}",
                f"{v['all']['text']:.0f}" if "text" in v["all"] else "",
                f"{v['all']['rr'] / 100:.3f}",
                f"{v['chunks']:,}",
                _pct(v["under_50"]),
                *(
                    f"{v['corpora'][c]['@5']:.0f}/{v['corpora'][c]['@10']:.0f}"
                    if c in v["corpora"]
                    else ""
                    for c in corpora
                ),
            ]
            for name, v in chunkers.items()
        ]
        head = ["chunker", "@5", "@10", "@20k chars", "MRR@10", "chunks", "< 50 tokens", *corpora]
        out += [f"{retriever}:", "", *_table(head, rows)]
    return out


def render(d: dict) -> str:
    parts = [header, compare, inprocess, speed, nightly, sync, floor, resources, cap, sections,
             retrieval]  # fmt: skip
    lines = [line for part in parts for line in part(d)]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if RESULTS.md is not current")
    args = ap.parse_args(argv)
    page = render(json.loads(LATEST.read_text()))
    if args.check:
        return 0 if PAGE.read_text() == page else 1
    PAGE.write_text(page)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
