"""The report page's style sheet (inlined into the page; no web font, no network)."""

CSS = """
:root { --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bg: #f3f4f6; --card: #fff;
        --accent: #2563eb; --other: #f97316; --warn: #dc2626; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
       font: 14px/1.5 Inter, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif; }
.wrap { max-width: 1320px; margin: 0 auto; padding: 0 24px; }
header { background: #111827; color: #f9fafb; padding: 22px 0 20px; margin-bottom: 20px; }
header h1 { margin: 0; font-size: 22px; font-weight: 650; letter-spacing: -0.01em; }
header .sub { margin: 4px 0 0; color: #d1d5db; }
header code { color: #f9fafb; }
header .key { margin: 8px 0 0; color: #d1d5db; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px;
          background: var(--accent); margin: 0 6px -1px 0; }
.swatch.other { background: var(--other); margin-left: 18px; }
code { font: 12.5px ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace; }
.tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr));
         gap: 10px; margin-bottom: 16px; }
.tile { background: var(--card); border-radius: 10px; padding: 12px 14px;
        border: 1px solid var(--line); border-top: 3px solid var(--accent); }
.tile.warn { border-top-color: var(--warn); }
.tile .value { font-size: 24px; font-weight: 650; letter-spacing: -0.02em; }
.tile .label { color: var(--muted); font-size: 12.5px; }
.tile .was { color: var(--other); font-size: 12.5px; margin-top: 2px; }
.tile .delta { color: var(--ink); font-weight: 600; margin-left: 4px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr));
        gap: 16px; align-items: start; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px;
        padding: 16px 18px 10px; min-width: 0; }
.card.wide { grid-column: 1 / -1; }
.card h2 { margin: 0; font-size: 16px; font-weight: 650; }
.card .caption { margin: 2px 0 6px; color: var(--muted); }
.card .summary { margin: 0 0 6px; font-weight: 550; }
.card .note { margin: 18px 0 16px; padding: 14px 16px; border-radius: 8px; background: #f9fafb;
              color: var(--muted); border: 1px dashed var(--line); }
.policy-card { margin-bottom: 16px; padding: 12px 18px; }
.policy-card summary { cursor: pointer; font-weight: 650; }
table.policy { border-collapse: collapse; margin: 10px 0 6px; }
table.policy th, table.policy td { text-align: left; padding: 3px 18px 3px 0;
                                   border-bottom: 1px solid var(--line); }
table.policy th { font-weight: 500; color: var(--muted); }
table.policy tr.changed td { color: var(--other); font-weight: 650; }
footer { color: var(--muted); font-size: 12.5px; margin: 20px 0 36px; }
"""
