/** Text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A small self-contained page; `body` must already be escaped. */
export function renderPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Trellis</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1f2328; }
  h1 { font-size: 1.4rem; }
  label { display: block; margin: .8rem 0 .2rem; font-weight: 600; }
  input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #8c959f; border-radius: 6px; }
  button { margin-top: 1.2rem; padding: .6rem 1.2rem; font: inherit; border: 0; border-radius: 6px; background: #1f6feb; color: #fff; }
  .text, pre { white-space: pre-wrap; overflow-wrap: anywhere; }
  .error { color: #cf222e; } .muted { color: #57606a; font-size: .9rem; }
  dt { font-weight: 600; } dd { margin: 0 0 .6rem; }
</style>
</head>
<body>
${body}
</body>
</html>
`;
}
