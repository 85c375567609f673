import { useMemo, useState } from 'preact/hooks';
import { FormDialog } from '../ui/FormDialog';
import type { Workspace } from '../workspace-context/types';
import { updateWorkspace } from './workspace-actions';

/** The zones this browser knows (the server checks the name against its own list and answers 422 for one it does not). */
function knownZones(): string[] {
  const intl = Intl as typeof Intl & { supportedValuesOf?: (key: 'timeZone') => string[] };
  return ['UTC', ...(intl.supportedValuesOf?.('timeZone') ?? []).filter((zone) => zone !== 'UTC')];
}

/**
 * The workspace's time zone (docs/FORMULAS.md "Time zone"): the day TODAY()
 * and NOW() read, and the zone date parts of formulas are taken in. Offered
 * with the browser's own zone, since that is what a team usually means.
 */
export function TimeZoneDialog(props: { workspace: Workspace; onClose: () => void; onSaved: () => Promise<void> | void }) {
  const zones = useMemo(knownZones, []);
  const [value, setValue] = useState(props.workspace.timeZone ?? 'UTC');
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const submit = async () => {
    await updateWorkspace(props.workspace, { timeZone: value.trim() });
    await props.onSaved();
    props.onClose();
  };
  return (
    <FormDialog title="Time zone" id="time-zone-form" submitLabel="Save" disabled={!value.trim()} onClose={props.onClose} onSubmit={submit}>
      <label class="field">
        <span>Time zone</span>
        <input name="timeZone" list="time-zones" value={value} maxLength={100} autocomplete="off" onInput={(event) => setValue((event.target as HTMLInputElement).value)} onFocus={(event) => (event.target as HTMLInputElement).select()} />
        <datalist id="time-zones">
          {zones.map((zone) => (
            <option key={zone} value={zone} />
          ))}
        </datalist>
      </label>
      <p class="muted">
        Formulas read TODAY() and NOW() in this zone, for everyone in the workspace.
        {browserZone && browserZone !== value && (
          <>
            {' '}
            <button type="button" class="link-button" onClick={() => setValue(browserZone)}>
              Use {browserZone}
            </button>
          </>
        )}
      </p>
    </FormDialog>
  );
}
