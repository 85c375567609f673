/**
 * The person's inbox: comments that mention them, from every workspace they
 * can open, newest first, with what they have read; and the open suggestions
 * they may decide (workspaces where they edit), oldest first.
 *
 * The server's inbox (`GET /api/me/messages`) is for agents and apps
 * (sessions get 403), so the app reads each workspace's
 * `comments?mentioning=me` (docs/COMMENTS.md "Listing"). Read marks are the
 * server's (`/api/me/read-marks`), so they follow the person to every device.
 */
import { api, ApiError, workspacePath } from '../lib/api';
import { showError } from '../ui/toast';
import { createStore } from '../lib/store';
import type { Comment } from '../comments/comments-api';
import type { CommentList, ReadMarks as ServerReadMarks } from '../../../src/model/schemas/comments';
import type { Suggestion } from '../../../src/model/schemas/suggestions';
import { refreshWorkspaces, workspaceList } from '../workspace-context/workspaces-store';
import type { Workspace } from '../workspace-context/types';

export interface Mention {
  comment: Comment;
  workspace: Workspace;
}

/** An open suggestion by someone else in a workspace where the person may decide it. */
export interface Review {
  suggestion: Suggestion;
  workspace: Workspace;
}

interface ReadMarks {
  /** Everything created up to this time is read ("Mark all read"). */
  readThrough: string;
  /** Comments read one by one after that. */
  ids: string[];
}

export const inbox = createStore<{ loaded: boolean; mentions: Mention[]; reviews: Review[]; read: ReadMarks; error: string | null }>({
  loaded: false,
  mentions: [],
  reviews: [],
  read: { readThrough: '', ids: [] },
  error: null,
});

const PER_WORKSPACE = 20;
const SHOWN = 50;
const PARALLEL = 4;

let userId: string | null = null;

function marksOf(answer: ServerReadMarks): ReadMarks {
  return { readThrough: answer.readThrough ?? '', ids: answer.commentIds };
}

/** Shows a change of marks at once and asks the server to keep it; its answer (every device's marks) then stands. */
async function saveMarks(optimistic: ReadMarks, change: { commentIds?: string[]; through?: string }) {
  inbox.update((state) => ({ ...state, read: optimistic }));
  const forUser = userId;
  try {
    const answer = await api<ServerReadMarks>('POST', '/api/me/read-marks', change);
    if (userId === forUser) inbox.update((state) => ({ ...state, read: laterMarks(marksOf(answer), state.read) }));
  } catch (error) {
    // Not kept (offline, or refused): the next read of the inbox shows the marks as the server has them.
    showError(error);
  }
}

export function isUnread(mention: Mention, read: ReadMarks = inbox.get().read): boolean {
  return mention.comment.createdAt > read.readThrough && !read.ids.includes(mention.comment.id);
}

export function unreadCount(): number {
  const { mentions, read } = inbox.get();
  return mentions.filter((mention) => isUnread(mention, read)).length;
}

export function markRead(mention: Mention) {
  const { read } = inbox.get();
  if (!isUnread(mention, read)) return;
  void saveMarks({ readThrough: read.readThrough, ids: [mention.comment.id, ...read.ids] }, { commentIds: [mention.comment.id] });
}

export function markAllRead() {
  const { mentions, read } = inbox.get();
  const newest = mentions[0]?.comment.createdAt;
  if (!newest || newest <= read.readThrough) return;
  void saveMarks({ readThrough: newest, ids: [] }, { through: newest });
}

let running: Promise<void> | null = null;
let lastRead = 0;
/** Mentions that arrived live while a refresh was reading: its answer may have been read before them. */
let arrivedDuringRefresh: Mention[] | null = null;

/** Marks only move forward (server and page alike), so two readings of them combine into the later of each. */
function laterMarks(a: ReadMarks, b: ReadMarks): ReadMarks {
  return { readThrough: a.readThrough > b.readThrough ? a.readThrough : b.readThrough, ids: [...new Set([...a.ids, ...b.ids])] };
}

function switchAccount(me: string) {
  if (userId === me) return;
  userId = me;
  lastRead = 0;
  inbox.set({ loaded: false, mentions: [], reviews: [], read: { readThrough: '', ids: [] }, error: null });
}

/**
 * Reads the mentions of `me` from every workspace the person can open (four
 * requests at a time), unless the last read is younger than `maxAgeMs`. Each
 * read costs one metered API call per workspace, so the app reads when it
 * opens, when the list is opened, and when the tab comes back after a while,
 * never on a timer; mentions in an open workspace arrive live (`addMention`).
 */
