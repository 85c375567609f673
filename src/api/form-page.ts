import type { ErrorDetail } from '../errors';
import { HONEYPOT_FIELD, successMessageOf, type FormQuestion, type OpenForm } from '../domain/forms';
import { escapeHtml } from '../lib/html';

/**
 * The public page of a form (docs/TABLES.md "Forms"): plain HTML that works
 * without JavaScript. Every control has its label; help and errors are tied
 * to it with `aria-describedby`, a field in error says so with
 * `aria-invalid`, and the list of problems at the top is an alert a screen
 * reader reads first, each linking to its field. A page sent back after an
 * error keeps what the person typed (files must be chosen again).
 */

export type PageState = { values?: Record<string, unknown>; problems?: ErrorDetail[]; summary?: string };

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 2rem auto; padding: 0 1rem; color: #1f2328; }
  h1 { font-size: 1.5rem; margin-bottom: .4rem; }
  .description { white-space: pre-wrap; color: #3d444d; }
  .field { margin: 1.2rem 0; border: 0; padding: 0; }
  label, legend { display: block; font-weight: 600; margin-bottom: .2rem; padding: 0; }
  .choice { display: flex; gap: .5rem; align-items: center; font-weight: 400; margin: .2rem 0; }
  input:not([type=checkbox]):not([type=file]), textarea, select { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #8c959f; border-radius: 6px; background: #fff; }
  textarea { min-height: 6rem; }
  [aria-invalid=true] { border-color: #cf222e !important; outline: 1px solid #cf222e; }
  .help { color: #57606a; font-size: .9rem; margin: .1rem 0 .3rem; }
  .error { color: #cf222e; font-weight: 600; margin: .2rem 0; }
  .summary { border: 2px solid #cf222e; border-radius: 6px; padding: .6rem 1rem; margin: 1rem 0; }
  .summary h2 { font-size: 1.1rem; margin: 0 0 .3rem; }
  .summary a { color: #cf222e; }
  .required { color: #57606a; font-weight: 400; }
  .hp { position: absolute; left: -10000px; width: 1px; height: 1px; overflow: hidden; }
  button { margin-top: 1rem; padding: .6rem 1.4rem; font: inherit; border: 0; border-radius: 6px; background: #1f6feb; color: #fff; cursor: pointer; }
  .notice { font-size: 1.1rem; white-space: pre-wrap; }
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

const fieldId = (key: string) => `field-${key}`;

/** The form, empty or as it was sent back with its problems. */
export function formPage(open: OpenForm, state: PageState = {}): string {
  const problems = state.problems ?? [];
  const problemOf = new Map<string, string>();
  for (const problem of problems) {
    const key = String(problem.path[0] ?? '');
    if (!problemOf.has(key)) problemOf.set(key, problem.message);
  }
  const asked = new Set(open.questions.map((question) => question.column.key));
  const summaryItems = problems.length
    ? problems.map((problem) => {
        const key = String(problem.path[0] ?? '');
        return asked.has(key) ? `<li><a href="#${fieldId(key)}">${escapeHtml(problem.message)}</a></li>` : `<li>${escapeHtml(problem.message)}</li>`;
      })
    : state.summary
      ? [`<li>${escapeHtml(state.summary)}</li>`]
      : [];
  const summary = summaryItems.length
    ? `<div class="summary" role="alert" aria-labelledby="problems"><h2 id="problems">There is a problem</h2><ul>${summaryItems.join('')}</ul></div>`
    : '';
  const multipart = open.questions.some((question) => question.column.type === 'attachment');
  const fields = open.questions.map((question) => renderQuestion(question, state.values?.[question.column.key], problemOf.get(question.column.key))).join('\n');
  const title = open.form.title;
  const body = `<h1>${escapeHtml(title)}</h1>
${open.form.description ? `<p class="description">${escapeHtml(open.form.description)}</p>` : ''}
${summary}
<form method="post" action="${escapeHtml(open.token)}"${multipart ? ' enctype="multipart/form-data"' : ''}>
${fields}
<div class="hp" aria-hidden="true"><label for="${fieldId(HONEYPOT_FIELD)}">Leave this empty</label><input type="text" id="${fieldId(HONEYPOT_FIELD)}" name="${HONEYPOT_FIELD}" tabindex="-1" autocomplete="off"></div>
<button type="submit">${escapeHtml(open.form.submitLabel ?? 'Send')}</button>
</form>`;
  return page(problems.length || state.summary ? `Error: ${title}` : title, body);
}

function renderQuestion(question: FormQuestion, value: unknown, problem: string | undefined): string {
  const { column, required } = question;
  const id = fieldId(column.key);
  const name = escapeHtml(column.key);
  const described = [question.help ? `help-${column.key}` : null, problem ? `error-${column.key}` : null].filter(Boolean).join(' ');
  const aria = `${described ? ` aria-describedby="${escapeHtml(described)}"` : ''}${problem ? ' aria-invalid="true"' : ''}${required ? ' required aria-required="true"' : ''}`;
  const mark = required ? ' <span class="required">(required)</span>' : '';
  const help = question.help ? `<p class="help" id="help-${escapeHtml(column.key)}">${escapeHtml(question.help)}</p>` : '';
  const error = problem ? `<p class="error" id="error-${escapeHtml(column.key)}">Error: ${escapeHtml(problem)}</p>` : '';
  const values = (value === undefined || value === null ? [] : Array.isArray(value) ? value : [value]).map(String);
  const text = escapeHtml(values[0] ?? '');
  const label = `<label for="${escapeHtml(id)}">${escapeHtml(question.label)}${mark}</label>`;
  switch (column.type) {
    case 'longtext':
      return `<div class="field">${label}${help}${error}<textarea id="${escapeHtml(id)}" name="${name}"${aria}>${text}</textarea></div>`;
    case 'number':
      return `<div class="field">${label}${help}${error}<input type="text" inputmode="decimal" id="${escapeHtml(id)}" name="${name}" value="${text}"${aria}></div>`;
    case 'date':
      return `<div class="field">${label}${help}${error}<input type="date" id="${escapeHtml(id)}" name="${name}" value="${text}"${aria}></div>`;
    case 'url':
      return `<div class="field">${label}${help}${error}<input type="url" id="${escapeHtml(id)}" name="${name}" value="${text}"${aria}></div>`;
    case 'checkbox': {
      const checked = values.some((item) => /^(true|on|1|yes)$/i.test(item)) ? ' checked' : '';
      return `<div class="field">${help}${error}<label class="choice" for="${escapeHtml(id)}"><input type="checkbox" id="${escapeHtml(id)}" name="${name}" value="true"${checked}${aria}>${escapeHtml(question.label)}${mark}</label></div>`;
    }
    case 'status': {
      const options = (column.options ?? [])
        .map((option) => `<option value="${escapeHtml(option.value)}"${values[0] === option.value ? ' selected' : ''}>${escapeHtml(option.label)}</option>`)
        .join('');
      return `<div class="field">${label}${help}${error}<select id="${escapeHtml(id)}" name="${name}"${aria}><option value="">Choose…</option>${options}</select></div>`;
    }
    case 'select': {
      // Several answers: a group of boxes under one legend; the first box is what the summary links to.
      const boxes = (column.options ?? [])
        .map((option, index) => {
          const boxId = index === 0 ? id : `${id}-${index}`;
          return `<label class="choice" for="${escapeHtml(boxId)}"><input type="checkbox" id="${escapeHtml(boxId)}" name="${name}" value="${escapeHtml(option.value)}"${values.includes(option.value) ? ' checked' : ''}>${escapeHtml(option.label)}</label>`;
        })
        .join('');
      const groupAria = `${described ? ` aria-describedby="${escapeHtml(described)}"` : ''}${problem ? ' aria-invalid="true"' : ''}`;
      return `<fieldset class="field"${groupAria}><legend>${escapeHtml(question.label)}${mark}</legend>${help}${error}${boxes}</fieldset>`;
    }
    case 'attachment':
      return `<div class="field">${label}${help}${error}<input type="file" multiple id="${escapeHtml(id)}" name="${name}"${aria}></div>`;
    default:
      return `<div class="field">${label}${help}${error}<input type="text" id="${escapeHtml(id)}" name="${name}" value="${text}"${aria}></div>`;
  }
}

/** After sending: the form's own message. */
export function sentPage(open: OpenForm): string {
  return page(open.form.title, `<h1>${escapeHtml(open.form.title)}</h1>\n<p class="notice" role="status">${escapeHtml(successMessageOf(open))}</p>`);
}

/** The form at its row cap: it says so instead of asking. */
export function fullPage(open: OpenForm): string {
  return page(open.form.title, `<h1>${escapeHtml(open.form.title)}</h1>\n<p class="notice" role="status">This form can take no more answers.</p>`);
}

/** A closed or unknown form, too many answers from one address, or another refusal with nothing to fill in again. */
export function noticePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p class="notice" role="alert">${escapeHtml(message)}</p>`);
}
