import { ApiError, errors, OverLimitError, type ErrorDetail } from '../errors';
import { capsFor } from '../limits/plans';
import type { Author } from '../model/schemas/common';
import { tablesDocumentName } from '../model/document-names';
import { createTableId, ensureSheet, insertRow, readColumns, type ColumnDef, type ColumnOption, type RowData } from '../model/table/document';
import { getView, type FormSettings, type ViewDef } from '../model/table/views';
import { isIsoDateOrDateTime } from '../model/table/validation';
import { findWorkspacesBySlug } from '../persistence/access';
import { findFormLink } from '../persistence/form-links';
import type { PlanName, Surface, Workspace } from '../persistence/schema';
import { liveFilesNamedIn } from './attachment-cells';
import { uploadCellFile, type IncomingFile } from './file-uploads';
import type { Services } from './services';
import { ensureSurfaceOfKind } from './surfaces';
import { checkValues, lookUpPassedRows, passedRowCount, tableSurfaces, transactWithinRowCap } from './tables';
import { FORM_COLUMN_TYPES } from '../model/table/views';

/**
 * Public forms (docs/TABLES.md "Forms"): a form view, while open, collects
 * rows from anyone with its link, without an account. A submission creates
 * one row on the view's sheet, attributed to the form (an author of kind
 * `form` whose id is the view's), with the `row.created` event, webhooks and
 * everything a row write has. It may set only the form's fields, is checked
 * as the column types check a REST write, counts against the plan's row cap,
 * and may carry files for attachment fields. Closing or deleting the form,
 * or the workspace's archive, makes its link unknown at once: every request
 * reads the view from the table document.
 */

/** The hidden field bots fill in and people never see: a submission with it is dropped silently. */
export const HONEYPOT_FIELD = '_website';

/** Files one submission may carry, and the bytes of each. */
export const FORM_UPLOADS = { files: 10, fileBytes: 10 * 1024 * 1024 } as const;

export type FormQuestion = { column: ColumnDef; label: string; help: string | null; required: boolean };

export type OpenForm = {
  token: string;
  workspace: Workspace;
  orgSlug: string;
  orgPlan: PlanName;
  view: ViewDef;
  form: FormSettings;
  questions: FormQuestion[];
  author: Author;
};

/** What someone sent: values by field (form posts repeat a field for several values) and files by field. */
export type FormAnswer = { values: Record<string, unknown>; files: Record<string, IncomingFile[]>; encoding: 'json' | 'form' };

export function formNotFound(): ApiError {
  return new ApiError(404, 'form_not_found', 'This form is closed, or it does not exist.');
}

/** The open form behind a public token; 404 `form_not_found` when unknown, closed, deleted, or its sheet or workspace is gone. */
export async function openForm(services: Services, token: string): Promise<OpenForm> {
  const link = await findFormLink(services.db, token);
  if (!link) throw formNotFound();
  const [workspace] = await findWorkspacesBySlug(services.db, link.workspaceId, { onlyWorkspaceId: link.workspaceId });
  if (!workspace || workspace.archivedAt) throw formNotFound();
  const sheets = await tableSurfaces(services, workspace.id);
  const read = await services.sync.read(tablesDocumentName(workspace.id), (doc) => {
    const view = getView(doc, link.viewId);
    return view ? { view, columns: readColumns(doc, view.surfaceId) } : null;
  });
  if (!read || read.view.kind !== 'form' || !read.view.form?.open || !sheets.some((sheet: Surface) => sheet.id === read.view.surfaceId)) throw formNotFound();
  const { view, columns } = read;
  const form = view.form!;
  const byKey = new Map(columns.map((column) => [column.key, column]));
  // A question whose column became a type a form cannot ask (a person, a link) is left out until the owner fixes it.
  const questions = form.fields.flatMap((field) => {
    const column = byKey.get(field.column);
    return column && FORM_COLUMN_TYPES.has(column.type) ? [{ column, label: field.label ?? column.label, help: field.help ?? null, required: field.required }] : [];
  });
  return {
    token,
    workspace,
    orgSlug: workspace.orgSlug,
    orgPlan: workspace.orgPlan,
    view,
    form,
    questions,
    author: { principalType: 'form', id: view.id, name: form.title, avatarUrl: null },
  };
}

