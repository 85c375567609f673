import { useEffect } from 'preact/hooks';
import { timeAgo } from '../lib/format';
import { navigate } from '../lib/router';
import { useStore } from '../lib/store';
import { Icon } from '../ui/icons';
import { Avatar, Button, Dialog, EmptyState, Spinner } from '../ui/primitives';
import type { Comment } from '../comments/comments-api';
import type { Workspace } from '../workspace-context/types';
import { useWorkspaceEvents } from '../workspace-context/workspace-events';
import { addMention, catchUpMentions, inbox, isUnread, markAllRead, markRead, mentionHref, noteSuggestionEvent, refreshInbox, reviewHref, type Mention, type Review } from './inbox-store';

/** A tab that comes back reads the inbox again when its last read is older than this. */
const STALE_MS = 2 * 60_000;

/** Reads the inbox when the app opens, and when the tab comes back into view after a while (see `refreshInbox` for why not on a timer). */
export function useInboxRefresh(me: string | null) {
  useEffect(() => {
    if (!me) return;
    void refreshInbox(me);
    const refresh = () => {
      if (document.visibilityState === 'visible') void refreshInbox(me, STALE_MS);
    };
    document.addEventListener('visibilitychange', refresh);
    window.addEventListener('focus', refresh);
    return () => {
      document.removeEventListener('visibilitychange', refresh);
      window.removeEventListener('focus', refresh);
    };
  }, [me]);
}

/** Mentions of the person in the open workspace's `comment.added` events, and its suggestions to review, reach the inbox at once (renders nothing). */
export function LiveMentions(props: { workspace: Workspace; me: string }) {
  useWorkspaceEvents(
    props.workspace,
    (name) => name === 'comment.added' || name.startsWith('suggestion.'),
    (event) => {
      if (event.event === 'comment.added') addMention(props.me, { comment: event.data as Comment, workspace: props.workspace });
      else noteSuggestionEvent(props.me, props.workspace, event as { event: string; data: Record<string, unknown> });
    },
    () => void catchUpMentions(props.me, props.workspace),
  );
  return null;
}

/** "Suggestions to review": open suggestions by others where the person decides, oldest first. */
function Reviews(props: { reviews: Review[]; onOpen: (review: Review) => void }) {
  if (props.reviews.length === 0) return null;
  return (
    <section class="inbox-reviews" data-testid="inbox-reviews">
      <h3 class="inbox-heading">Suggestions to review</h3>
      <ul class="inbox-list">
        {props.reviews.map((review) => {
          const { suggestion, workspace } = review;
          return (
            <li key={suggestion.id} class="inbox-item is-unread" data-suggestion={suggestion.id}>
              <button class="inbox-open" onClick={() => props.onOpen(review)}>
                <Avatar id={suggestion.author.id} name={suggestion.author.name} url={suggestion.author.avatarUrl} size={28} />
                <span class="inbox-text">
                  <span class="inbox-line">
                    <strong>{suggestion.author.name}</strong>
                    {suggestion.author.principalType === 'agent' && <span class="badge badge-agent">agent</span>} suggested a change
                    {suggestion.target === 'row' ? ' to a row' : ''} in <strong>{workspace.name}</strong>
                  </span>
                  <span class="inbox-body">{suggestion.summary}</span>
                </span>
                <time dateTime={suggestion.createdAt} title={new Date(suggestion.createdAt).toLocaleString()}>
                  {timeAgo(suggestion.createdAt)}
                </time>
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** The sidebar entry: "Inbox" with the number of unread mentions. */
export function InboxButton(props: { onOpen: () => void }) {
  const state = useStore(inbox);
  const unread = state.mentions.filter((mention) => isUnread(mention, state.read)).length + state.reviews.length;
  return (
    <button class="nav-item nav-action" onClick={props.onOpen} aria-label={unread ? `Inbox, ${unread} unread` : 'Inbox'}>
      <Icon name="inbox" />
      <span class="nav-label">Inbox</span>
      {unread > 0 && (
        <span class="nav-count" data-testid="inbox-count">
          {unread > 99 ? '99+' : unread}
        </span>
      )}
    </button>
  );
}

/** The list: who mentioned the person where, newest first; opening one marks it read and shows the comment in place. */
export function InboxDialog(props: { me: string; onClose: () => void }) {
  const state = useStore(inbox);
  useEffect(() => {
    void refreshInbox(props.me);
  }, []);
  const open = (mention: Mention) => {
    markRead(mention);
    props.onClose();
    navigate(mentionHref(mention));
  };
  const unread = state.mentions.filter((mention) => isUnread(mention, state.read)).length;
  return (
    <Dialog
      title="Inbox"
      wide
      onClose={props.onClose}
      footer={
        <>
          <span class="muted dialog-footer-note">Mentions of you in comments, and suggestions waiting for your decision.</span>
          <Button onClick={markAllRead} disabled={unread === 0} icon="check">
            Mark all read
          </Button>
        </>
      }
    >
      {state.error && <p class="form-error">{state.error}</p>}
      {state.loaded && (
        <Reviews
          reviews={state.reviews}
          onOpen={(review) => {
            props.onClose();
            navigate(reviewHref(review));
          }}
        />
      )}
      {!state.loaded ? (
        <Spinner />
      ) : state.mentions.length === 0 && state.reviews.length === 0 ? (
        <EmptyState icon="inbox" title="Nothing here yet">
          When someone writes @ and your name in a comment, it shows up here.
        </EmptyState>
      ) : (
        <ul class="inbox-list">
          {state.mentions.map((mention) => {
            const { comment, workspace } = mention;
            const fresh = isUnread(mention, state.read);
            return (
              <li key={comment.id} class={`inbox-item ${fresh ? 'is-unread' : ''}`} data-comment={comment.id}>
                <button class="inbox-open" onClick={() => open(mention)}>
                  <Avatar id={comment.author.id} name={comment.author.name} url={comment.author.avatarUrl} size={28} />
                  <span class="inbox-text">
                    <span class="inbox-line">
                      <strong>{comment.author.name}</strong>
                      {comment.author.principalType === 'agent' && <span class="badge badge-agent">agent</span>} mentioned you in <strong>{workspace.name}</strong>
                      {comment.surfaceSlug ? <span class="muted"> · {comment.surfaceName ?? comment.surfaceSlug}</span> : null}
                    </span>
                    <span class="inbox-body">{comment.body}</span>
                  </span>
                  <time dateTime={comment.createdAt} title={new Date(comment.createdAt).toLocaleString()}>
                    {timeAgo(comment.createdAt)}
                  </time>
                  {fresh && <span class="unread-dot" aria-label="unread" />}
                </button>
                {fresh && (
                  <button class="link-button inbox-mark" onClick={() => markRead(mention)}>
                    Mark read
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </Dialog>
  );
}
