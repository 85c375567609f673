import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, workspacePath } from '../lib/api';
import { timeAgo } from '../lib/format';
import { Icon } from '../ui/icons';
import { Avatar, EmptyState, IconButton, Spinner } from '../ui/primitives';
import type { Principal } from '../session';
import { HistoryPanel } from './HistoryPanel';
import type { Surface } from './types';
import type { WorkspaceContext } from './WorkspacePage';

/**
 * What the side panel shows. The comments panel will be one more kind:
 * `{ kind: 'comments', target: { type: 'row' | 'cell' | 'doc-range' | 'surface', ... } }`,
 * opened from a row's menu, a cell or a doc selection through `openPanel`.
 */
export type PanelRequest = { kind: 'activity' } | { kind: 'history'; surface: Surface };

interface PanelProps {
  request: PanelRequest;
  context: WorkspaceContext;
}

const PANELS: Record<PanelRequest['kind'], { title: string; view: ComponentType<PanelProps> }> = {
  activity: { title: 'Activity', view: ActivityPanel },
  history: { title: 'History', view: (props) => (props.request.kind === 'history' ? <HistoryPanel key={props.request.surface.id} context={props.context} surface={props.request.surface} /> : null) },
};

export function SidePanel(props: PanelProps & { onClose: () => void }) {
  const panel = PANELS[props.request.kind];
  const View = panel.view;
  return (
    <aside class="side-panel" aria-label={panel.title}>
      <header class="side-panel-header">
        <h2>{panel.title}</h2>
        <IconButton icon="x" label={`Close ${panel.title.toLowerCase()}`} onClick={props.onClose} />
      </header>
      <div class="side-panel-body">
        <View request={props.request} context={props.context} />
      </div>
    </aside>
  );
}

interface WorkspaceEvent {
  eventId: string;
  event: string;
  ts: string;
  principal: Principal;
  surface?: { id: string; slug: string };
  data: Record<string, any>;
}

/** The workspace's audit log, newest first, with new events arriving live over SSE. */
function ActivityPanel(props: PanelProps) {
  const { workspace } = props.context;
  const [events, setEvents] = useState<WorkspaceEvent[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let closed = false;
    api<{ events: WorkspaceEvent[] }>('GET', workspacePath(workspace.org.slug, workspace.slug, '/events?limit=50')).then(
      (page) => !closed && setEvents(page.events),
      (failure) => !closed && setError(failure.message),
    );
    const source = new EventSource(workspacePath(workspace.org.slug, workspace.slug, '/subscribe'));
    const onEvent = (message: MessageEvent) => {
      try {
        const record = JSON.parse(message.data) as WorkspaceEvent;
        setEvents((list) => (list && !list.some((e) => e.eventId === record.eventId) ? [record, ...list].slice(0, 200) : list));
      } catch {
        // Not an event record (a ping): nothing to show.
      }
    };
    source.onmessage = onEvent;
    for (const name of ['row.created', 'row.updated', 'row.deleted', 'row.moved_surface', 'doc.updated', 'doc.mention_added', 'columns.updated', 'surface.created', 'member.added', 'comment.added']) {
      source.addEventListener(name, onEvent as EventListener);
    }
    return () => {
      closed = true;
      source.close();
    };
  }, [workspace.id]);

  if (error) return <p class="form-error">{error}</p>;
  if (!events) return <Spinner />;
  if (events.length === 0) return <EmptyState icon="activity" title="No activity yet">Changes by people and agents show up here as they happen.</EmptyState>;
  return (
    <ol class="activity">
      {events.map((event) => (
        <li key={event.eventId}>
          <Avatar id={event.principal.id} name={event.principal.name} size={22} />
          <div>
            <p>
              <strong>{event.principal.name}</strong>
              {event.principal.principalType === 'agent' && <span class="badge badge-agent"><Icon name="agent" size={11} /> agent</span>} {describe(event)}
            </p>
            <time dateTime={event.ts} title={new Date(event.ts).toLocaleString()}>
              {timeAgo(event.ts)}
            </time>
          </div>
        </li>
      ))}
    </ol>
  );
}

function describe(event: WorkspaceEvent): string {
  const title = typeof event.data?.data?.title === 'string' && event.data.data.title ? ` “${event.data.data.title}”` : '';
  switch (event.event) {
    case 'row.created':
      return `added a row${title}`;
    case 'row.updated':
      return `edited a row${title}`;
    case 'row.deleted':
      return 'deleted a row';
    case 'row.moved_surface':
      return `moved a row${title} to another table`;
    case 'doc.updated':
      return typeof event.data?.text === 'string' && event.data.text ? `edited the doc: ${event.data.text}` : 'edited the doc';
    case 'doc.mention_added':
      return `mentioned ${(event.data?.mentions ?? []).map((m: { label: string }) => `@${m.label}`).join(', ')}`;
    default:
      return event.event.replace(/[._]/g, ' ');
  }
}
