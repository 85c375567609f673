import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, workspacePath } from '../lib/api';
import { timeAgo } from '../lib/format';
import { Icon } from '../ui/icons';
import { Avatar, EmptyState, IconButton, Spinner } from '../ui/primitives';
import type { Principal } from '../session';
import { HistoryPanel } from './HistoryPanel';
import { RunsList } from './RunsList';
import { CommentsPanel } from '../comments/CommentsPanel';
import type { PanelRequest, WorkspaceContext } from '../workspace-context/context';
import { useWorkspaceEvents, type WorkspaceEvent } from '../workspace-context/workspace-events';
import type { EventPage } from '../../../src/model/schemas/events';

interface PanelProps {
  request: PanelRequest;
  context: WorkspaceContext;
}

const PANELS: Record<PanelRequest['kind'], { title: string; view: ComponentType<PanelProps> }> = {
  activity: { title: 'Activity', view: ActivityPanel },
  history: { title: 'History', view: (props) => (props.request.kind === 'history' ? <HistoryPanel key={props.request.surface.id} context={props.context} surface={props.request.surface} /> : null) },
  comments: { title: 'Comments', view: CommentsView },
};

function CommentsView(props: PanelProps) {
  const focus = props.request.kind === 'comments' ? (props.request.focus ?? null) : null;
  const highlight = props.request.kind === 'comments' ? props.request.highlight : undefined;
  return <CommentsPanel key={props.context.surface?.id} context={props.context} focus={focus} highlight={highlight} onFocusChange={(next) => props.context.openPanel({ kind: 'comments', focus: next })} />;
}

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

/** The workspace's audit log, newest first, with new events arriving live over SSE. */
function ActivityPanel(props: PanelProps) {
  const { workspace } = props.context;
  const [events, setEvents] = useState<WorkspaceEvent[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let closed = false;
    api<EventPage>('GET', workspacePath(workspace.org.slug, workspace.slug, '/events?limit=50')).then(
      (page) => !closed && setEvents(page.events),
      (failure) => !closed && setError(failure.message),
    );
    return () => {
      closed = true;
    };
  }, [workspace.id]);
  useWorkspaceEvents(workspace, () => true, (record) =>
    setEvents((list) => (list && !list.some((e) => e.eventId === record.eventId) ? [record, ...list].slice(0, 200) : list)),
  );

  if (error) return <p class="form-error">{error}</p>;
  if (!events) return <Spinner />;
  if (events.length === 0) return <EmptyState icon="activity" title="No activity yet">Changes by people and agents show up here as they happen.</EmptyState>;
  return (
    <>
    <RunsList context={props.context} />
    <ol class="activity">
      {events.map((event) => (
        <li key={event.eventId}>
          {/* A change the service made itself (a restore's follow-up, a migration) carries no principal. */}
          {event.principal && <Avatar id={event.principal.id} name={event.principal.name} size={22} />}
          <div>
            <p>
              <strong>{event.principal?.name ?? 'Trellis'}</strong>
              {event.principal?.principalType === 'agent' && <span class="badge badge-agent"><Icon name="agent" size={11} /> agent</span>} {describe(event)}
            </p>
            <time dateTime={event.ts} title={new Date(event.ts).toLocaleString()}>
              {timeAgo(event.ts)}
            </time>
          </div>
        </li>
      ))}
    </ol>
    </>
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
    case 'file.uploaded':
      return `uploaded ${quoted(event.data?.name)}`;
    case 'file.renamed':
      return `renamed ${quoted(event.data?.previousName)} to ${quoted(event.data?.name)}`;
    case 'file.archived':
      return `deleted ${quoted(event.data?.name)}`;
    case 'file.shared':
      return `shared a link to ${quoted(event.data?.name)}`;
    case 'folder.created':
      return `created the folder ${quoted(event.data?.name)}`;
    case 'comment.added':
      return `${event.data?.parentId ? 'replied' : 'commented'}: ${quoted(event.data?.body)}`;
    case 'comment.resolved':
      return 'resolved a thread';
    default:
      return event.event.replace(/[._]/g, ' ');
  }
}

function quoted(text: unknown): string {
  if (typeof text !== 'string' || !text) return 'a file';
  return `“${text.length > 80 ? `${text.slice(0, 80)}…` : text}”`;
}