/** The form as `GET /api/forms/{token}` describes it, for front ends of one's own. */
export function describeForm(open: OpenForm) {
  return {
    title: open.form.title,
    description: open.form.description,
    submitLabel: open.form.submitLabel ?? 'Send',
    successMessage: successMessageOf(open),
    fields: open.questions.map((question) => ({
      key: question.column.key,
      label: question.label,
      help: question.help,
      required: question.required,
      type: question.column.type,
      ...(question.column.type === 'status' || question.column.type === 'select'
        ? { options: (question.column.options ?? []).map((option: ColumnOption) => ({ value: option.value, label: option.label })), multiple: question.column.type === 'select' }
        : {}),
    })),
  };
}

export function successMessageOf(open: OpenForm): string {
  return open.form.successMessage || 'Thank you, your answer was sent.';
}

/**
 * One submission: 400 naming fields that are not on the form, 422 naming
 * a required field left empty or a value that does not fit its column, 402
 * at the row cap, 413 past the storage quota. A submission whose honeypot
 * is filled in is accepted and dropped (bots get no signal). Returns the
 * new row's id, or null for a dropped submission.
 */
export async function submitForm(services: Services, open: OpenForm, answer: FormAnswer): Promise<string | null> {
  const honeypot = answer.values[HONEYPOT_FIELD];
  if (honeypot !== undefined && honeypot !== '' && honeypot !== null && !(Array.isArray(honeypot) && honeypot.every((item) => item === ''))) return null;
  const asked = new Map(open.questions.map((question) => [question.column.key, question]));
  const strangers = [...Object.keys(answer.values), ...Object.keys(answer.files)].filter((key) => key !== HONEYPOT_FIELD && !asked.has(key));
  if (strangers.length > 0) {
    throw errors.badRequest(
      `This form does not ask for ${[...new Set(strangers)].map((key) => `"${key}"`).join(', ')}.`,
      [...new Set(strangers)].map((key) => ({ path: [key], code: 'not_on_form', message: 'not a field of this form' })),
    );
  }
  const issues: ErrorDetail[] = [];
  const data: Record<string, unknown> = {};
  for (const question of open.questions) {
    const key = question.column.key;
    // A file input left empty still sends a part: no name, no bytes.
    const files = (answer.files[key] ?? []).filter((file) => file.bytes.length > 0);
    const value = question.column.type === 'attachment' ? attachmentPlaceholder(answer.values[key], files, key, issues) : readAnswer(question.column, answer.values[key], answer.encoding, issues);
    if (value === undefined) {
      if (question.required) issues.push({ path: [key], code: 'required', message: `${question.label} is required.` });
      continue;
    }
    data[key] = value;
  }
  if (issues.length > 0) throw errors.validation(`The answer is not complete: ${issues.map((issue) => issue.message).join(' ')}`, issues);
  const columns = open.questions.map((question) => question.column);
  // The values are checked as a REST write is (files come next), before anything is stored.
  checkValues(columns, withoutFiles(data, columns), []);
  await refuseAtRowCap(services, open);
  const uploads = await storeAnswerFiles(services, open, answer, columns);
  Object.assign(data, uploads);
  const files = await liveFilesNamedIn(services, open.workspace.id, [data]);
  const id = createTableId();
  await transactWithinRowCap(services, { principal: open.author }, { workspace: open.workspace, orgPlan: open.orgPlan }, () => 1, (doc) => {
    const cells = checkValues(readColumns(doc, open.view.surfaceId), data, [], undefined, files);
    ensureSheet(doc, open.view.surfaceId, null);
    insertRow(doc, { id, surfaceId: open.view.surfaceId, data: cells as RowData }, null);
  }).catch((error: unknown) => {
    // Another answer took the last row between the check above and this write.
    throw error instanceof OverLimitError ? formFull() : error;
  });
  return id;
}

const FILES_PENDING = Symbol('files');

function attachmentPlaceholder(value: unknown, files: IncomingFile[], key: string, issues: ErrorDetail[]): unknown {
  if (files.length > 0) return FILES_PENDING;
  if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.every((item) => item === ''))) return undefined;
  issues.push({ path: [key], code: 'upload_required', message: `${key} takes files: send them as multipart/form-data parts named "${key}".` });
  return undefined;
}

function withoutFiles(data: Record<string, unknown>, columns: readonly ColumnDef[]): Record<string, unknown> {
  const attachments = new Set(columns.filter((column) => column.type === 'attachment').map((column) => column.key));
  return Object.fromEntries(Object.entries(data).filter(([key]) => !attachments.has(key)));
}

