import { useEffect, useState } from 'preact/hooks';
import { FORM_COLUMN_TYPES, type FormField, type FormSettings } from '../../../src/model/table/views';
import { api } from '../lib/api';
import { Button } from '../ui/primitives';
import type { ColumnDef, TableModel, ViewDef } from './table-model';

/**
 * A form view's builder (docs/TABLES.md "Forms"): its title, description and
 * texts, which columns it asks (with a question, help and whether an answer
 * is required), and whether it is open. Every change is a change of the view
 * in the table document, live for everyone like any view; the public link is
 * the server's (made the first time the form is read open), read over REST
 * while the form is open.
 */
export function FormBuilder(props: { model: TableModel; view: ViewDef; columns: ColumnDef[]; editable: boolean; workspaceId: string }) {
  const { model, view, editable } = props;
  const form: FormSettings = view.form ?? { title: view.name, description: '', fields: [], open: false };
  const [publicUrl, setPublicUrl] = useState<string | null>(null);

  useEffect(() => {
    if (!form.open) return setPublicUrl(null);
    let current = true;
    // The document may reach the server a while after this change (a slow link, a busy server): ask until the
    // view reads open there, less often as it takes longer, for as long as the form is shown open.
    const look = (waitMs: number) =>
      api<{ views: Array<{ id: string; publicUrl?: string | null }> }>('GET', `/api/workspaces/${encodeURIComponent(props.workspaceId)}/views?surfaceId=${encodeURIComponent(view.surfaceId)}`)
        .then((answer) => {
          const url = answer.views.find((candidate) => candidate.id === view.id)?.publicUrl ?? null;
          if (!current) return;
          if (url) setPublicUrl(url);
          else setTimeout(() => current && void look(Math.min(waitMs * 1.5, 5_000)), waitMs);
        })
        .catch(() => {
          // Offline: the link shows once the server is reachable and the form is read again.
        });
    void look(300);
    return () => {
      current = false;
    };
  }, [form.open, view.id, view.surfaceId, props.workspaceId]);

  // Each change starts from the form as the document holds it now: two changes made before the page draws again
  // (a message left with Tab, then "Open the form" clicked) would otherwise each start from the same render's form,
  // and the second would put back what the first changed.
  const current = (): FormSettings => model.view(view.id)?.form ?? form;
  const write = (patch: Partial<FormSettings>) => model.updateView(view.id, { form: { ...current(), ...patch } });
  const askable = props.columns.filter((column) => FORM_COLUMN_TYPES.has(column.type));
  const asked = new Map(form.fields.map((field) => [field.column, field]));
  // The questions in the form's order, then the columns it could ask.
  const ordered = [...form.fields.flatMap((field) => askable.filter((column) => column.key === field.column)), ...askable.filter((column) => !asked.has(column.key))];
  const setField = (column: string, change: Partial<FormField> | null) => {
    const { fields: now } = current();
    const fields = change === null ? now.filter((field) => field.column !== column) : now.some((field) => field.column === column) ? now.map((field) => (field.column === column ? { ...field, ...change } : field)) : [...now, { column, required: false, ...change }];
    write({ fields });
  };
  const text = (value: string) => value.trim();
  // What is typed in a text field until it is committed (its change event, on leaving it): the field shows it
  // over the stored text, so a render in between (someone else's change, the saved indicator) cannot put the
  // stored text back over the typing, which would then never be committed.
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const typed = (id: string, stored: string) => ({
    value: drafts[id] ?? stored,
    onInput: (event: Event) => {
      const value = (event.target as HTMLInputElement).value;
      setDrafts((now) => ({ ...now, [id]: value }));
    },
  });
  const commit = (id: string, save: (value: string) => void) => (event: Event) => {
    save((event.target as HTMLInputElement).value);
    setDrafts(({ [id]: _committed, ...rest }) => rest);
  };

  return (
    <div class="form-builder">
      <section class="form-builder-status" aria-label="Sharing">
        {form.open ? (
          <>
            <p>
              <strong>Open:</strong> anyone with the link can answer, without an account.{' '}
              {publicUrl ? (
                <a href={publicUrl} target="_blank" rel="noopener noreferrer" class="form-builder-link">
                  {publicUrl}
                </a>
              ) : (
                <span class="muted">Making the link…</span>
              )}
            </p>
            {editable && (
              <Button variant="secondary" onClick={() => write({ open: false })}>
                Close the form
              </Button>
            )}
          </>
        ) : (
          <>
            <p>
              <strong>Closed:</strong> the form takes no answers and its link answers “not found”.
            </p>
            {editable && (
              <Button variant="primary" disabled={form.fields.length === 0} onClick={() => write({ open: true })}>
                Open the form
              </Button>
            )}
          </>
        )}
      </section>
      <div class="form-builder-texts">
        <label class="field">
          <span>Title</span>
          <input name="form-title" maxLength={200} disabled={!editable} {...typed('title', form.title)} onChange={commit('title', (value) => text(value) && write({ title: text(value) }))} />
        </label>
        <label class="field">
          <span>Description</span>
          <textarea name="form-description" maxLength={5000} disabled={!editable} {...typed('description', form.description)} onChange={commit('description', (value) => write({ description: value }))} />
        </label>
        <label class="field">
          <span>Button</span>
          <input name="form-submit-label" maxLength={60} placeholder="Send" disabled={!editable} {...typed('submitLabel', form.submitLabel ?? '')} onChange={commit('submitLabel', (value) => write({ submitLabel: text(value) || undefined }))} />
        </label>
        <label class="field">
          <span>Message after sending</span>
          <textarea name="form-success-message" maxLength={2000} placeholder="Thank you, your answer was sent." disabled={!editable} {...typed('successMessage', form.successMessage ?? '')} onChange={commit('successMessage', (value) => write({ successMessage: value || undefined }))} />
        </label>
      </div>
      <fieldset class="form-builder-questions">
        <legend>Questions</legend>
        {ordered.map((column) => {
          const field = asked.get(column.key);
          return (
            <div key={column.key} class={`form-builder-question ${field ? 'is-asked' : ''}`} data-column={column.key}>
              <label class="form-builder-check">
                <input type="checkbox" disabled={!editable} checked={Boolean(field)} onChange={(event) => setField(column.key, (event.target as HTMLInputElement).checked ? {} : null)} />
                <span>
                  Ask “{column.label}” <small class="muted">({column.type})</small>
                </span>
              </label>
              {field && (
                <div class="form-builder-question-details">
                  <label class="field">
                    <span>Question</span>
                    <input maxLength={200} disabled={!editable} placeholder={column.label} {...typed(`label:${column.key}`, field.label ?? '')} onChange={commit(`label:${column.key}`, (value) => setField(column.key, { label: text(value) || undefined }))} />
                  </label>
                  <label class="field">
                    <span>Help</span>
                    <input maxLength={1000} disabled={!editable} {...typed(`help:${column.key}`, field.help ?? '')} onChange={commit(`help:${column.key}`, (value) => setField(column.key, { help: value || undefined }))} />
                  </label>
                  <label class="form-builder-check">
                    <input type="checkbox" disabled={!editable} checked={field.required} onChange={(event) => setField(column.key, { required: (event.target as HTMLInputElement).checked })} />
                    <span>Required</span>
                  </label>
                </div>
              )}
            </div>
          );
        })}
        {askable.length === 0 && <p class="muted">This table has no column a form can ask.</p>}
      </fieldset>
    </div>
  );
}
