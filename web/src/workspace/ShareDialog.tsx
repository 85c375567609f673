import { useState } from 'preact/hooks';
import { api, messageOf, workspacePath } from '../lib/api';
import { Icon } from '../ui/icons';
import { Avatar, Button, Dialog, IconButton } from '../ui/primitives';
import { showError, showToast } from '../ui/toast';
import type { Role, Workspace } from '../workspace-context/types';
import { updateWorkspace } from './workspace-actions';
import type { WorkspaceContext } from '../workspace-context/context';

const ROLES: Array<{ value: Role; label: string; hint: string }> = [
  { value: 'owner', label: 'Owner', hint: 'Everything, including members' },
  { value: 'editor', label: 'Editor', hint: 'Edit rows, columns and docs' },
  { value: 'commenter', label: 'Commenter', hint: 'Read and comment' },
  { value: 'viewer', label: 'Viewer', hint: 'Read only' },
];

const VISIBILITY: Array<{ value: Workspace['visibility']; label: string; hint: string }> = [
  { value: 'private', label: 'Private', hint: 'Only the members below' },
  { value: 'org', label: 'Organisation', hint: 'Everyone in the organisation can edit' },
  { value: 'unlisted', label: 'Anyone with the link', hint: 'Read-only for people who have the address' },
  { value: 'public', label: 'Public', hint: 'Readable by anyone, listed in search' },
];

/** Members, invites by e-mail and visibility: who can reach this workspace and how. */
export function ShareDialog(props: { context: WorkspaceContext; onClose: () => void }) {
  const { workspace, members, abilities } = props.context;
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const base = (suffix: string) => workspacePath(workspace.org.slug, workspace.slug, suffix);

  const invite = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('POST', base('/share'), { email: email.trim(), role });
      showToast(`Invite sent to ${email.trim()}.`, 'success');
      setEmail('');
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  const act = (action: () => Promise<unknown>) => action().then(props.context.reload, showError);
  const humans = members.filter((member) => member.principalType === 'user');
  const agents = members.filter((member) => member.principalType === 'agent');

  return (
    <Dialog title={`Share “${workspace.name}”`} onClose={props.onClose} wide>
      {abilities.share && (
        <form class="invite-row" onSubmit={invite}>
          <input type="email" name="email" required placeholder="Invite by e-mail" aria-label="E-mail address to invite" value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
          <select aria-label="Role for the invite" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)}>
            {ROLES.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
          <Button variant="primary" type="submit" busy={busy}>
            Invite
          </Button>
        </form>
      )}
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      <h3 class="section-title">People</h3>
      <ul class="member-list">
        {humans.map((member) => (
          <li key={member.id}>
            <Avatar id={member.principal.id} name={member.principal.name} url={member.principal.avatarUrl} size={30} />
            <div class="member-main">
              <span class="member-name">{member.principal.name}</span>
              <span class="member-meta">
                {member.email}
                {member.inheritedAgents && member.inheritedAgents.length > 0 && ` · with ${member.inheritedAgents.map((agent) => agent.name).join(', ')}`}
              </span>
            </div>
            {workspace.role === 'owner' ? (
              <select aria-label={`Role of ${member.principal.name}`} value={member.role} onChange={(e) => act(() => api('PATCH', base(`/members/${member.id}`), { role: (e.target as HTMLSelectElement).value }))}>
                {ROLES.map((option) => (
                  <option key={option.value} value={option.value}>
                    {option.label}
                  </option>
                ))}
              </select>
            ) : (
              <span class="badge badge-muted">{member.role}</span>
            )}
            {workspace.role === 'owner' && <IconButton icon="trash" label={`Remove ${member.principal.name}`} onClick={() => act(() => api('DELETE', base(`/members/${member.id}`)))} />}
          </li>
        ))}
      </ul>
      {agents.length > 0 && (
        <>
          <h3 class="section-title">Agents</h3>
          <ul class="member-list">
            {agents.map((member) => (
              <li key={member.id}>
                <Avatar id={member.principal.id} name={member.principal.name} size={30} />
                <div class="member-main">
                  <span class="member-name">
                    {member.principal.name} <Icon name="agent" size={12} />
                  </span>
                  <span class="member-meta">{member.viaUserId ? 'acts for its owner' : 'agent'}</span>
                </div>
                <span class="badge badge-muted">{member.role}</span>
                {workspace.role === 'owner' && <IconButton icon="trash" label={`Remove ${member.principal.name}`} onClick={() => act(() => api('DELETE', base(`/members/${member.id}`)))} />}
              </li>
            ))}
          </ul>
        </>
      )}
      <h3 class="section-title">Who can open it</h3>
      <div class="visibility-options" role="radiogroup" aria-label="Visibility">
        {VISIBILITY.map((option) => (
          <label key={option.value} class={`choice ${workspace.visibility === option.value ? 'is-selected' : ''}`}>
            <input
              type="radio"
              name="visibility"
              value={option.value}
              checked={workspace.visibility === option.value}
              disabled={!abilities.manage}
              onChange={() => act(() => updateWorkspace(workspace, { visibility: option.value }))}
            />
            <strong>{option.label}</strong>
            <span>{option.hint}</span>
          </label>
        ))}
      </div>
    </Dialog>
  );
}