export function refreshInbox(me: string, maxAgeMs = 0): Promise<void> {
  switchAccount(me);
  if (running) return running;
  if (maxAgeMs > 0 && Date.now() - lastRead < maxAgeMs) return Promise.resolve();
  lastRead = Date.now();
  arrivedDuringRefresh = [];
  running = (async () => {
    try {
      // Unanswered, the marks stay as they were (and so do those shown).
      const marks = api<ServerReadMarks>('GET', '/api/me/read-marks').then(marksOf, () => null);
      if (!workspaceList.get().loaded) await refreshWorkspaces();
      const queue = [...workspaceList.get().items];
      const found: Mention[] = [];
      const reviews: Review[] = [];
      const failures: string[] = [];
      const unanswered = new Set<string>();
      const worker = async () => {
        for (let workspace = queue.shift(); workspace; workspace = queue.shift()) {
          try {
            for (const comment of await mentionsIn(workspace)) if (comment.author.id !== me) found.push({ comment, workspace });
            if (workspace.role === 'owner' || workspace.role === 'editor') {
              const open = await api<{ suggestions: Suggestion[] }>('GET', workspacePath(workspace.org.slug, workspace.slug, '/suggestions'));
              for (const suggestion of open.suggestions) if (suggestion.author.id !== me) reviews.push({ suggestion, workspace });
            }
          } catch (error) {
            // A workspace archived or left since the list was read is not worth a message.
            if (!(error instanceof ApiError && error.status === 404)) {
              failures.push(workspace.name);
              unanswered.add(workspace.id);
            }
          }
        }
      };
      await Promise.all(Array.from({ length: PARALLEL }, worker));
      const read = await marks;
      const problems = [...(failures.length ? [`Mentions could not be read from ${failures.join(', ')}.`] : []), ...(read ? [] : ['What you have read could not be read.'])];
      reviews.sort((a, b) => a.suggestion.createdAt.localeCompare(b.suggestion.createdAt));
      inbox.update((state) => {
        // What this read could not see stays: a mention that arrived live meanwhile, those of a workspace that did not answer, marks saved meanwhile.
        const kept = [...(arrivedDuringRefresh ?? []), ...state.mentions.filter((mention) => unanswered.has(mention.workspace.id))];
        const byId = new Map([...kept, ...found].map((mention) => [mention.comment.id, mention]));
        const mentions = [...byId.values()];
        mentions.sort((a, b) => b.comment.createdAt.localeCompare(a.comment.createdAt));
        return { ...state, loaded: true, mentions: mentions.slice(0, SHOWN), read: read ? laterMarks(read, state.read) : state.read, reviews: reviews.slice(0, SHOWN), error: problems.length ? problems.join(' ') : null };
      });
    } finally {
      running = null;
      arrivedDuringRefresh = null;
    }
  })();
  return running;
}

/** The newest comments of `workspace` that mention the person. */
async function mentionsIn(workspace: Workspace): Promise<Comment[]> {
  const query = new URLSearchParams({ mentioning: 'me', status: 'all', order: 'newest', limit: String(PER_WORKSPACE) });
  return (await api<CommentList>('GET', workspacePath(workspace.org.slug, workspace.slug, `/comments?${query}`))).comments;
}

/**
 * The open workspace's mentions read again because its live stream has just
 * (re)opened: a mention made after the inbox was read and before the stream
 * was open (or while it was down) reached no stream. One request, this
 * workspace only; unanswered, the next refresh brings it.
 */
export async function catchUpMentions(me: string, workspace: Workspace) {
  let comments: Comment[];
  try {
    comments = await mentionsIn(workspace);
  } catch {
    return;
  }
  for (const comment of comments) addMention(me, { comment, workspace });
}

/** A mention seen live (a `comment.added` event of an open workspace that mentions `me`), added without asking the server again. */
export function addMention(me: string, mention: Mention) {
  switchAccount(me);
  if (mention.comment.author.id === me || !mention.comment.mentions?.some((m) => m.id === me)) return;
  arrivedDuringRefresh?.push(mention);
  inbox.update((state) =>
    state.mentions.some((known) => known.comment.id === mention.comment.id)
      ? state
      : { ...state, mentions: [mention, ...state.mentions].sort((a, b) => b.comment.createdAt.localeCompare(a.comment.createdAt)).slice(0, SHOWN) },
  );
}

/** Where a mention is shown: its surface, with the row selected for row and cell comments, and the comments panel on its thread. */
export function mentionHref(mention: Mention): string {
  const { comment, workspace } = mention;
  const base = `/${workspace.org.slug}/${workspace.slug}`;
  if (!comment.surfaceSlug) return base;
  const query = new URLSearchParams();
  if (comment.target.type === 'row' || comment.target.type === 'cell') query.set('row', comment.target.rowId);
  query.set('comment', comment.parentId ?? comment.id);
  return `${base}/${comment.surfaceSlug}?${query}`;
}

/** A suggestion seen live (`suggestion.created` of an open workspace), or decided (`suggestion.accepted` / `.rejected`): the review list follows. */
export function noteSuggestionEvent(me: string, workspace: Workspace, event: { event: string; data: Record<string, unknown> }) {
  switchAccount(me);
  const id = String(event.data.suggestionId ?? '');
  if (event.event !== 'suggestion.created') {
    inbox.update((state) => ({ ...state, reviews: state.reviews.filter((review) => review.suggestion.id !== id) }));
    return;
  }
  if (!(workspace.role === 'owner' || workspace.role === 'editor')) return;
  void api<{ suggestions: Suggestion[] }>('GET', workspacePath(workspace.org.slug, workspace.slug, `/suggestions?surfaceId=${encodeURIComponent(String(event.data.surfaceId ?? ''))}`))
    .then((open) => {
      const found = open.suggestions.find((suggestion) => suggestion.id === id);
      if (!found || found.author.id === me) return;
      inbox.update((state) => (state.reviews.some((review) => review.suggestion.id === id) ? state : { ...state, reviews: [...state.reviews, { suggestion: found, workspace }] }));
    })
    .catch(() => {
      // The next read of the inbox picks it up.
    });
}

/** Where a suggestion is shown: its surface when the list knows its slug (a row suggestion with its row selected), else the workspace. */
export function reviewHref(review: Review): string {
  const base = `/${review.workspace.org.slug}/${review.workspace.slug}`;
  const surfaceSlug = review.workspace.primarySurface?.id === review.suggestion.surfaceId ? review.workspace.primarySurface.slug : undefined;
  if (!surfaceSlug) return base;
  return review.suggestion.rowId ? `${base}/${surfaceSlug}?row=${encodeURIComponent(review.suggestion.rowId)}` : `${base}/${surfaceSlug}`;
}