/**
 * A value as its column takes it. A form post sends text (and repeats a
 * field for several values); JSON may send typed values. Blank is no
 * answer. What does not fit is an issue naming the field; the rest is
 * checked by the column's own rules after.
 */
function readAnswer(column: ColumnDef, raw: unknown, encoding: FormAnswer['encoding'], issues: ErrorDetail[]): unknown {
  const key = column.key;
  const items = raw === undefined || raw === null ? [] : Array.isArray(raw) ? raw : [raw];
  const filled = items.filter((item) => item !== '' && item !== null);
  const problem = (code: string, message: string) => {
    issues.push({ path: [key], code, message });
    return undefined;
  };
  if (column.type === 'select') {
    if (filled.some((item) => typeof item !== 'string')) return problem('invalid_type', `${key} takes option values.`);
    return filled.length ? [...new Set(filled as string[])] : undefined;
  }
  if (column.type === 'checkbox') {
    // An unticked box is not sent at all; `false`, `off` or `0` say no as well.
    const last = filled[filled.length - 1];
    if (last === undefined) return undefined;
    if (typeof last === 'boolean') return last ? true : undefined;
    if (typeof last === 'string' && /^(true|on|1|yes)$/i.test(last)) return true;
    if (typeof last === 'string' && /^(false|off|0|no)$/i.test(last)) return undefined;
    return problem('invalid_type', `${key} is a yes or no: true or false.`);
  }
  if (filled.length === 0) return undefined;
  if (filled.length > 1) return problem('invalid_type', `${key} takes one value.`);
  const value = filled[0];
  switch (column.type) {
    case 'number': {
      const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value.trim().replace(/,/g, '')) : NaN;
      return Number.isFinite(number) ? number : problem('invalid_format', `${key} must be a number.`);
    }
    case 'date': {
      const text = typeof value === 'string' ? value.trim() : '';
      return isIsoDateOrDateTime(text) ? text : problem('invalid_format', `${key} must be a date (2026-05-31).`);
    }
    default:
      if (typeof value !== 'string') return problem('invalid_type', `${key} takes text${encoding === 'json' ? ' (a JSON string)' : ''}.`);
      return column.type === 'url' ? value.trim() : value;
  }
}

/** Whether the workspace's sheet can take one more row under its plan's cap (the page says the form is full when not). */
export async function formHasRoom(services: Services, open: OpenForm): Promise<boolean> {
  const cap = capsFor(open.orgPlan).rowsPerWorkspace;
  await lookUpPassedRows(services, open.workspace.id);
  const current = await services.sync.read(tablesDocumentName(open.workspace.id), passedRowCount);
  return current + 1 <= cap;
}

/**
 * 402 at the row cap, saying only that the form is full: the plan, its cap
 * and the organisation's row count are the workspace's business, not the
 * public's.
 */
export function formFull(): ApiError {
  return new ApiError(402, 'form_full', 'This form can take no more answers.');
}

/** 402 before any file is stored when the sheet's workspace has no room; the write itself counts again (transactWithinRowCap). */
async function refuseAtRowCap(services: Services, open: OpenForm): Promise<void> {
  if (!(await formHasRoom(services, open))) throw formFull();
}

/** The answer's files, stored in the workspace's files surface (made when there is none) in the form's name: their ids by field. */
async function storeAnswerFiles(services: Services, open: OpenForm, answer: FormAnswer, columns: readonly ColumnDef[]): Promise<Record<string, string[]>> {
  const fields = columns.filter((column) => column.type === 'attachment' && (answer.files[column.key] ?? []).some((file) => file.bytes.length > 0));
  if (fields.length === 0) return {};
  const target = { workspace: open.workspace, orgSlug: open.orgSlug };
  const surface = await ensureSurfaceOfKind(services, { principal: open.author }, target, 'files');
  const stored: Record<string, string[]> = {};
  for (const column of fields) {
    stored[column.key] = [];
    for (const file of answer.files[column.key]!.filter((part) => part.bytes.length > 0)) {
      const uploaded = await uploadCellFile(services, open.author, { resolved: target, surface }, file).catch((error: unknown) => {
        // The upload's refusals name its `file`; here the field is the form's.
        if (error instanceof ApiError && error.statusCode === 422 && Array.isArray(error.details)) {
          throw errors.validation(error.message, (error.details as ErrorDetail[]).map((detail) => ({ ...detail, path: [column.key] })));
        }
        throw error;
      });
      stored[column.key]!.push(uploaded.id);
    }
  }
  return stored;
}
